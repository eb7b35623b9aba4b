"""Memory: scoped entries, every change a mutation row, conflicts reviewed by a person; the
service and the desk's views."""

from typing import Any

from proctor.core import aliases


def __getattr__(name: str) -> Any:
    """``proctor.core.memory`` was the service module: its names still import, with a warning."""
    return aliases.service_name(__name__, name)
