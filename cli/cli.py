"""`proctor` command line: every subcommand is registered by one module."""

# ruff: noqa: E402 (the codex hook guard is installed before the imports)

from __future__ import annotations

# The console script's entry module (``proctor = "proctor.cli:main"``; __main__.py installs it
# before importing this): `proctor hook codex` fails closed on SIGTERM from here on
# (hook_guard). Here, not in proctor/__init__.py: importing proctor.core from an agent's own
# program must leave its SIGTERM alone.
from .hook_guard import install_if_codex_hook

install_if_codex_hook()

import sys
from typing import TYPE_CHECKING

from . import __version__

if TYPE_CHECKING:
    import argparse

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
    "proctor.cmd_policies",
    "proctor.cmd_team",
    "proctor.cmd_warm",
)
# Which module registers each subcommand (aliases too), so that a command imports only its
# own module: `proctor hook ...` never loads the operator commands, `--version` none.
# tests/cli/test_lazy_commands.py checks it against what the modules register.
COMMANDS = {
    **dict.fromkeys(
        (
            "inbox",
            "show",
            "approve",
            "deny",
            "answer",
            "dismiss",
            "undo",
            "retry",
            "resolve-effect",
            "resolve-conflict",
            "resolve-memory",
            "snooze",
            "cancel",
            "runs",
            "timeline",
            "verify",
            "export",
        ),
        "proctor.cmd_ops",
    ),
    **dict.fromkeys(("simulate", "demo-journal"), "proctor.cmd_sim"),
    **dict.fromkeys(("demo", "open"), "proctor.cmd_desk"),
    **dict.fromkeys(("mcp", "hook"), "proctor.cmd_integrations"),
    **dict.fromkeys(
        ("export-run", "export-runs", "export-audit", "import"), "proctor.cmd_timeline"
    ),
    "install-desktop": "proctor.cmd_desktop",
    "keys": "proctor.cmd_keys",
    "warm": "proctor.cmd_warm",
    **dict.fromkeys(("rules", "revoke-rule", "add-rule", "approve-edited"), "proctor.cmd_rules"),
    **dict.fromkeys(("migrate-to", "team"), "proctor.cmd_team"),
    **dict.fromkeys(
        (
            "policies",
            "add-policy",
            "revoke-policy",
            "groups",
            "group",
            "delegate",
            "delegation",
            "delegations",
        ),
        "proctor.cmd_policies",
    ),
}


def modules_for(argv: list[str]) -> tuple[str, ...]:
    """The command modules a parse of ``argv`` needs: the one that registers its command, none
    for a bare ``--version``, every one otherwise (help, no command, an unknown one,
    ``completion``), so usage and errors read exactly as with the whole parser."""
    before: list[str] = []
    for arg in argv:
        if not arg.startswith("-"):
            lean = arg in COMMANDS and not {"-h", "--help"} & set(before)
            return (COMMANDS[arg],) if lean else COMMAND_MODULES
        before.append(arg)
    return () if "--version" in argv and not {"-h", "--help"} & set(argv) else COMMAND_MODULES


def build_parser(modules: tuple[str, ...] = COMMAND_MODULES) -> argparse.ArgumentParser:
    import importlib

    from .parsing import Parser

    parser = Parser(
        prog="proctor",
        description="Proctor: the operator desk for AI-agent runs.",
    )
    parser.add_argument("--version", action="version", version=f"proctor {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in modules:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
            continue
        module.register(sub)
    if modules == COMMAND_MODULES:
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


# proctor.core.decisions.trust.LOGGER, named here so that a command that never opens a journal
# (--version, help) imports no core module for it; tests/core/test_signed_binding.py checks the two.
TRUST_LOGGER = "proctor.trust"


def _warnings_on_stderr() -> None:
    """The core's warning that an agent trusts no one on a journal holding signed decisions
    (``proctor.trust``) is one stderr line in every command: hooks and ``proctor mcp`` too."""
    import logging

    from .stderr_line import StderrLine

    logger = logging.getLogger(TRUST_LOGGER)
    if not any(isinstance(h, StderrLine) for h in logger.handlers):
        logger.addHandler(StderrLine(logging.WARNING))


def main(argv: list[str] | None = None) -> int:
    if argv is None:  # the console script: a short command may run in a warm process
        from . import warm

        code = warm.run(sys.argv)
        if code is not None:
            return code
    _warnings_on_stderr()
    parser = build_parser(modules_for(sys.argv[1:] if argv is None else argv))
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    return int(args.func(args) or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
