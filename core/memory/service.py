"""Agent memory: scoped entries, every change a mutation row, conflicts reconciled by a person.

The service; an entry's row update and its mutation chain are core/memory/chain.py, recording
and resolving a conflict core/memory/conflicts.py."""

from __future__ import annotations

import builtins
from collections.abc import Iterable
from typing import Any

from sqlalchemy import bindparam, func, select, update

from proctor.core import errors
from proctor.core.aliases import RetiredAttributes
from proctor.core.decisions.deciders import (
    refuse_requester,
    requesters_of_entry,
)
from proctor.core.models import (
    ActorKind,
    BulkResult,
    ChangeKind,
    Conflict,
    ConflictStatus,
    MemoryEntry,
    MemoryMutation,
    MemoryScope,
    Origin,
    Page,
    Trust,
)
from proctor.core.storage import schema as s
from proctor.core.storage.rows import (
    as_written,
    conflict_select,
    fetch_one,
    one_where,
    to_model,
    to_models,
)
from proctor.core.storage.sql import (
    Prepared,
    insert_rows,
    row_class,
)
from proctor.core.storage.store import Store
from proctor.core.storage.tx import Tx

from . import conflicts
from .chain import (  # noqa: F401 - MAX_CONTENT, content_hash: re-exported (defined here before)
    MAX_CONTENT,
    apply,
    check_content,
    content_hash,
    entry_row,
    replayed,
    write_mutation,
)

# Trust only a person gives: an agent never adds an entry with it.
PERSON_TRUST = (Trust.USER_CONFIRMED, Trust.OPERATOR_EDITED)
# What an agent may not do to an entry a person confirmed (it records a conflict instead).
AGENT_BARRED = ("replace", "remove", "restore")
AGENT_BARRED_HINT = "Record a conflict with the new version; a person reconciles it."


def agent_barred(entry: Any, operation: str) -> str:
    """Why an agent may not ``operation`` ("replace", "remove", "restore") ``entry`` (a
    MemoryEntry, or its row), or "" when it may. The store's rule, asked by the store on
    each agent write and by the desk before it offers a person a choice an agent would then
    be refused (a memory change review's "Accept the change")."""
    if entry.confirmed and operation in AGENT_BARRED:
        return f"memory entry {entry.id} is confirmed by a person; an agent cannot {operation} it"
    return ""


USE_BATCH = 500  # ids per UPDATE in mark_used (well under SQLite's bind limit)


# The entry with its chain head (the digest ``LAST_MUTATION`` reads) in the same statement,
# alone or beside its run's head: a change reads what it links its mutation to once.
_HEAD = (
    select(s.memory_mutations.c.digest)
    .where(s.memory_mutations.c.entry_id == s.memory_entries.c.id)
    .order_by(s.memory_mutations.c.version.desc())
    .limit(bindparam("one", 1))
    .scalar_subquery()
)
ENTRY_WITH_HEAD = Prepared(
    select(s.memory_entries, _HEAD.label("chain_head")).where(
        s.memory_entries.c.id == bindparam("entry_id")
    )
)
RUN_AND_ENTRY_WITH_HEAD = Prepared(
    select(
        s.runs,
        *(c.label(f"row_{c.name}") for c in s.memory_entries.columns),
        _HEAD.label("row_chain_head"),
    )
    .select_from(s.runs.outerjoin(s.memory_entries, s.memory_entries.c.id == bindparam("entry_id")))
    .where(s.runs.c.id == bindparam("run_id"))
)
_RUN_ROW = row_class([c.name for c in s.runs.columns])
_ENTRY_ROW = row_class([*(c.name for c in s.memory_entries.columns), "chain_head"])


def entry_with_head(tx: Tx, entry_id: str, run_id: str | None) -> Any:
    """The entry's row (None if there is none) with its mutation chain head (``chain_head``,
    None before its first mutation), and, when ``run_id`` names a run this transaction does
    not keep yet, that run's head read in the same statement and kept (``Tx.row_beside_run``
    for this one table)."""
    if run_id is None or not tx.may_keep_run(run_id):
        return ENTRY_WITH_HEAD.first(tx.conn, entry_id=entry_id)
    found = RUN_AND_ENTRY_WITH_HEAD.first(tx.conn, entry_id=entry_id, run_id=run_id)
    if found is None:  # no such run: whoever needs it says so
        return ENTRY_WITH_HEAD.first(tx.conn, entry_id=entry_id)
    n = len(s.runs.columns)
    tx.keep_run(_RUN_ROW._new(found[:n]))
    return _ENTRY_ROW._new(found[n:]) if found[n] is not None else None


