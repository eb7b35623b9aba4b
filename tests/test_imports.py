"""A process imports what it uses (issue 33): `import proctor.core`, opening an up-to-date
journal and reading it never load the PostgreSQL driver, SQLAlchemy's ORM, Alembic,
jsonschema, cryptography, the diff parser, the lens's SQL and shell parsers, D-Bus, Qt or SQLAlchemy's PostgreSQL dialect (the
partial indexes get their ``postgresql_where`` when a server journal's engine is made); an
older journal still loads Alembic and is migrated. Each check runs in a fresh interpreter, so
nothing this test process imported counts."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from proctor.core import Actor, Journal
from proctor.core.storage.db import SCHEMA_HEAD

# Every module the core must not load unless a call needs it.
HEAVY = (
    "psycopg",
    "sqlalchemy.orm",
    "sqlalchemy.dialects.postgresql",
    "alembic",
    "jsonschema",
    "cryptography",
    "unidiff",
    "sqlglot",
    "tree_sitter",
    "tree_sitter_bash",
    "jeepney",
    "PySide6",
)


def loaded_after(code: str) -> set[str]:
    """The modules a fresh interpreter holds after running ``code``."""
    script = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    return set(json.loads(out.stdout.splitlines()[-1]))


def heavy_in(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY))


def test_importing_the_core_loads_no_heavy_module() -> None:
    modules = loaded_after("import proctor.core")
    assert "proctor.core" in modules
    assert heavy_in(modules) == []


def test_opening_and_reading_an_up_to_date_journal_loads_no_heavy_module(tmp_path: Path) -> None:
    path = tmp_path / "journal.db"
    Journal.open(path, actor=Actor.operator("setup")).close()
    modules = loaded_after(
        "from proctor.core import Actor, InboxFilter, Journal\n"
        f"j = Journal.open({str(path)!r}, actor=Actor.operator('alice'))\n"
        f"assert j.schema_revision == {SCHEMA_HEAD!r}\n"
        "j.inbox.list(InboxFilter())\n"
        "j.runs.list()\n"
        "j.close()"
    )
    assert "sqlalchemy" in modules  # it did open the journal
    assert heavy_in(modules) == []


def test_building_the_desk_loads_no_module_a_page_loads_when_used() -> None:
    """The desk's window imports its pages, not what a page needs only once it is used:
    jsonschema (a form checked), unidiff (a diff reviewed), the lens's parsers (an action
    read), cryptography (a decision signed), D-Bus (a notification sent), PostgreSQL."""
    modules = loaded_after(
        "import os\nos.environ['QT_QPA_PLATFORM'] = 'offscreen'\n"
        "import proctor.gui.shell.mainwindow"
    )
    assert heavy_in(modules - {m for m in modules if m.startswith("PySide6")}) == []


def test_an_older_journal_still_loads_alembic_and_is_migrated(tmp_path: Path, downgrade) -> None:
    path = tmp_path / "journal.db"
    Journal.open(path, actor=Actor.operator("setup")).close()
    downgrade(path, "0007j")
    modules = loaded_after(
        "from proctor.core import Actor, Journal\n"
        f"j = Journal.open({str(path)!r}, actor=Actor.operator('alice'), on_old_schema='migrate')\n"
        f"assert j.schema_revision == {SCHEMA_HEAD!r}, j.schema_revision\n"
        "j.close()"
    )
    assert "alembic" in modules


@pytest.mark.parametrize("module", HEAVY)
def test_the_check_sees_each_heavy_module_when_it_is_loaded(module: str) -> None:
    """The check above is not blind: a process that does load the module is caught."""
    try:
        __import__(module)
    except ImportError:
        pytest.skip(f"{module} is not installed here")
    assert heavy_in(loaded_after(f"import proctor.core, {module}")) != []
