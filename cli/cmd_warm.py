"""`proctor warm [status|stop]`: the warm server.

Hooks and the short operator commands (inbox, show, approve, …) run in a process forked from
a warm server that has Proctor imported, started in the background by the first of them and
gone after 10 idle minutes. `status` says whether one runs for this Proctor install, and its
socket; `stop` ends it (the next short command starts a new one). PROCTOR_WARM=0 turns the
warm start off.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import signal
import time
from typing import Any

from . import warm

EXIT_OK, EXIT_REFUSED = 0, 1  # as ops_base's (not imported: it imports the core)

STOP_WAIT_S = 10.0


def server_pid() -> int | None:
    """The running server's pid: the one its lock file names, while the lock is held."""
    where = warm.paths()
    if where is None:
        return None
    _, lock_path = where
    try:
        fd = os.open(lock_path, os.O_RDONLY)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:  # held: a server runs
            text = os.read(fd, 32).decode("ascii", "replace").strip()
            return int(text) if text.isdigit() else None
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def cmd_status(args: argparse.Namespace) -> int:
    if os.environ.get("PROCTOR_WARM", "").strip().lower() in warm.OFF:
        print("warm start: off (PROCTOR_WARM is set to turn it off)")
        return EXIT_OK
    where = warm.paths()
    if where is None:
        print("warm start: off (no runtime folder that is this user's alone)")
        return EXIT_OK
    pid = server_pid()
    if pid is None:
        print("warm server: not running (the next short command starts one)")
    else:
        print(f"warm server: running, pid {pid}")
    print(f"socket: {where[0]}")
    return EXIT_OK


def cmd_stop(args: argparse.Namespace) -> int:
    pid = server_pid()
    if pid is None:
        print("warm server: not running")
        return EXIT_OK
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_WAIT_S
    while server_pid() == pid:
        if time.monotonic() > deadline:
            print(f"warm server {pid} did not stop within {STOP_WAIT_S:g} s")
            return EXIT_REFUSED
        time.sleep(0.05)
    print(f"warm server {pid} stopped (commands it was running finish)")
    return EXIT_OK


def register(sub: Any) -> None:
    p = sub.add_parser(
        "warm",
        help="the warm server short commands start in (status, stop)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.set_defaults(func=cmd_status)
    actions = p.add_subparsers(dest="warm_command", metavar="ACTION")
    for name, fn, help_ in (
        ("status", cmd_status, "say whether a warm server runs, and where"),
        ("stop", cmd_stop, "stop the warm server"),
    ):
        actions.add_parser(name, help=help_, description=help_).set_defaults(func=fn)
