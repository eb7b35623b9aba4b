"""`proctor` command line: every subcommand is registered by one module."""

from __future__ import annotations

import argparse
import importlib
import sys

from . import __version__
from .parsing import Parser

# Each module has ``register(subparsers)``; its subcommands set ``func(args) -> int``.
COMMAND_MODULES = (
    "proctor.cmd_ops",
    "proctor.cmd_sim",
    "proctor.cmd_desk",
    "proctor.cmd_integrations",
    "proctor.cmd_timeline",
    "proctor.cmd_desktop",
    "proctor.cmd_keys",
    "proctor.cmd_rules",
    "proctor.cmd_team",
)


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="proctor",
        description="Proctor: the operator desk for AI-agent runs.",
    )
    parser.add_argument("--version", action="version", version=f"proctor {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
            continue
        module.register(sub)
    add_completion(sub, parser)
    return parser


SHELLS = ("bash", "zsh", "tcsh")


def add_completion(sub: argparse._SubParsersAction, parser: argparse.ArgumentParser) -> None:
    """`proctor completion SHELL`: the shell completion script, made by shtab from this very
    parser (so it never lists a command or flag that does not exist)."""
    p = sub.add_parser(
        "completion",
        help="print the shell completion script",
        description="Print a completion script for SHELL. Bash: "
        "`proctor completion bash > ~/.local/share/"
        "bash-completion/completions/proctor`; zsh: write it "
        "as `_proctor` into a folder on your $fpath.",
    )
    p.add_argument("shell", choices=SHELLS)
    p.set_defaults(func=lambda args: print_completion(parser, args.shell))


def print_completion(parser: argparse.ArgumentParser, shell: str) -> int:
    import shtab

    print(shtab.complete(parser, shell=shell))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    return int(args.func(args) or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
