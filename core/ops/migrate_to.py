"""`proctor migrate-to URL`: copy a whole journal into another (a file into a server) and
verify it on arrival.

Every row of every table is copied as it is stored — ids, times, sequences, JSON text,
digests and signatures byte for byte — in one write transaction on the target, from one
read transaction on the source (a consistent snapshot). The target must be a journal with
nothing in it (a fresh ``Journal.open`` or ``proctor team init``): anything else is
refused and nothing is written. The target takes the source's journal id (every signature
names it), the one row a fresh journal already has. Then the target is verified as
``proctor verify`` does (every run's event chain, the audit chain, every digest and
signature) and the rows of each table are counted on both sides.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Table, exc, func, insert, select, text, tuple_

from proctor.core import errors
from proctor.core.journal import Journal
from proctor.core.models import Frozen, VerifyReport
from proctor.core.storage import schema as s
from proctor.core.storage.tx import Tx

PAGE = 2000
META = s.journal_meta.name


class MigrateReport(Frozen):
    rows: dict[str, int]  # table -> rows copied
    verify: VerifyReport
    journal_id: str | None

    @property
    def ok(self) -> bool:
        return self.verify.ok


def copied_tables() -> list[Table]:
    """The journal's tables in an order every foreign key allows (journal_meta apart)."""
    return [t for t in s.metadata.sorted_tables if t.name != META]


def order_of(table: Table) -> list[Any]:
    """A stable order for paging (runs: then put parents first, _copy_runs)."""
    if table.name == "runs":
        return [table.c.created_at, table.c.id]
    return list(table.primary_key.columns)


def migrate_to(source: Journal, target: Journal, *, trust: Any = None) -> MigrateReport:
    """Copy ``source`` into the empty ``target``; verify the target (``trust``: as
    ``verify`` takes it — then every decision's signature is checked too). Raises NotAllowed
    for a target with rows in it or a schema other than the source's."""
    if source.schema_revision != target.schema_revision:
        raise errors.NotAllowed(
            f"the source journal is at schema {source.schema_revision} and the target at "
            f"{target.schema_revision}",
            hint="Upgrade the older one first (`proctor verify --migrate` or opening it with "
            "this Proctor); nothing was copied.",
        )
    counts: dict[str, int] = {}
    journal_id: list[str | None] = [None]

    def op(tx: Tx) -> None:
        refuse_non_empty(tx.conn)
        source.read(lambda src: _copy(src, tx.conn, counts, journal_id))

    target.write(op)
    from proctor.core.audit.verify import verify

    report = verify(target, trust=trust)
    arrived = target.read(lambda conn: _counts(conn))
    missing = {
        name: (n, arrived.get(name, 0)) for name, n in counts.items() if arrived.get(name, 0) != n
    }
    if missing:
        raise errors.Corrupt(
            f"the copy is incomplete: {missing} (table: copied, found)",
            hint="Drop the target database and run migrate-to again.",
        )
    return MigrateReport(rows=counts, verify=report, journal_id=journal_id[0])


def refuse_non_empty(conn: Any) -> None:
    """NotAllowed when any table of the target holds a row (a fresh journal's own id apart)."""
    for table in copied_tables():
        if conn.execute(select(table).limit(1)).first() is not None:
            raise errors.NotAllowed(
                f"the target journal is not empty: its {table.name} table has rows",
                hint="migrate-to copies into a new, empty journal only; nothing was copied.",
            )
    others = conn.execute(
        select(func.count()).select_from(s.journal_meta).where(s.journal_meta.c.key != "journal_id")
    ).scalar_one()
    if others:
        raise errors.NotAllowed(
            "the target journal is not empty: it has journal facts",
            hint="migrate-to copies into a new, empty journal only; nothing was copied.",
        )


