"""The audit log (read side) and the change feed."""

from __future__ import annotations

import builtins
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from sqlalchemy import func, or_, select

from proctor.core.models import AuditEntry, Change, ChangeKind, ChangeSet, Page
from proctor.core.storage import schema as s
from proctor.core.storage.paging import MAX_PAGE, escape_like
from proctor.core.storage.rows import to_model, to_models
from proctor.core.storage.store import Store

AUDIT_PAGE = Page[AuditEntry]  # parametrised once


def audit_source() -> Any:
    """The source of the decision written with an audit entry (same target, same actor,
    same transaction time), or NULL: a correlated lookup on ``ix_decisions_target``. Display
    only: it is not in the entry's digest (the audit chain is unchanged)."""
    a, d = s.audit.c, s.decisions.c
    return (
        select(d.source)
        .where(
            d.target_kind == a.entity_kind,
            d.target_id == a.entity_id,
            d.created_at == a.created_at,
            d.actor == a.actor,
        )
        .order_by(d.id)
        .limit(1)
        .correlate(s.audit)
        .scalar_subquery()
        .label("source")
    )


def audit_with_source() -> Any:
    """``SELECT audit.*, source``: what the audit reads return."""
    return select(s.audit, audit_source())


def decision_sources(conn: Any) -> list[str]:
    """Every source that decided something (the Audit page's source filter)."""
    d = s.decisions.c
    return list(conn.execute(select(d.source).distinct().order_by(d.source)).scalars())


class Audit:
    def __init__(self, store: Store) -> None:
        self.j = store

    def list(
        self,
        *,
        before: int | None = None,
        limit: int = 200,
        actor: str | None = None,
        entity_kind: str | None = None,
        run_id: str | None = None,
        action_prefix: str | None = None,
        text: str | None = None,
        since: float | None = None,
        until: float | None = None,
        source: str | None = None,
    ) -> Page[AuditEntry]:
        """Newest first, keyset-paged by sequence (pass the cursor back as ``before``);
        ``text`` searches action, entity, reason, actor, run and the before/after JSON;
        ``source`` is the decision's (desk, cli, rule…). The one audit listing (the desk's
        Audit page, ``proctor audit``, the CSV export)."""
        a = s.audit.c
        conds = [
            a.sequence < before if before else None,
            audit_source() == source if source else None,
            a.actor == actor if actor else None,
            a.entity_kind == entity_kind if entity_kind else None,
            a.run_id == run_id if run_id else None,
            a.action.like(f"{escape_like(action_prefix)}%", escape="\\") if action_prefix else None,
            a.created_at >= since if since is not None else None,
            a.created_at < until if until is not None else None,
        ]
        if text:
            like = f"%{escape_like(text)}%"
            conds.append(
                or_(
                    *(
                        col.ilike(like, escape="\\")
                        for col in (
                            a.action,
                            a.entity_id,
                            a.reason,
                            a.actor,
                            a.before,
                            a.after,
                            a.run_id,
                        )
                    )
                )
            )
        limit = max(1, min(limit, MAX_PAGE))
        stmt = (
            audit_with_source()
            .where(*[c for c in conds if c is not None])
            .order_by(a.sequence.desc())
            .limit(limit + 1)
        )
        rows = self.j.read(lambda c: c.execute(stmt).all())
        items = to_models(AuditEntry, rows[:limit])
        cursor = str(items[-1].sequence) if len(rows) > limit and items else None
        return AUDIT_PAGE(items=items, next_cursor=cursor)

    def for_entity(self, entity_id: str) -> builtins.list[AuditEntry]:
        stmt = (
            audit_with_source().where(s.audit.c.entity_id == entity_id).order_by(s.audit.c.sequence)
        )
        return self.j.read(lambda c: to_models(AuditEntry, c.execute(stmt)))

    def count(self) -> int:
        stmt = select(func.max(s.audit.c.sequence))
        return self.j.read(lambda c: int(c.execute(stmt).scalar() or 0))


