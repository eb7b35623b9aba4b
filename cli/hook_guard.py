"""`proctor hook codex` fails closed on SIGTERM from the first line of Proctor's code.

Codex runs the tool call when its ``PreToolUse`` hook exits without a denial, and a process
killed by SIGTERM exits without one. So the hook's SIGTERM handler is installed by the
entry, before anything else is imported (``install_if_codex_hook``: the first lines of
``proctor/__main__.py`` and of ``proctor/cli.py``, the console script's module; never on
importing the package, which an agent's own program does), and answers by phase:

- ``start`` (imports, reading stdin, parsing): write the denial to fd 1 and ``_exit(0)`` at
  once: nothing is filed yet, nothing needs undoing;
- ``wait`` (filing the request and waiting for the operator): raise ``SystemExit`` so the
  request is withdrawn on the way out; the hook then prints the denial
  (``cmd_integrations.run_hook``). Later signals are ignored so that cleanup and the denial
  finish;
- ``done`` (the answer is known and being written): ignored, the answer stands.

What no handler can cover: a SIGTERM before the interpreter runs this module (Python's own
start-up, some milliseconds) or a SIGKILL; either exits with no output, which Codex treats as
an allow. Keep the hook's ``timeout`` in Codex's hooks.json above ``--timeout``.

This module imports only ``os``, ``signal`` and ``sys``: it runs before the rest of Proctor.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

# codex.refuse("the hook was stopped before a decision"), as bytes ready to write
DENY = (
    b'{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", '
    b'"permissionDecisionReason": "Proctor: the hook was stopped before a decision; denied, '
    b"since Codex would run the call without a decision (ask it again once the desk can "
    b'decide)"}}\n'
)

phase = "off"  # off (not the codex hook) | start | wait | done


def is_codex_hook(argv: list[str]) -> bool:
    """``proctor hook codex ...`` (the console script, ``python -m proctor``, __main__.py)."""
    head = os.path.basename(argv[0]) if argv else ""
    return argv[1:3] == ["hook", "codex"] and head in ("-m", "proctor", "__main__.py")


def install_if_codex_hook() -> None:
    global phase
    if phase != "off" or not is_codex_hook(sys.argv):
        return
    try:
        signal.signal(signal.SIGTERM, on_term)
    except ValueError:  # not the main thread: not the hook's own process start
        return
    phase = "start"


def enter(new_phase: str) -> None:
    global phase
    if phase != "off":
        phase = new_phase


def write_deny() -> None:
    data = DENY
    while data:
        try:
            data = data[os.write(1, data) :]
        except InterruptedError:
            continue
        except OSError:
            return


def on_term(signum: int, _frame: Any) -> None:
    if phase == "wait":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        raise SystemExit(128 + signum)
    if phase == "done":
        return
    write_deny()
    os._exit(0)


__all__ = ["DENY", "enter", "install_if_codex_hook", "is_codex_hook"]
