"""Journal.open: the one entry point, the services an open journal offers, and (re-exported
for compatibility) the unit of work every service writes through (``core/storage/tx.py``)."""

from __future__ import annotations

import getpass
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from proctor.core.aliases import RetiredAttributes
from proctor.core.approvals.service import Approvals
from proctor.core.assignments.service import Assignments
from proctor.core.audit.overview import Overview
from proctor.core.audit.service import Audit, Changes
from proctor.core.decisions.views import Signatures
from proctor.core.effects.service import Effects
from proctor.core.inbox.service import Inbox
from proctor.core.memory.service import Memory
from proctor.core.policies import views as policy_views
from proctor.core.policies.service import Policies
from proctor.core.questions.service import Questions
from proctor.core.runs.service import Runs
from proctor.core.storage import db, pg
from proctor.core.storage.db import SCHEMA_HEAD as SCHEMA_HEAD  # the newest revision
from proctor.core.storage.store import OldSchemaPolicy, Store
from proctor.core.storage.tx import LAST_AUDIT, Tx, audit_digest_body, event_digest_body

from . import errors
from .models import Actor


class Journal(Store, RetiredAttributes):
    """An open journal. Thread-safe: every public call runs in its own transaction."""

    def __init__(
        self,
        path: Path | pg.ServerAddress,
        actor: Actor,
        *,
        read_only: bool,
        clock: Callable[[], float],
        id_seed: int | None,
        busy_timeout: float,
        synchronous: db.Synchronous = "FULL",
        signer: Any = None,
        trust: Any = None,
        autocheckpoint: bool = True,
        lock_wait: db.LockWait | None = None,
    ) -> None:
        super().__init__(
            path,
            actor,
            read_only=read_only,
            clock=clock,
            id_seed=id_seed,
            busy_timeout=busy_timeout,
            synchronous=synchronous,
            signer=signer,
            trust=trust,
            autocheckpoint=autocheckpoint,
            lock_wait=lock_wait,
        )
        self.lost_tail: Any = None  # a witness.LostTail found at open
        self.trust_warning: str | None = None  # decisions.trust.untrusted_warning at open
        self.runs: Runs = Runs(self)
        self.approvals: Approvals = Approvals(self)
        self.questions: Questions = Questions(self)
        self.memory: Memory = Memory(self)
        self.effects: Effects = Effects(self)
        self.inbox: Inbox = Inbox(self, views=policy_views)
        self.audit: Audit = Audit(self)
        self.changes: Changes = Changes(self)
        self.overview: Overview = Overview(self)
        self.signatures: Signatures = Signatures(self)
        self.policies: Policies = Policies(self)
        self.assignments: Assignments = Assignments(self)

    # ------------------------------------------------------------ opening
    @classmethod
    def open(
        cls,
        url_or_path: str | os.PathLike[str],
        *,
        actor: Actor | str | None = None,
        read_only: bool = False,
        create: bool = True,
        on_old_schema: OldSchemaPolicy = "migrate",
        clock: Callable[[], float] | None = None,
        id_seed: int | None = None,
        busy_timeout: float = db.BUSY_TIMEOUT_S,
        synchronous: db.Synchronous = "FULL",
        signer: Any = None,
        trust: Any = None,
        autocheckpoint: bool = True,
        lock_poll: float | None = db.LOCK_POLL_S,
        lock_patience: float = db.LOCK_PATIENCE_S,
    ) -> Journal:
        """Open (or create) the journal at ``url_or_path``: a file's path (or sqlite:///
        URL), or a PostgreSQL server journal, ``postgresql+psycopg://user:pw@host:port/db``
        (team mode: the database must exist; its schema is created or upgraded here).

        ``signer``: an ``OperatorKey`` (proctor.core.decisions.keys) that signs every decision this
        operator makes. ``trust``: whom to trust (a trusted-operators file's path, a
        ``Trust``, or its document); None reads ``PROCTOR_TRUSTED_OPERATORS``. With trust,
        agent-side calls refuse any decision not signed by a trusted operator
        (``DecisionUnverified``); an unreadable or empty trust source trusts no one.

        ``synchronous="NORMAL"`` skips the fsync of each commit (WAL still never corrupts, but
        the last commits before a power loss may be gone): only for journals that can be
        rebuilt, such as a demo or benchmark journal being built. Everything else keeps FULL.

        ``autocheckpoint=False``: this process's commits never copy the -wal into the file
        (SQLite does that inside whichever commit takes the -wal past 1,000 pages); the caller
        runs ``checkpoint()`` when it suits it. The desk does, off the path of a click.

        ``lock_poll``, ``lock_patience`` (seconds): how a write waits for another process's
        write lock. It first sleeps ``lock_patience`` in SQLite's busy handler (which sleeps
        1, 2, 5, 10, 15, 20, 25, ... 100 ms between tries: cheap, but a lock freed just
        after a try is seen that late, and behind writers that never pause one waiter can
        lose every turn until its busy timeout), then tries every ``lock_poll``, so a long
        waiter gets its turn. Defaults 0.0005 and 0.1; the desk passes 0.0005 and 0: an
        operator's click gets the lock as soon as the agent holding it commits.
        ``lock_poll=None`` keeps SQLite's busy handler only. A file journal only.
        """
        path = db.location_from_url(url_or_path)
        if isinstance(actor, str):
            actor = Actor.operator(actor)
        actor = actor or Actor.operator(default_operator_name())
        if isinstance(path, pg.ServerAddress):
            return cls._open_on_server(
                path,
                actor,
                read_only=read_only,
                create=create,
                on_old_schema=on_old_schema,
                clock=clock,
                id_seed=id_seed,
                busy_timeout=busy_timeout,
                synchronous=synchronous,
                signer=signer,
                trust=trust,
            )
        db.check_openable(path, read_only=read_only, create=create)
        try:
            if not read_only:
                created = db.prepare_file(path)
                if created:
                    db.enable_wal(path, busy_timeout)
            from proctor.core.decisions.trust import resolve_trust, untrusted_warning

            journal = cls(
                path,
                actor,
                read_only=read_only,
                clock=clock or time.time,
                id_seed=id_seed,
                busy_timeout=busy_timeout,
                synchronous=synchronous,
                signer=signer,
                trust=resolve_trust(trust),
                autocheckpoint=autocheckpoint,
                lock_wait=None if lock_poll is None else db.LockWait(lock_poll, lock_patience),
            )
            try:
                journal._check_schema(on_old_schema)
            except BaseException:
                journal.close()
                raise
            from proctor.core.audit.witness import check

            # changes a desk saw that the journal lost (its -wal deleted): never raises
            journal.lost_tail = check(journal)
            journal.trust_warning = untrusted_warning(journal)
        except errors.StoreError as err:
            if isinstance(err, errors.Corrupt) and not isinstance(err, errors.NotAJournal):
                db.check_header(path)  # SQLite refused it: is it a database file at all?
            if str(path) in err.message:
                raise
            raise type(err)(f"{path}: {err.message}", hint=err.hint, **err.details) from err
        return journal

    @classmethod
    def _open_on_server(
        cls,
        where: pg.ServerAddress,
        actor: Actor,
        *,
        read_only: bool,
        create: bool,
        on_old_schema: OldSchemaPolicy,
        clock: Callable[[], float] | None,
        id_seed: int | None,
        busy_timeout: float,
        synchronous: db.Synchronous,
        signer: Any,
        trust: Any,
    ) -> Journal:
        """``open`` for a server journal: no file to check, prepare or witness (the server
        keeps its own files; a desk's witness is of a file's lost -wal)."""
        from proctor.core.decisions.trust import resolve_trust, untrusted_warning

        try:
            journal = cls(
                where,
                actor,
                read_only=read_only,
                clock=clock or time.time,
                id_seed=id_seed,
                busy_timeout=busy_timeout,
                synchronous=synchronous,
                signer=signer,
                trust=resolve_trust(trust),
            )
            try:
                if not create and not read_only:
                    journal._require_journal()
                journal._check_schema(on_old_schema)
                journal.trust_warning = untrusted_warning(journal)
            except BaseException:
                journal.close()
                raise
        except errors.StoreError as err:
            if str(where) in err.message:
                raise
            raise type(err)(f"{where}: {err.message}", hint=err.hint, **err.details) from err
        return journal

    def _require_journal(self) -> None:
        """``create=False``: an empty database is no journal yet (nothing is created)."""
        from sqlalchemy import exc

        try:
            with self._reader.connect() as conn:
                empty = db.current_revision(conn) is None and pg.is_empty(conn)
        except exc.DBAPIError as err:
            pg.raise_translated(err)
            raise
        if empty:
            raise errors.NotFound(
                f"no journal in {self.path} (the database is empty)",
                hint="Open it with create=True, or run `proctor team init`.",
            )

    def close(self) -> None:
        super().close()
        self.changes.close()

    def reconnect(self) -> None:
        """Drop pooled connections (the next call opens the journal's files afresh)."""
        super().reconnect()
        self.changes.reset()

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def default_operator_name() -> str:
    try:
        return os.environ.get("PROCTOR_OPERATOR") or getpass.getuser()
    except (KeyError, OSError):
        return "operator"


__all__ = [
    "LAST_AUDIT",
    "Journal",
    "OldSchemaPolicy",
    "Tx",
    "audit_digest_body",
    "default_operator_name",
    "event_digest_body",
]
