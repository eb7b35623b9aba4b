"""Effects: reserve, begin, commit or fail; ambiguous when the outcome is unknown, resolved by
a person. The service, its rows inside a write, and the desk's views."""

from typing import Any

from proctor.core import aliases


def __getattr__(name: str) -> Any:
    """``proctor.core.effects`` was the service module: its names still import, with a warning."""
    return aliases.service_name(__name__, name)
