"""A command imports only the module that registers it (issue 33): `proctor hook ...` never loads
the operator commands, `proctor --version` neither the core nor SQLAlchemy; and each command
parses, helps and refuses exactly as with the whole parser."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from proctor import cli
from proctor.core import Actor, Journal

HEAVY = ("sqlalchemy.orm", "psycopg", "alembic", "jsonschema", "cryptography", "unidiff", "PySide6")


def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def registered_by(module: str) -> set[str]:
    sub = argparse.ArgumentParser(prog="proctor").add_subparsers()
    importlib.import_module(module).register(sub)
    return set(sub.choices)


def test_every_command_maps_to_the_module_that_registers_it() -> None:
    for module in cli.COMMAND_MODULES:
        mapped = {c for c, m in cli.COMMANDS.items() if m == module}
        assert registered_by(module) == mapped, module
    assert set(subcommands(cli.build_parser())) == set(cli.COMMANDS) | {"completion"}


def outcome(parse: object, argv: list[str]) -> tuple[object, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code: object = None
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            parse(argv)  # type: ignore[operator]
        except SystemExit as exc:
            code = exc.code
    return code, out.getvalue(), err.getvalue()


def lazy_parse(argv: list[str]) -> None:
    cli.build_parser(cli.modules_for(argv)).parse_args(argv)


def full_parse(argv: list[str]) -> None:
    cli.build_parser().parse_args(argv)


@pytest.mark.parametrize("command", sorted(cli.COMMANDS))
def test_each_command_helps_and_refuses_as_with_the_whole_parser(command: str) -> None:
    assert cli.modules_for([command]) == (cli.COMMANDS[command],)
    for argv in ([command, "--help"], [command, "--no-such-option"], ["-h", command]):
        assert outcome(lazy_parse, argv) == outcome(full_parse, argv), argv


@pytest.mark.parametrize(
    "argv",
    [[], ["-h"], ["--help"], ["--version"], ["nope"], ["completion", "bash"], ["--nope"]],
)
def test_no_command_or_an_unknown_one_reads_as_with_the_whole_parser(argv: list[str]) -> None:
    assert outcome(lazy_parse, argv) == outcome(full_parse, argv)


# `python -m proctor ARGV`, writing the modules it holds at exit to the file $MODULES_OUT
# (``-X importtime`` would miss the ones importlib.import_module loads).
RUN = (
    "import atexit, json, os, runpy, sys\n"
    "out = os.environ['MODULES_OUT']\n"
    "atexit.register(lambda: open(out, 'w').write(json.dumps(sorted(sys.modules))))\n"
    "sys.argv = ['proctor', *sys.argv[1:]]\n"
    "runpy.run_module('proctor', run_name='__main__', alter_sys=True)\n"
)


def imported(argv: list[str], tmp_path: Path, stdin: str = "") -> tuple[set[str], str]:
    """The modules a real `proctor ARGV` process held when it exited, and its stdout (no
    trusted-operators file, as a hook without ``--trust`` runs)."""
    out = tmp_path / "modules.json"
    env = {k: v for k, v in os.environ.items() if k != "PROCTOR_TRUSTED_OPERATORS"}
    proc = subprocess.run(
        [sys.executable, "-c", RUN, *argv],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        env={**env, "MODULES_OUT": str(out)},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return set(json.loads(out.read_text())), proc.stdout


def test_version_imports_neither_the_core_nor_sqlalchemy(tmp_path: Path) -> None:
    names, out = imported(["--version"], tmp_path)
    assert out.startswith("proctor ")
    assert "proctor.cli" in names  # the check reads the real import list
    loaded = {n for n in names if n.split(".")[0] in ("sqlalchemy", "pydantic")}
    assert loaded == set()
    assert {n for n in names if n.startswith(("proctor.c", "proctor.ops_"))} == {"proctor.cli"}


def test_a_rule_allowed_hook_imports_only_the_hook_and_the_core(tmp_path: Path) -> None:
    path = tmp_path / "journal.db"
    with Journal.open(path, actor=Actor.operator("alice")) as j:
        j.approvals.add_rule("allow", "Read", scope="space", project="claude-code")
    event = {
        "session_id": "s1",
        "hook_event_name": "PreToolUse",
        "tool_name": "Read",
        "tool_input": {"file_path": "README.md"},
        "tool_use_id": "toolu_1",
        "cwd": str(tmp_path),
    }
    names, out = imported(
        ["hook", "claude-code", "--journal", str(path), "--timeout", "5"],
        tmp_path,
        stdin=json.dumps(event),
    )
    assert json.loads(out)["hookSpecificOutput"]["permissionDecision"] == "allow", out
    commands = {n for n in names if n.startswith(("proctor.cmd_", "proctor.ops_"))}
    assert commands == {"proctor.cmd_integrations"}
    assert sorted(n for n in names if n.split(".")[0] in HEAVY or n in HEAVY) == []
