"""The command line's argument parser, as git and kubectl behave: no option is guessed from
an abbreviation (``--scop`` is not ``--scope``), an unknown option prints the usage of the
subcommand it was given to and exits 2, and a mistyped command or choice names the nearest
one ("did you mean 'approve'?")."""

from __future__ import annotations

import argparse
import difflib
from typing import Any


class Parser(argparse.ArgumentParser):
    """Every parser and subparser of ``proctor`` (subparsers inherit the class): abbreviations
    refused, unknown options reported by the subcommand that got them."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["allow_abbrev"] = False
        super().__init__(*args, **kwargs)

    def parse_known_args(  # type: ignore[override]
        self, args: Any = None, namespace: Any = None
    ) -> tuple[argparse.Namespace, list[str]]:
        """Parse strictly: an argument this parser (or a subcommand below it) does not know
        is an error here, with this parser's usage, not passed up to the top one."""
        parsed, extras = super().parse_known_args(args, namespace)
        if extras:
            self.error(unknown_message(extras))
        return parsed, extras

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        choices = action.choices
        if choices is None or value in choices:
            return
        names = [str(c) for c in choices]
        what = "command" if isinstance(action, argparse._SubParsersAction) else "choice"
        message = f"invalid {what} {value!r}"
        near = difflib.get_close_matches(str(value), names, n=1)
        if near:
            message += f"; did you mean {near[0]!r}?"
        else:
            message += f" (choose from {', '.join(repr(n) for n in names)})"
        raise argparse.ArgumentError(action, message)


def unknown_message(extras: list[str]) -> str:
    options = [a for a in extras if a.startswith("-") and a != "-"]
    if options:
        return f"unknown option {options[0]!r} (options are never abbreviated; see --help)"
    return f"unexpected argument {extras[0]!r}"


def plain_parser(**kwargs: Any) -> argparse.ArgumentParser:
    """A parent parser (``add_help=False``) of shared options: no abbreviations either."""
    return argparse.ArgumentParser(add_help=False, allow_abbrev=False, **kwargs)


__all__ = ["Parser", "plain_parser", "unknown_message"]