def _copy(src: Any, dst: Any, counts: dict[str, int], journal_id: list[str | None]) -> None:
    from proctor.core.storage import assign_sql, policy_sql

    guarded = any(
        src.execute(select(t).limit(1)).first() is not None
        for t in (s.approval_steps, s.group_changes)
    )
    if guarded:  # a copy inserts decided steps: the guards are made again below, in this tx
        policy_sql.drop_copy_guards(dst)
    assigned = src.execute(select(s.assignments).limit(1)).first() is not None
    if assigned:  # likewise an assignment before its decision (0016a)
        assign_sql.drop_copy_guards(dst)
    for table in copied_tables():
        counts[table.name] = _copy_table(src, dst, table)
    if guarded:
        policy_sql.create_copy_guards(dst)
    if assigned:
        assign_sql.create_copy_guards(dst)
    meta = {r.key: r.value for r in src.execute(select(s.journal_meta))}
    journal_id[0] = meta.pop("journal_id", None)
    if journal_id[0] is not None:
        replace_journal_id(dst, journal_id[0])
    for key, value in meta.items():
        dst.execute(insert(s.journal_meta).values(key=key, value=value))
    if dst.dialect.name == "postgresql":  # the change feed's sequence goes on after the copy
        dst.execute(
            text(
                "SELECT setval(pg_get_serial_sequence('changes', 'seq'), "
                "(SELECT coalesce(max(seq), 0) + 1 FROM changes), false)"
            )
        )


def _copy_table(src: Any, dst: Any, table: Table) -> int:
    """Every row of ``table``, page by page (keyset on the order columns); a row the target
    refuses (a foreign key, a trigger) is a Corrupt, not the driver's error."""
    try:
        if table.name == "runs":
            return _copy_runs(src, dst, table)
        return _copy_pages(src, dst, table)
    except exc.IntegrityError as err:
        raise errors.Corrupt(
            f"the target refused a row of {table.name}: {err.orig}",
            hint="Nothing was copied; run `proctor verify` on the source.",
        ) from err


def _copy_runs(src: Any, dst: Any, table: Table) -> int:
    """Runs parents first, whatever their times say (a clock may have set a child's
    created_at before its parent's): by depth in the parent chain, then (created_at, id)."""
    heads = src.execute(select(table.c.id, table.c.parent_run_id).order_by(*order_of(table))).all()
    parent = {r.id: r.parent_run_id for r in heads}
    depth: dict[str, int] = {}
    for run_id in parent:
        chain, at = [], run_id
        while at is not None and at not in depth and at not in chain:
            chain.append(at)
            at = parent.get(at)
        base = depth.get(at, -1) if at is not None else -1
        for n, link in enumerate(reversed(chain), start=1):
            depth[link] = base + n
    ordered = sorted(parent, key=lambda run_id: depth[run_id])  # stable: (created_at, id)
    for start in range(0, len(ordered), PAGE):
        ids = ordered[start : start + PAGE]
        rows = {
            r.id: dict(r._mapping) for r in src.execute(select(table).where(table.c.id.in_(ids)))
        }
        dst.execute(insert(table), [rows[run_id] for run_id in ids])
    return len(ordered)


def _copy_pages(src: Any, dst: Any, table: Table) -> int:
    order = order_of(table)
    copied, last = 0, None
    while True:
        stmt = select(table).order_by(*order).limit(PAGE)
        if last is not None:
            stmt = stmt.where(tuple_(*order) > tuple_(*last))
        rows = src.execute(stmt).all()
        if not rows:
            return copied
        dst.execute(insert(table), [dict(r._mapping) for r in rows])
        copied += len(rows)
        last = [getattr(rows[-1], c.name) for c in order]


def replace_journal_id(conn: Any, value: str) -> None:
    """Give the (empty) target the source's journal id. The row refuses UPDATE by trigger
    (0005s): the copy lifts that trigger for this one statement, inside its transaction, and
    puts it back (the transaction commits whole or not at all)."""
    from proctor.core.storage import db

    dialect = conn.dialect.name
    name = "trg_journal_meta_no_update"
    if dialect == "sqlite":
        conn.execute(text(f"DROP TRIGGER {name}"))
        conn.execute(
            text("UPDATE journal_meta SET value = :v WHERE key = 'journal_id'"), {"v": value}
        )
        db.create_signed_triggers(conn)
    else:  # PostgreSQL: the owner copies; user triggers are off for this statement only
        conn.execute(text("ALTER TABLE journal_meta DISABLE TRIGGER USER"))
        conn.execute(
            text("UPDATE journal_meta SET value = :v WHERE key = 'journal_id'"), {"v": value}
        )
        conn.execute(text("ALTER TABLE journal_meta ENABLE TRIGGER USER"))


def _counts(conn: Any) -> dict[str, int]:
    return {
        t.name: conn.execute(select(func.count()).select_from(t)).scalar_one()
        for t in copied_tables()
    }


__all__ = ["MigrateReport", "migrate_to", "refuse_non_empty"]
