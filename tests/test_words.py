"""One word per concept (in the style of qutebrowser's misc checks): the retired words never
come back in a name, a desk label or a CLI word.

A person answers a *question* (it was an "interaction" in the core) and resolves a memory
*conflict* (a "reconciliation"). Stored names stay (the ``interactions`` and
``memory_reconciliations`` tables, the ``interaction_id`` and ``reconciliation_id``
columns, the change-feed and signed values): they are evidence. ``core/aliases.py`` keeps
the retired public names working for embedders; it is the one file allowed to spell them.
"""

from __future__ import annotations

import io
import pathlib
import re
import tokenize

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
RETIRED = re.compile(r"interaction|reconcil", re.IGNORECASE)
# names that keep a retired word on purpose: stored columns, and Qt's own API
STORED = {"interaction_id", "reconciliation_id"}
QT = {"TextInteractionFlag", "setTextInteractionFlags", "textInteractionFlags", "NoTextInteraction"}
ALIASES = ROOT / "core" / "aliases.py"
MIGRATIONS = ROOT / "core" / "storage" / "migrations"
# calls whose string arguments a person reads: desk labels and CLI help
SHOWN = re.compile(r"\b(tr|QT_TR_NOOP|add_argument|add_parser|add|ActionSpec)\($")


def product_files() -> list[pathlib.Path]:
    found = []
    for folder in ("core", "gui", "cli", "sim"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path != ALIASES and not path.is_relative_to(MIGRATIONS):
                found.append(path)
    return found


def retired_names(text: str) -> list[tuple[int, str]]:
    """(line, name) of every identifier spelling a retired word, f-string fields included."""
    found = []
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        names = []
        if tok.type == tokenize.NAME:
            names = [tok.string]
        elif tok.type == tokenize.STRING and re.match(r"^[rRbB]?[fF]", tok.string):
            for field in re.findall(r"\{([^{}]*)\}", tok.string):
                names += re.findall(r"[A-Za-z_]\w*", field)
        found += [(tok.start[0], n) for n in names if RETIRED.search(n) and n not in STORED | QT]
    return found


def shown_strings(text: str) -> list[tuple[int, str]]:
    """(line, text) of string arguments of label and help calls that spell a retired word."""
    found, previous = [], ""
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.STRING and SHOWN.search(previous) and RETIRED.search(tok.string):
            found.append((tok.start[0], tok.string))
        if tok.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT):
            previous = (previous + tok.string)[-40:]
    return found


@pytest.mark.parametrize("path", product_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_retired_word_in_a_name(path: pathlib.Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert retired_names(text) == []
    assert shown_strings(text) == []


def test_the_check_sees_a_retired_word() -> None:
    """The check itself: a name, an f-string field and a label each trip it."""
    assert retired_names("def interaction_of(x): pass\n") == [(1, "interaction_of")]
    assert retired_names('f"{j.interactions}"\n') == [(1, "interactions")]
    assert retired_names("row.interaction_id\n") == []
    assert shown_strings('tr("Answer the interaction")\n') == [(1, '"Answer the interaction"')]


def test_each_retired_name_still_works_and_warns() -> None:
    import proctor.core as core
    from proctor.core import aliases, models

    for old, new in aliases.NAMES.items():
        holder = models if hasattr(models, new) else None
        if holder is None:
            continue
        with pytest.warns(DeprecationWarning, match=f"{old} is retired: use .*{new}"):
            assert getattr(holder, old) is getattr(holder, new)
    with pytest.warns(DeprecationWarning, match="InteractionKind is retired"):
        assert core.InteractionKind is core.QuestionKind
    with pytest.warns(DeprecationWarning, match=r"InboxKind\.MEMORY is retired"):
        assert models.InboxKind.MEMORY is models.InboxKind.CONFLICT
    with pytest.warns(DeprecationWarning, match=r"InboxKind\('memory'\) is retired"):
        assert models.InboxKind("memory") is models.InboxKind.CONFLICT
    with pytest.warns(DeprecationWarning, match=r"ChangeKind\.RECONCILIATION is retired"):
        assert models.ChangeKind.RECONCILIATION is models.ChangeKind.CONFLICT
    with pytest.raises(AttributeError):
        models.NoSuchName  # noqa: B018 - the lookup is the test


def test_the_journal_keeps_its_retired_attributes(tmp_path: pathlib.Path) -> None:
    from proctor.core import Actor, Journal

    with Journal.open(tmp_path / "j.db", actor=Actor.operator("alice")) as journal:
        with pytest.warns(DeprecationWarning, match="Journal.interactions is retired"):
            assert journal.interactions is journal.questions
        with pytest.warns(DeprecationWarning, match="Memory.reconciliations is retired"):
            assert journal.memory.reconciliations == journal.memory.conflicts
        with pytest.raises(AttributeError):
            journal.no_such_service  # noqa: B018 - the lookup is the test


def test_the_flat_module_paths_still_import() -> None:
    import importlib
    import warnings

    from proctor.core import aliases

    for old, new in aliases.MODULES.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            module = importlib.import_module(f"proctor.core.{old}")
        assert module is importlib.import_module(f"proctor.core.{new}")
    with pytest.warns(DeprecationWarning, match="approvals.Approvals is retired"):
        from proctor.core.approvals import Approvals
    from proctor.core.approvals.service import Approvals as now  # noqa: N813 - the test names the current class

    assert Approvals is now
