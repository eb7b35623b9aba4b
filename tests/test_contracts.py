"""Architecture contracts: the import-linter contracts in pyproject.toml hold on the tree and
break on a deliberate wrong import of each kind; gui never writes SQL; every package is
packaged."""

import os
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]


MAPPED = {"cli": "", "core": "core", "gui": "gui", "sim": "sim"}  # folder -> under proctor/

# One wrong import per contract (file, the line added to it): each must break its contract.
WRONG = {
    "proctor.core never imports Qt": ("core/kernel/limits.py", "import PySide6"),
    "proctor.core is layered": ("core/storage/rows.py", "import proctor.core.approvals.service"),
    "the services are independent": (
        "core/questions/service.py",
        "import proctor.core.memory.service",
    ),
    "proctor.gui is layered": ("gui/inbox/page.py", "import proctor.gui.runs.page"),
    "proctor.gui never reaches the storage layer": (
        "gui/rules/page.py",
        "import proctor.core.storage.schema",
    ),
    "proctor (the CLI) goes through the public core API": (
        "cli/ops_decisions.py",
        "import proctor.core.storage.tx",
    ),
    "proctor.sim uses the public core API only": (
        "sim/agents.py",
        "import proctor.core.decisions.writer",
    ),
}


def package_tree(tmp_path: pathlib.Path, wrong: dict[str, str] | None = None) -> pathlib.Path:
    """The installed layout (proctor/, proctor/core, ...) as a tree of symlinks, so
    import-linter's static scan can walk it (the editable install maps folders with an
    import hook). ``wrong``: files (repo paths) copied in with one more line each."""
    wrong = wrong or {}
    for folder, under in MAPPED.items():
        for src in (ROOT / folder).rglob("*.py"):
            rel = src.relative_to(ROOT / folder)
            dst = tmp_path / "proctor" / under / rel
            dst.parent.mkdir(parents=True, exist_ok=True)
            key = f"{folder}/{rel}"
            if key in wrong:
                dst.write_text(
                    src.read_text(encoding="utf-8") + f"\n{wrong[key]}\n", encoding="utf-8"
                )
            else:
                dst.symlink_to(src)
    return tmp_path


def lint(tree: pathlib.Path) -> subprocess.CompletedProcess:
    command = pathlib.Path(sys.executable).with_name("lint-imports")
    env = {**os.environ, "PYTHONPATH": str(tree), "COLUMNS": "1000"}  # a name on one line
    return subprocess.run(
        [str(command), "--no-cache"], cwd=ROOT, capture_output=True, text=True, env=env
    )


def test_import_linter_contracts_hold(tmp_path):
    result = lint(package_tree(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr


def test_each_contract_breaks_on_a_wrong_import(tmp_path):
    result = lint(package_tree(tmp_path, {path: line for path, line in WRONG.values()}))
    verdicts = dict(re.findall(r"^(.+?) (KEPT|BROKEN)$", result.stdout, re.MULTILINE))
    assert result.returncode != 0
    for name in WRONG:
        matching = [v for contract, v in verdicts.items() if contract.startswith(name)]
        assert matching == ["BROKEN"], (name, result.stdout)


def test_every_contract_has_a_wrong_import():
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    names = [c["name"] for c in config["tool"]["importlinter"]["contracts"]]
    assert sorted(n for n in names if not any(n.startswith(w) for w in WRONG)) == []


def test_the_cli_contract_names_every_cli_module():
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    [cli] = [
        c
        for c in config["tool"]["importlinter"]["contracts"]
        if c["name"].startswith("proctor (the CLI)")
    ]
    modules = {
        f"proctor.{p.stem}"
        for p in (ROOT / "cli").glob("*.py")
        if p.stem not in ("__init__", "__main__")
    }
    assert set(cli["source_modules"]) == modules


def test_every_package_is_packaged():
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    listed = set(config["tool"]["setuptools"]["packages"])
    found = set()
    for folder, name in {
        "cli": "proctor",
        "core": "proctor.core",
        "gui": "proctor.gui",
        "sim": "proctor.sim",
        "resources": "proctor.resources",
    }.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            found.add(".".join([name, *init.parent.relative_to(ROOT / folder).parts]))
    assert found == listed


def test_gui_has_no_sql():
    pattern = re.compile(
        r"^\s*(from|import)\s+sqlalchemy|\.execute\(|\bSELECT\b|\bUPDATE\b.*\bSET\b", re.MULTILINE
    )
    offenders = [
        str(p.relative_to(ROOT))
        for p in (ROOT / "gui").rglob("*.py")
        if pattern.search(p.read_text(encoding="utf-8"))
    ]
    assert offenders == []


def test_core_has_no_qt():
    pattern = re.compile(r"^\s*(from|import)\s+(PySide6|shiboken6)", re.MULTILINE)
    offenders = [
        str(p.relative_to(ROOT))
        for p in (ROOT / "core").rglob("*.py")
        if pattern.search(p.read_text(encoding="utf-8"))
    ]
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


MAX_LINES = 800  # a module longer than this is split by what it does (house style)


def test_no_python_file_is_longer_than_the_house_limit():
    tracked = subprocess.run(
        ["git", "ls-files", "*.py"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    long = {
        name: n
        for name in tracked
        if (path := ROOT / name).exists()
        and (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}, f"split these (over {MAX_LINES} lines): {long}"
