"""Approvals: an agent asks before it acts, a person or a standing rule decides, the agent
consumes the decision. The service (``service.py``: requests, decisions, consumption and the
standing rules made, previewed, applied and revoked in its transactions) and what a rule is
(``rules.py``: which rule decides a request, drafts, previews, their order)."""

from typing import Any

from proctor.core import aliases


def __getattr__(name: str) -> Any:
    """``proctor.core.approvals`` was the service module: its names still import, with a warning."""
    return aliases.service_name(__name__, name)
