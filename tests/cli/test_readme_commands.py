"""The README's command-line table and `proctor --help` list the same commands: every
subcommand the parser has is in the table, and every `proctor NAME` the table names exists
(team mode's `migrate-to` and `team` included)."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from proctor.cli import build_parser

README = Path(__file__).resolve().parents[2] / "README.md"


def cli_table() -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index("## The command line")
    return text[start : text.index("\n## ", start + 1)]


def commands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    [sub] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(sub.choices)


def test_every_command_is_in_the_readme_table():
    table = cli_table()
    missing = [
        name
        for name in commands()
        if f"`proctor {name}" not in table
        and f"`{name}`" not in table
        and f", `{name}`" not in table
    ]
    assert missing == []


def test_every_command_the_readme_names_exists():
    named = set(re.findall(r"`proctor ([a-z][a-z-]*)", cli_table()))
    assert named - set(commands()) == set()


def test_the_team_subcommands_the_readme_names_exist():
    team = commands()["team"]
    [sub] = [a for a in team._actions if isinstance(a, argparse._SubParsersAction)]
    named = set(re.findall(r"`proctor team ([a-z-]+)", cli_table()))
    assert named == {"init", "add-user"} and named <= set(sub.choices)
