"""The desk's command line, built in one place for its three entries: ``proctor-desk``
(launch.py), ``python -m proctor.gui.shell.start`` and ``python -m proctor.gui.shell.app``.
No parser guesses an abbreviated option (``--mig`` is not ``--migrate``).

Imports only the standard library: start.py builds it before anything of the desk is loaded.
"""

from __future__ import annotations

import argparse


def desk_parser(description: str, *, path_optional: bool = False) -> argparse.ArgumentParser:
    """The options every entry shares. ``path_optional``: proctor-desk finds a journal by
    itself when none is named; the direct entries need one."""
    parser = argparse.ArgumentParser(
        prog="proctor-desk", description=description, allow_abbrev=False
    )
    if path_optional:
        parser.add_argument(
            "path",
            nargs="?",
            help="the journal file (default: the default journal set in "
            "Preferences, else the most recent one, else ask), or a link proctor://item/ID "
            "or proctor://run/ID to show in that journal",
        )
    else:
        parser.add_argument("path", help="the journal file")
    parser.add_argument("--read-only", action="store_true", help="open for observing only")
    parser.add_argument(
        "--as",
        dest="operator",
        help="operator name recorded on decisions (default: Preferences, else your login)",
    )
    parser.add_argument(
        "--migrate",
        action="store_true",
        help="upgrade an older journal without asking (a backup is made "
        "first); without it the desk asks",
    )
    return parser


def direct_parser() -> argparse.ArgumentParser:
    """start.py's and app.py's own ``main``: a named journal, and the benchmark's hook."""
    parser = desk_parser("Proctor's desk")
    parser.add_argument("--bench-paint", action="store_true", help=argparse.SUPPRESS)
    return parser