class Changes:
    """``since(seq)`` tells each view what changed; ``data_version`` is the cheap poll;
    ``wait(timeout)`` blocks until something may have changed (a server journal's NOTIFY)."""

    POLL_S = 0.05  # wait()'s poll of data_version on a file journal

    def __init__(self, store: Store) -> None:
        self.j = store
        self._probe: sqlite3.Connection | None = None
        self._listener: Any = None
        self._lock = threading.Lock()
        self._closed = False  # close() ran: wait() returns False and opens nothing

    def latest(self) -> int:
        stmt = select(func.max(s.changes.c.seq))
        return self.j.read(lambda c: int(c.execute(stmt).scalar() or 0))

    def since(
        self, seq: int, limit: int = 5000, *, looks: bool = False, looks_after: float | None = None
    ) -> ChangeSet:
        """The changes after ``seq``. With ``looks``, also the agents' looks, which write no
        change row: the newest (``ChangeSet.looked_at``) and, after ``looks_after`` (a
        ``looked_at`` read before), the requests looked at since (``ChangeSet.looks``); each
        a seek on the table's partial waiter index (0014u), not a scan. In one read."""
        stmt = select(s.changes).where(s.changes.c.seq > seq).order_by(s.changes.c.seq).limit(limit)

        def q(conn: Any) -> ChangeSet:
            rows = to_models(Change, conn.execute(stmt))
            until = rows[-1].seq if rows else seq
            if not looks:
                return ChangeSet(since=seq, until=until, changes=rows)
            newest, found = _looks(conn, looks_after)
            return ChangeSet(since=seq, until=until, changes=rows, looked_at=newest, looks=found)

        return self.j.read(q)

    def data_version(self) -> int:
        """SQLite's PRAGMA data_version on one long-lived probe connection (no open
        transaction, so it never pins a WAL snapshot). Changes when another connection commits.
        On a server journal: made of the newest change seq (every write adds change rows)
        and the newest agent look (a wait's stamp adds none, and sends no notification), so it
        changes on either; compare it for equality only."""
        if self.j.server:
            return self.j.read(_server_version)
        with self._lock:
            return self._probe_version()

    def _probe_version(self) -> int:
        """``data_version`` on the probe (opened on first use); the caller holds the lock."""
        if self._probe is None:
            from proctor.core.storage.db import _connect

            assert isinstance(self.j.path, Path)
            self._probe = _connect(self.j.path, True, self.j.busy_timeout)
        return int(self._probe.execute("PRAGMA data_version").fetchone()[0])

    def _version_unless_closed(self) -> int | None:
        with self._lock:
            return None if self._closed else self._probe_version()

    def wait(self, timeout: float) -> bool:
        """Block until a write may have committed since the last call, at most ``timeout``
        seconds: True if one did (or may have: a caller still reads ``since`` to know),
        False on timeout. A server journal wakes on its NOTIFY; a file journal polls
        ``data_version``. A poll of ``since`` stays the safety net either way. Once the
        journal is closed: False at once, and no connection is opened."""
        if self.j.server:
            with self._lock:
                if self._closed:
                    return False
                if self._listener is None:
                    from proctor.core.storage.pg import Listener, ServerAddress

                    assert isinstance(self.j.path, ServerAddress)
                    self._listener = Listener(self.j.path)
                listener = self._listener
            return listener.wait(timeout)
        start = self._version_unless_closed()
        deadline = time.monotonic() + timeout
        while start is not None:
            now = self._version_unless_closed()
            if now is None:
                break
            if now != start:
                return True
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            time.sleep(min(self.POLL_S, left))
        return False

    @property
    def closed(self) -> bool:
        """close() ran (the journal is closed)."""
        return self._closed

    def close(self) -> None:
        """The journal is closed: drop the connections; ``wait`` never opens one again."""
        with self._lock:
            self._closed = True
        self.reset()

    def reset(self) -> None:
        """Drop the probe and listener connections (the next use opens them afresh)."""
        with self._lock:
            if self._probe is not None:
                self._probe.close()
                self._probe = None
            if self._listener is not None:
                self._listener.close()
                self._listener = None


__all__ = ["Audit", "Changes", "audit_source", "audit_with_source", "decision_sources", "to_model"]


LOOKS_MAX = 500  # looks reported per read (more: the newest of them, the rest next read)
LOOKED = ((ChangeKind.APPROVAL, s.approvals), (ChangeKind.QUESTION, s.questions))


def _looks(conn: Any, after: float | None) -> tuple[float | None, list[tuple[ChangeKind, str]]]:
    """The newest agent look (max ``waiter_seen_at``) and, after ``after``, the requests
    looked at since, newest last. Each a seek on the table's partial waiter index."""
    newest: float | None = None
    looks: list[tuple[ChangeKind, str]] = []
    for kind, table in LOOKED:
        seen = table.c.waiter_seen_at
        top = conn.execute(select(func.max(seen)).where(seen.is_not(None))).scalar()
        if top is None:
            continue
        newest = top if newest is None else max(newest, top)
        if after is not None and top > after:
            ids = conn.execute(
                select(table.c.id).where(seen > after).order_by(seen).limit(LOOKS_MAX)
            ).scalars()
            looks.extend((kind, i) for i in ids)
    return newest, looks


def _server_version(conn: Any) -> int:
    """A server journal's data version: its newest change seq and newest look, as one int."""
    seq = int(conn.execute(select(func.max(s.changes.c.seq))).scalar() or 0)
    newest, _ = _looks(conn, None)
    return seq if newest is None else hash((seq, newest))
