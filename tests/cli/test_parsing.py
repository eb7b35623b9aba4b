"""The command line guesses nothing (issue 32, item 2): generated from the real parser, every
unique prefix of every long option of every subcommand is refused with that subcommand's
usage and exit 2; a mistyped command names the nearest one."""

from __future__ import annotations

import argparse
import contextlib
import io
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from proctor.cli import build_parser


def subcommands(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every parser of the command line with the words that reach it (aliases included)."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from subcommands(child, (*path, name))


PARSER = build_parser()
ALL = list(subcommands(PARSER))
LEAVES = [
    (path, p)
    for path, p in ALL
    if path and not any(isinstance(a, argparse._SubParsersAction) for a in p._actions)
]


def filler(parser: argparse.ArgumentParser) -> list[str]:
    """Arguments that satisfy a parser's required positionals, options and groups."""
    words: list[str] = []
    for group in parser._mutually_exclusive_groups:
        if group.required:
            first = group._group_actions[0]
            words += [first.option_strings[0], *value_of(first)]
    for action in parser._actions:
        if action.option_strings:
            if action.required:
                words += [action.option_strings[0], *value_of(action)]
        elif not isinstance(action, argparse._SubParsersAction) and action.nargs not in ("?", "*"):
            words += value_of(action, positional=True)
    return words


def value_of(action: argparse.Action, positional: bool = False) -> list[str]:
    if action.nargs == 0:
        return []
    value = str(next(iter(action.choices))) if action.choices else "1"
    return [value]


def unique_prefixes(parser: argparse.ArgumentParser) -> Iterator[tuple[str, str]]:
    """(prefix, option) for every prefix argparse's guessing would have taken as the option."""
    options = [o for a in parser._actions for o in a.option_strings if o.startswith("--")]
    for option in options:
        for end in range(3, len(option)):
            prefix = option[:end]
            if prefix not in options and [o for o in options if o.startswith(prefix)] == [option]:
                yield prefix, option


CASES = [
    pytest.param(path, prefix, id=f"{' '.join(path)} {prefix} ({option})")
    for path, p in LEAVES
    for prefix, option in unique_prefixes(p)
]


def parse(argv: list[str]) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            PARSER.parse_args(argv)
        except SystemExit as stop:
            return int(stop.code or 0), err.getvalue()
    return 0, err.getvalue()


def test_the_list_is_the_whole_command_line() -> None:
    names = {path[0] for path, _p in LEAVES}
    assert {"approve", "deny", "inbox", "show", "answer", "add-rule", "verify"} <= names
    assert len(CASES) > 200  # every option of every subcommand, several prefixes each


def test_no_parser_guesses_abbreviations() -> None:
    assert [path for path, p in ALL if p.allow_abbrev] == []


def test_filler_satisfies_every_subcommand() -> None:
    """The generated arguments parse: so a refusal below is the prefix's, nothing else's."""
    for path, p in LEAVES:
        code, err = parse([*path, *filler(p)])
        assert code == 0, (path, err)


@pytest.mark.parametrize(("path", "prefix"), CASES)
def test_every_unique_prefix_of_every_option_is_refused(path: tuple[str, ...], prefix: str) -> None:
    parser = dict(ALL)[path]
    code, err = parse([*path, *filler(parser), prefix])
    assert code == 2
    assert f"usage: {parser.prog} " in err  # the subcommand's usage, not the top one
    assert f"unknown option {prefix!r}" in err


def test_approve_scop_makes_no_rule(cli, journal: Path) -> None:
    """The issue's case, through main: `--scop run` is refused, nothing is decided."""
    from proctor.core import InboxFilter, InboxKind, Journal

    with Journal.open(journal, read_only=True) as j:
        item = j.inbox.list(InboxFilter(kinds=frozenset({InboxKind.APPROVAL}))).items[0]
    result = cli("approve", item.id, "--scop", "run", "--yes")
    assert result.rc == 2 and "usage: proctor approve" in result.err
    with Journal.open(journal, read_only=True) as j:
        assert j.approvals.get(item.id).status.value == "pending"
        assert not [r for r in j.approvals.rules() if r.source_approval_id == item.id]
    assert cli("inbox", "--js").rc == 2


@pytest.mark.parametrize(
    ("typed", "near"), [("aprove", "approve"), ("invox", "inbox"), ("verfy", "verify")]
)
def test_a_mistyped_command_names_the_nearest(typed: str, near: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "proctor", typed, "x"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 2
    assert f"did you mean {near!r}?" in done.stderr
