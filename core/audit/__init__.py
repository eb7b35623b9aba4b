"""Audit and integrity: the audit log and the change feed (``service.py``), the overview's facts,
run timelines, ``verify`` and the head witness kept beside a journal file."""

from typing import Any

from proctor.core import aliases


def __getattr__(name: str) -> Any:
    """``proctor.core.audit`` was the service module: its names still import, with a warning."""
    return aliases.service_name(__name__, name)
