"""The inbox: everything that waits for a person, across runs, in one keyset-paged list."""

from typing import Any

from proctor.core import aliases


def __getattr__(name: str) -> Any:
    """``proctor.core.inbox`` was the service module: its names still import, with a warning."""
    return aliases.service_name(__name__, name)