# Sensitivities shown as they are; every other value (personal, secret, credential ...)
# is masked until the operator reveals it, and each reveal is written to the audit log.
OPEN_SENSITIVITIES = frozenset({"", "normal", "public", "internal"})


def is_sensitive(sensitivity: str | None) -> bool:
    return (sensitivity or "").strip().lower() not in OPEN_SENSITIVITIES


def entry_in(conn: Any, entry_id: str, written: dict | None = None) -> MemoryEntry:
    """The entry as ``conn`` sees it: built from ``written`` (its row as this write
    transaction last wrote it) when given, else read."""
    if written is not None:
        entry = as_written(MemoryEntry, written)
        if entry is not None:
            return entry
    return one_where(conn, MemoryEntry, s.memory_entries, f"memory entry {entry_id}", id=entry_id)


class Memory(RetiredAttributes):
    def __init__(self, store: Store) -> None:
        self.j = store

    # ------------------------------------------------------------ writes (agent and operator)
    def add(
        self,
        scope: MemoryScope | str,
        scope_key: str,
        title: str,
        content: str,
        *,
        kind: str = "fact",
        priority: int = 0,
        trust: Trust | str = Trust.AGENT_OBSERVED,
        sensitivity: str = "normal",
        run_id: str | None = None,
        idempotency_key: str | None = None,
        reason: str | None = None,
        entry_id: str | None = None,
    ) -> MemoryEntry:
        scope, trust = MemoryScope(scope), Trust(trust)
        check_content(content)
        if self.j.actor.kind == ActorKind.AGENT and trust in PERSON_TRUST:
            raise errors.NotAllowed(
                f"{self.j.actor.label} is an agent; only an operator may add memory as "
                f"{trust.value}",
                hint="Add it as agent_observed; an operator confirms it.",
            )
        request = {
            "op": "add",
            "scope": scope.value,
            "scope_key": scope_key,
            "title": title,
            "content": content,
            "kind": kind,
            "priority": priority,
            "trust": trust.value,
            "sensitivity": sensitivity,
            "run_id": run_id,
            "reason": reason,
            "entry_id": entry_id,
        }

        def op(tx: Tx) -> str:
            prior = replayed(tx, idempotency_key, request)
            if prior:
                return prior
            eid = entry_id or tx.new_id("mem")
            h = content_hash(content)
            insert_rows(
                tx.conn,
                s.memory_entries,
                [
                    dict(
                        id=eid,
                        scope=scope.value,
                        scope_key=scope_key,
                        kind=kind,
                        title=title,
                        content=content,
                        priority=priority,
                        trust=trust.value,
                        sensitivity=sensitivity,
                        pinned=False,
                        confirmed=trust == Trust.USER_CONFIRMED,
                        deleted=False,
                        version=1,
                        content_hash=h,
                        source_run_id=run_id,
                        created_at=tx.now,
                        updated_at=tx.now,
                    )
                ],
            )
            write_mutation(
                tx, eid, "add", 1, None, None, h, content, reason, run_id, idempotency_key, request
            )
            return eid

        return self.j.write_then(op, lambda tx, eid: entry_in(tx.conn, eid))

    def replace(
        self,
        entry_id: str,
        content: str,
        *,
        expected_version: int,
        title: str | None = None,
        reason: str | None = None,
        run_id: str | None = None,
        idempotency_key: str | None = None,
    ) -> MemoryEntry:
        check_content(content)
        trust = Trust.OPERATOR_EDITED if self.j.actor.kind == "operator" else None
        values: dict[str, Any] = {"content": content, "content_hash": content_hash(content)}
        if title is not None:
            values["title"] = title
        if trust is not None:
            values["trust"] = trust.value
        return self._change(
            entry_id,
            "replace",
            expected_version,
            values,
            reason,
            run_id,
            idempotency_key,
            {"content": content, "title": title},
        )

    def remove(
        self,
        entry_id: str,
        *,
        expected_version: int,
        reason: str | None = None,
        idempotency_key: str | None = None,
    ) -> MemoryEntry:
        return self._change(
            entry_id,
            "remove",
            expected_version,
            {"deleted": True},
            reason,
            None,
            idempotency_key,
            {},
            need_live=True,
        )

    def restore(
        self,
        entry_id: str,
        *,
        expected_version: int,
        reason: str | None = None,
        idempotency_key: str | None = None,
    ) -> MemoryEntry:
        return self._change(
            entry_id,
            "restore",
            expected_version,
            {"deleted": False},
            reason,
            None,
            idempotency_key,
            {},
            need_deleted=True,
        )

    def confirm(
        self,
        entry_id: str,
        *,
        expected_version: int,
        reason: str | None = None,
        idempotency_key: str | None = None,
    ) -> MemoryEntry:
        """Only an operator confirms, and never one whose name is an agent that wrote the
        entry (the requester rule, ``core.deciders``)."""
        self.j.require_operator()
        return self._change(
            entry_id,
            "confirm",
            expected_version,
            {"confirmed": True, "trust": Trust.USER_CONFIRMED.value},
            reason,
            None,
            idempotency_key,
            {},
        )

    def pin(
        self,
        entry_id: str,
        pinned: bool = True,
        *,
        expected_version: int,
        reason: str | None = None,
        idempotency_key: str | None = None,
    ) -> MemoryEntry:
        op = "pin" if pinned else "unpin"
        return self._change(
            entry_id, op, expected_version, {"pinned": pinned}, reason, None, idempotency_key, {}
        )

    def _change(
        self,
        entry_id: str,
        operation: str,
        expected_version: int,
        values: dict,
        reason: str | None,
        run_id: str | None,
        idempotency_key: str | None,
        extra: dict,
        need_live: bool = False,
        need_deleted: bool = False,
    ) -> MemoryEntry:
        request = {
            "op": operation,
            "entry_id": entry_id,
            "expected_version": expected_version,
            "reason": reason,
            "run_id": run_id,
            **extra,
        }

        def op(tx: Tx) -> dict | None:
            if replayed(tx, idempotency_key, request):
                return None
            row = entry_with_head(tx, entry_id, run_id)
            if row is None:
                raise errors.NotFound(f"memory entry {entry_id} does not exist")
            if row.version != expected_version:
                raise errors.StaleVersion(
                    f"memory entry {entry_id} is at version {row.version}, "
                    f"you saw {expected_version}"
                )
            if need_live and row.deleted:
                raise errors.InvalidTransition(f"memory entry {entry_id} is already removed")
            if need_deleted and not row.deleted:
                raise errors.InvalidTransition(f"memory entry {entry_id} is not removed")
            if operation == "confirm":
                refuse_requester(
                    tx,
                    requesters_of_entry(tx.conn, row),
                    verb="confirm",
                    what=f"memory entry {entry_id}",
                )
            barred = agent_barred(row, operation) if tx.actor.kind == ActorKind.AGENT else ""
            if barred:
                raise errors.NotAllowed(barred, hint=AGENT_BARRED_HINT)
            written = apply(tx, row, operation, values, reason, run_id, idempotency_key, request)
            if tx.actor.kind == "operator":
                tx.audit(
                    f"memory.{operation}",
                    "memory",
                    entry_id,
                    run_id=run_id,
                    before={"version": row.version, "hash": row.content_hash},
                    after={"version": row.version + 1},
                    reason=reason,
                )
            return written

        return self.j.write_then(op, lambda tx, row: entry_in(tx.conn, entry_id, row))

    # ------------------------------------------------------------ conflicts
    def record_conflict(
        self,
        entry_id: str,
        incoming_content: str,
        *,
        incoming_source: str,
        run_id: str | None = None,
        local_version: int | None = None,
        incoming_kind: str | None = None,
        incoming_priority: int | None = None,
        incoming_trust: Trust | str | None = None,
        incoming_sensitivity: str | None = None,
        origin: Origin | dict | None = None,
    ) -> Conflict:
        """Two versions of one entry disagree: park the incoming one for a person. The
        ``incoming_*`` fields are what the incoming version says about them (None: it does
        not carry that field); taking the incoming version applies them with its content.
        ``origin``: where the incoming version comes from (the agent's word)."""
        return self.conflict(
            conflicts.record(
                self.j,
                entry_id,
                incoming_content,
                incoming_source=incoming_source,
                run_id=run_id,
                local_version=local_version,
                incoming_kind=incoming_kind,
                incoming_priority=incoming_priority,
                incoming_trust=incoming_trust,
                incoming_sensitivity=incoming_sensitivity,
                origin=origin,
            )
        )

    def resolve(
        self,
        item_id: str,
        choice: ConflictStatus | str,
        *,
        expected_version: int,
        merged_content: str | None = None,
        reason: str | None = None,
        request_id: str | None = None,
        source: str = "desk",
    ) -> Conflict:
        """Accept local / accept incoming / merged / dismiss: the mutation and the
        resolution in one transaction. ``source`` says where the person decided (desk,
        cli, mcp…); it is kept on the decision row."""
        return self._resolve(
            item_id,
            choice,
            expected_version=expected_version,
            merged_content=merged_content,
            reason=reason,
            request_id=request_id,
            entry_version=None,
            source=source,
        )

    def resolve_seen(
        self,
        item_id: str,
        choice: ConflictStatus | str,
        *,
        expected_version: int,
        entry_version: int,
        merged_content: str | None = None,
        reason: str | None = None,
        request_id: str | None = None,
        source: str = "desk",
    ) -> Conflict:
        """``resolve``, refused with ``StaleVersion`` (nothing written) when the entry is no
        longer at ``entry_version``, the version the person reviewed the conflict against."""
        return self._resolve(
            item_id,
            choice,
            expected_version=expected_version,
            merged_content=merged_content,
            reason=reason,
            request_id=request_id,
            entry_version=entry_version,
            source=source,
        )

    def _resolve(
        self,
        item_id: str,
        choice: ConflictStatus | str,
        *,
        expected_version: int,
        merged_content: str | None,
        reason: str | None,
        request_id: str | None,
        entry_version: int | None,
        source: str,
    ) -> Conflict:
        conflicts.resolve(
            self.j,
            item_id,
            choice,
            expected_version=expected_version,
            merged_content=merged_content,
            reason=reason,
            request_id=request_id,
            entry_version=entry_version,
            source=source,
        )
        return self.conflict(item_id)

    def bulk_resolve(
        self,
        items: builtins.list[tuple[str, int]],
        choice: ConflictStatus | str,
        *,
        reason: str,
        request_id: str | None = None,
        source: str = "desk",
    ) -> builtins.list[BulkResult]:
        """Resolve each (conflict id, version the operator saw) the same way, each in its
        own transaction; a per-item result for each, in order. Merging needs one conflict at
        a time. Taking incoming is refused for a conflict whose entry moved on after the
        conflict was recorded, or whose either version is sensitive (nobody takes a version
        they could not read: review that one on its own, revealing it)."""
        self.j.require_operator()
        choice = ConflictStatus(choice)
        if choice in (ConflictStatus.MERGED, ConflictStatus.PENDING):
            raise errors.ValidationError("merging needs one conflict at a time", field="choice")
        results = []
        for item_id, version in items:
            rid = f"{request_id}:{item_id}" if request_id else None
            try:
                if choice == ConflictStatus.ACCEPTED_INCOMING:
                    item = self.conflict(item_id)
                    self._refuse_unseen(item)
                    self.resolve_seen(
                        item_id,
                        choice,
                        expected_version=version,
                        entry_version=item.local_version,
                        reason=reason,
                        request_id=rid,
                        source=source,
                    )
                else:
                    self.resolve(
                        item_id,
                        choice,
                        expected_version=version,
                        reason=reason,
                        request_id=rid,
                        source=source,
                    )
                results.append(BulkResult(id=item_id, ok=True))
            except errors.ProctorError as err:
                results.append(
                    BulkResult(id=item_id, ok=False, error=str(err), error_type=type(err).__name__)
                )
        return results

    def _refuse_unseen(self, item: Conflict) -> None:
        entry = self.get(item.entry_id)
        if is_sensitive(entry.sensitivity) or is_sensitive(item.incoming_sensitivity):
            raise errors.NotAllowed(
                f"“{item.title}” is sensitive: review it on its own (its "
                "content is hidden until you reveal it)"
            )

    def refusal(self, entry: MemoryEntry, operation: str) -> str:
        """Why this journal's actor would be refused ``operation`` on ``entry`` by the rule
        above ("" : it would not): an agent asks before it proposes a change it could not
        write. No read; the write itself checks again."""
        return agent_barred(entry, operation) if self.j.actor.kind == ActorKind.AGENT else ""

    def mark_used(self, entry_ids: Iterable[str]) -> int:
        """An agent read these entries: stamp ``last_used_at`` and count the use, in one
        transaction. A use is not a change: no version bump, no mutation row, no run event,
        no audit row; the change feed notes the entries so open desks re-sort. Raises
        ``NotFound`` (nothing written) if any id is unknown. Returns how many were marked."""
        ids = sorted(set(entry_ids))
        if not ids:
            return 0
        m = s.memory_entries.c

        def op(tx: Tx) -> int:
            done = 0
            for start in range(0, len(ids), USE_BATCH):
                chunk = ids[start : start + USE_BATCH]
                done += tx.conn.execute(
                    update(s.memory_entries)
                    .where(m.id.in_(chunk))
                    .values(last_used_at=tx.now, use_count=m.use_count + 1)
                ).rowcount
            if done != len(ids):
                raise errors.NotFound(
                    f"{len(ids) - done} of the memory entries marked used do not exist"
                )
            for eid in ids:
                tx.changed(ChangeKind.MEMORY, eid, None)
            return done

        return self.j.write(op)

    def reveal(self, entry_id: str, *, reason: str | None = None) -> MemoryEntry:
        """An operator looks at a masked (sensitive) entry: the look is audited."""
        self.j.require_operator()

        def op(tx: Tx) -> None:
            row = entry_row(tx, entry_id)
            tx.audit(
                "memory.reveal",
                "memory",
                entry_id,
                run_id=None,
                before={"version": row.version, "sensitivity": row.sensitivity},
                reason=reason,
            )

        self.j.write(op)
        return self.get(entry_id)

    # ------------------------------------------------------------ reads
    def get(self, entry_id: str) -> MemoryEntry:
        return self.j.read(lambda c: entry_in(c, entry_id))

    def list(
        self,
        *,
        scope: str | None = None,
        scope_key: str | None = None,
        include_deleted: bool = False,
        text: str | None = None,
        limit: int = 500,
    ) -> builtins.list[MemoryEntry]:
        from proctor.core.storage.paging import escape_like

        m = s.memory_entries.c
        conds = [
            c
            for c in (
                m.scope == scope if scope else None,
                m.scope_key == scope_key if scope_key else None,
                None if include_deleted else m.deleted.is_(False),
                m.content.ilike(f"%{escape_like(text)}%", escape="\\") if text else None,
            )
            if c is not None
        ]
        stmt = (
            select(s.memory_entries).where(*conds).order_by(m.updated_at.desc(), m.id).limit(limit)
        )
        return self.j.read(lambda c: to_models(MemoryEntry, c.execute(stmt)))

    def history(self, entry_id: str) -> builtins.list[MemoryMutation]:
        stmt = (
            select(s.memory_mutations)
            .where(s.memory_mutations.c.entry_id == entry_id)
            .order_by(s.memory_mutations.c.version)
        )
        return self.j.read(lambda c: to_models(MemoryMutation, c.execute(stmt)))

    def conflict(self, item_id: str) -> Conflict:
        """The conflict; for a trusting agent a resolution must be a trusted operator's
        (DecisionUnverified otherwise)."""
        stmt = conflict_select().where(s.conflicts.c.id == item_id)

        def read(conn: Any) -> Conflict:
            item = fetch_one(conn, Conflict, stmt, f"memory conflict {item_id}")
            if self.j.verifying:
                from proctor.core.decisions.checks import check_conflict

                check_conflict(
                    conn,
                    self.j.trust,
                    conn.execute(select(s.conflicts).where(s.conflicts.c.id == item_id)).first(),
                )
            return item

        return self.j.read(read)

    def conflicts(self, status: str = "pending", limit: int = 500) -> builtins.list[Conflict]:
        stmt = (
            conflict_select()
            .where(s.conflicts.c.status == status)
            .order_by(s.conflicts.c.created_at.desc())
            .limit(limit)
        )
        return self.j.read(lambda c: to_models(Conflict, c.execute(stmt)))

    def browse(
        self, query: Any = None, *, cursor: str | None = None, limit: int = 200
    ) -> Page[MemoryEntry]:
        """Filtered, sorted, keyset-paged entries (``memory_views.MemoryQuery``)."""
        from . import views as memory_views

        return memory_views.browse(self.j, query or memory_views.MemoryQuery(), cursor, limit)

    def scopes(self) -> builtins.list[Any]:
        """Per-scope counts and estimated tokens (``memory_views.ScopeUsage``)."""
        from . import views as memory_views

        return memory_views.scopes(self.j)

    def facets(self) -> dict[str, builtins.list[str]]:
        from . import views as memory_views

        return memory_views.facets(self.j)

    def count(self) -> int:
        stmt = (
            select(func.count())
            .select_from(s.memory_entries)
            .where(s.memory_entries.c.deleted.is_(False))
        )
        return self.j.read(lambda c: int(c.execute(stmt).scalar_one()))


# the names the module had before the chain and conflicts moved out
from .chain import LAST_MUTATION  # noqa: E402
from .conflicts import INCOMING_FIELDS  # noqa: E402

__all__ = ["INCOMING_FIELDS", "LAST_MUTATION", "Memory", "to_model"]
