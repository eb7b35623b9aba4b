"""Runs: runs, attempts, events and tool calls (``service.py``) and a run's whole detail in one
read (``facts.py``)."""

from typing import Any

from proctor.core import aliases


def __getattr__(name: str) -> Any:
    """``proctor.core.runs`` was the service module: its names still import, with a warning."""
    return aliases.service_name(__name__, name)
