"""Integration fixtures: a desk in the test process (offscreen, on a real journal file).
The desk machinery (``desks``, ``settings``) is shared with the GUI tests: tests/conftest.py."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

WAIT_MS = 20_000


@pytest.fixture
def desk(desks) -> Callable:
    """desk(path, read_only=False, busy_timeout=5.0) -> a started MainWindow as "alice"."""
    desks.wait_ms = WAIT_MS

    def make(path: Path, read_only: bool = False, busy_timeout: float = 5.0):
        return desks.open(path, read_only=read_only, busy_timeout=busy_timeout)

    return make
