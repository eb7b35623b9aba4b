"""Shared fixtures: a temp journal and an operator ("the desk") deciding through proctor.core."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from proctor.core import Actor, InboxFilter, InboxKind, Journal
from proctor.core.models import InboxItem


class Desk:
    """The operator side, as the desk does it: poll the inbox, decide through core."""

    def __init__(self, path: Path, name: str = "alice") -> None:
        self.journal = Journal.open(path, actor=Actor.operator(name))

    def wait_pending(self, kind: str, count: int = 1, timeout: float = 20.0) -> list[InboxItem]:
        """Block until at least ``count`` open items of ``kind`` are in the inbox."""
        deadline = time.monotonic() + timeout
        flt = InboxFilter(kinds=frozenset({InboxKind(kind)}), newest_first=False)
        while True:
            items = self.journal.inbox.list(flt).items
            if len(items) >= count:
                return items
            if time.monotonic() > deadline:
                raise AssertionError(f"expected {count} pending {kind}(s), found {len(items)}")
            time.sleep(0.02)

    def approve(self, approval_id: str, reason: str | None = None) -> None:
        a = self.journal.approvals.get(approval_id)
        self.journal.approvals.decide(approval_id, True, expected_version=a.version, reason=reason)

    def deny(self, approval_id: str, reason: str) -> None:
        a = self.journal.approvals.get(approval_id)
        self.journal.approvals.decide(approval_id, False, expected_version=a.version, reason=reason)

    def answer(self, interaction_id: str, response: object, reason: str | None = None) -> None:
        q = self.journal.questions.get(interaction_id)
        self.journal.questions.answer(
            interaction_id, response, expected_version=q.version, reason=reason
        )


@pytest.fixture
def journal_path(tmp_path: Path) -> Path:
    path = tmp_path / "journal.db"
    Journal.open(path, actor=Actor.operator("setup")).close()
    return path


@pytest.fixture
def desk(journal_path: Path):
    d = Desk(journal_path)
    yield d
    d.journal.close()


@pytest.fixture
def server_desk(pg_url: str):
    """The operator on a server journal (the session's PostgreSQL, reached over TCP)."""
    assert "@127.0.0.1:" in pg_url
    d = Desk(pg_url)  # type: ignore[arg-type]
    yield d
    d.journal.close()
