"""Architecture contracts: proctor.core never imports Qt (import-linter), gui never writes SQL."""

import os
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]


def package_tree(tmp_path: pathlib.Path) -> pathlib.Path:
    """The installed layout (proctor/, proctor/core, ...) as symlinks, so import-linter's
    static scan can walk it (the editable install maps folders with an import hook)."""
    pkg = tmp_path / "proctor"
    pkg.mkdir()
    for item in (ROOT / "cli").iterdir():
        (pkg / item.name).symlink_to(item)
    for name in ("core", "gui", "sim"):
        (pkg / name).symlink_to(ROOT / name)
    return tmp_path


def test_import_linter_contracts_hold(tmp_path):
    lint = pathlib.Path(sys.executable).with_name("lint-imports")
    env = {**os.environ, "PYTHONPATH": str(package_tree(tmp_path))}
    result = subprocess.run([str(lint), "--no-cache"], cwd=ROOT, capture_output=True, text=True,
                            env=env)
    assert result.returncode == 0, result.stdout + result.stderr


def test_gui_has_no_sql():
    pattern = re.compile(r"^\s*(from|import)\s+sqlalchemy|\.execute\(|\bSELECT\b|\bUPDATE\b.*\bSET\b",
                         re.MULTILINE)
    offenders = [str(p.relative_to(ROOT)) for p in (ROOT / "gui").rglob("*.py")
                 if pattern.search(p.read_text(encoding="utf-8"))]
    assert offenders == []


def test_core_has_no_qt():
    pattern = re.compile(r"^\s*(from|import)\s+(PySide6|shiboken6)", re.MULTILINE)
    offenders = [str(p.relative_to(ROOT)) for p in (ROOT / "core").rglob("*.py")
                 if pattern.search(p.read_text(encoding="utf-8"))]
    assert offenders == []


def test_schema_revisions_match_alembic():
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    from proctor.core.storage import db

    cfg = Config()
    cfg.set_main_option("script_location", "proctor.core.storage:migrations")
    script = ScriptDirectory.from_config(cfg)
    assert script.get_current_head() == db.SCHEMA_HEAD
    revisions = [r.revision for r in script.walk_revisions()][::-1]
    assert tuple(revisions) == db.SCHEMA_REVISIONS
