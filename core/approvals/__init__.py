"""Approvals: an agent asks before it acts, a person or a standing rule decides, the agent
consumes the decision. The service (``service.py``), its standing rules (``standing.py``:
made, previewed, revoked) and how a rule matches a request (``rules.py``)."""

from typing import Any

from proctor.core import aliases


def __getattr__(name: str) -> Any:
    """``proctor.core.approvals`` was the service module: its names still import, with a warning."""
    return aliases.service_name(__name__, name)
