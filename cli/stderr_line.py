"""The log handler that prints the core's warnings as one ``proctor: warning:`` line."""

from __future__ import annotations

import contextlib
import logging
import sys


class StderrLine(logging.Handler):
    """One line on the stderr of the moment (not the one at start: tests swap it)."""

    def emit(self, record: logging.LogRecord) -> None:
        # the message holds agent data (the agent's label, under MCP the client's name, and
        # the journal's path): printed through the CLI's one escaping function, imported here
        # so that a command that never warns never imports it
        from .ops_render import clean

        with contextlib.suppress(OSError, ValueError):
            line = clean(record.getMessage(), one_line=True)
            print(f"proctor: warning: {line}", file=sys.stderr, flush=True)
