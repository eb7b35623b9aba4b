"""`proctor` command line: every subcommand is registered by one module."""

from __future__ import annotations

import argparse
import importlib
import sys

from . import __version__

# Each module has ``register(subparsers)``; its subcommands set ``func(args) -> int``.
COMMAND_MODULES = ("proctor.cmd_ops", "proctor.cmd_sim", "proctor.cmd_desk",
                   "proctor.cmd_integrations", "proctor.cmd_timeline", "proctor.cmd_desktop")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
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
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    return int(args.func(args) or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
