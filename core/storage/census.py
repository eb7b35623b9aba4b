"""The census: every column of every journal table, classed by what may happen to it once
written (issue 31). The data is plain: the classes and rules in core/storage/census_rules.py,
every column's entry in core/storage/census_table.py, both re-exported here; this module
renders the rules as the triggers that enforce them (``checks``, used by
``db.census_trigger_sql``, ``pg.census_trigger_sql``, schema 0009b), and a test generated from
the schema fails when a column has no entry.

Four classes:

- ``identity``: what the row is; never changes once written (a trigger refuses any UPDATE
  of it; on the evidence tables every column is identity and the row refuses UPDATE whole).
- ``state``: moves only as its rule says, each rule a trigger on both stores:
  ``moves`` (the status: only along ``MOVES``), ``once`` (NULL, then set once, never changed
  or cleared), ``up`` (never steps back), ``decision`` (set in the one UPDATE that moves the
  row out of its open state, with its decision, never afterwards), ``with_move`` (changes
  only in an UPDATE that also moves the status), ``with_version`` (changes only in an UPDATE
  that steps ``version`` up: a memory entry's fields, whose history is its mutation chain).
- ``derived``: recomputed from other rows by ``proctor verify`` (a run's head from its event
  chain), which names a row that disagrees.
- ``free``: live metadata nothing relies on for a decision (snoozes, leases, timestamps of
  the last write, use counts); a same-user process can change it, and that is all it does.
"""

from __future__ import annotations

from dataclasses import dataclass

from .census_rules import (  # noqa: F401 - re-exported: callers import these from here
    AGENT_FIRST_WRITES,
    AGENT_MOVES,
    ALONG,
    DECIDER,
    DECISION,
    HELD,
    HELD_BY_CLOCK,
    ID,
    MOVES,
    MOVES_,
    ONCE,
    OPEN,
    RETRY,
    SNOOZE,
    TOUCHED,
    UNDO,
    UNDO_BY_CLOCK,
    UP,
    WAITER,
    WITH_EVENT,
    WITH_MOVE,
    WITH_VERSION,
    Entry,
    Kind,
    Rule,
    derived,
    free,
)
from .census_table import (
    CENSUS,
    SERVER_ONLY,
    UNGUARDED,
    WHOLE_ROW,
    columns,
)


@dataclass(frozen=True)
class Dialect:
    """How a store writes "differs" and "false": SQLite's ``IS NOT`` and 0, PostgreSQL's
    ``IS DISTINCT FROM`` and false."""

    differs: str
    false: str
    now: str  # the store's clock, in seconds since the epoch (UNDO_BY_CLOCK)


SQLITE = Dialect("IS NOT", "0", "((julianday('now') - 2440587.5) * 86400.0)")
POSTGRESQL = Dialect(
    "IS DISTINCT FROM", "false", "(extract(epoch from clock_timestamp())::double precision)"
)


@dataclass(frozen=True)
class Check:
    """One trigger: an UPDATE of ``table`` whose ``refused`` condition holds aborts."""

    name: str
    table: str
    refused: str
    message: str


def _quoted(values: tuple[str, ...]) -> str:
    return ", ".join("'" + v.replace("'", "''") + "'" for v in values)


def _changed(cols: list[str], d: Dialect) -> str:
    return " OR ".join(f"NEW.{c} {d.differs} OLD.{c}" for c in cols)


def _moves_ok(table: str, d: Dialect) -> str:
    allowed = " OR ".join(
        f"(OLD.status = '{src}' AND NEW.status IN ({_quoted(dst)}))"
        for src, dst in MOVES[table].items()
    )
    return f"COALESCE(({allowed}), {d.false})"


def checks(d: Dialect, already: dict[str, set[str]] | None = None) -> list[Check]:
    """The census's triggers (schema 0009b), one per table and rule. ``already``: identity
    columns older triggers guard (not guarded twice)."""
    out = []
    for table in CENSUS:
        if table in WHOLE_ROW or table in UNGUARDED:
            continue
        ident = [
            c
            for c in columns(table, kind="identity")
            if c not in (already or {}).get(table, set()) and (table, c) not in SERVER_ONLY
        ]
        if ident:
            out.append(
                Check(
                    f"trg_{table}_census_identity",
                    table,
                    _changed(ident, d),
                    f"{table} identity columns are immutable",
                )
            )
        once = columns(table, rule="once")
        if once:
            cond = " OR ".join(
                f"(OLD.{c} IS NOT NULL AND NEW.{c} {d.differs} OLD.{c})" for c in once
            )
            out.append(
                Check(
                    f"trg_{table}_once",
                    table,
                    cond,
                    f"{table}: {', '.join(once)} are set once and never changed or cleared",
                )
            )
        up = columns(table, rule="up")
        if up:
            cond = " OR ".join(
                f"(OLD.{c} IS NOT NULL AND (NEW.{c} IS NULL OR NEW.{c} < OLD.{c}))" for c in up
            )
            out.append(
                Check(
                    f"trg_{table}_no_step_back",
                    table,
                    cond,
                    f"{table}: {', '.join(up)} never step back",
                )
            )
        if table in MOVES:
            out.append(
                Check(
                    f"trg_{table}_moves",
                    table,
                    f"NEW.status {d.differs} OLD.status AND NOT {_moves_ok(table, d)}",
                    f"{table} status moves only along its state machine",
                )
            )
        if table in DECIDER:
            undo = (
                [(a, UNDO[table][1]) for a in UNDO[table][0]] if table in UNDO else []
            )  # an undo clears the decider: its own decision row names who undid it
            agent_moves = (
                " OR ".join(
                    f"(OLD.status = '{a}' AND NEW.status = '{b}')"
                    for a, b in sorted(AGENT_MOVES[table]) + undo
                )
                or d.false
            )
            out.append(
                Check(
                    f"trg_{table}_decider",
                    table,
                    f"NEW.status {d.differs} OLD.status AND NEW.{DECIDER[table]} IS NULL "
                    f"AND NOT COALESCE(({agent_moves}), {d.false})",
                    f"{table}: a person's decision names who made it ({DECIDER[table]})",
                )
            )
        for a, b in ALONG.get(table, ()):
            same = "IS NOT DISTINCT FROM" if d is POSTGRESQL else "IS"
            out.append(
                Check(
                    f"trg_{table}_{a}_along",
                    table,
                    f"NEW.{a} {d.differs} OLD.{a} AND NEW.{b} {same} OLD.{b}",
                    f"{table}: {a} changes only with {b}",
                )
            )
        if table in WITH_EVENT:
            head = WITH_EVENT[table]
            out.append(
                Check(
                    f"trg_{table}_status_with_event",
                    table,
                    f"NEW.status {d.differs} OLD.status AND NOT COALESCE(NEW.{head} > OLD.{head}, "
                    f"{d.false})",
                    f"{table} status moves only with its event",
                )
            )
        if table in UNDO:
            sources, to, hold = UNDO[table]
            cleared = " AND ".join(f"NEW.{c} IS NULL" for c in columns(table, rule="decision"))
            used = HELD[table][0]
            clock = f" AND OLD.{hold} > {d.now}" if table in UNDO_BY_CLOCK else ""
            out.append(
                Check(
                    f"trg_{table}_undo",
                    table,
                    f"COALESCE(OLD.status IN ({_quoted(sources)}) AND NEW.status = '{to}', "
                    f"{d.false}) AND NOT COALESCE(OLD.{used} IS NULL AND OLD.{hold} IS "
                    f"NOT NULL{clock} AND NEW.version = OLD.version + 1 AND {cleared}, "
                    f"{d.false})",
                    f"{table}: a decision is undone only within its hold, before it is "
                    + ("taken" if used == "taken_at" else "consumed")
                    + ", clearing the decision, as a version of its own",
                )
            )
        if table in HELD:
            used, hold = HELD[table]
            passed = f" AND {d.now} >= OLD.{hold}" if table in HELD_BY_CLOCK else ""
            out.append(
                Check(
                    f"trg_{table}_held",
                    table,
                    f"OLD.{used} IS NULL AND NEW.{used} IS NOT NULL AND OLD.{hold} IS NOT NULL "
                    f"AND NOT COALESCE(NEW.{used} >= OLD.{hold}{passed}, {d.false})",
                    f"{table}: a decision is not "
                    + ("taken" if used == "taken_at" else "consumed")
                    + f" before its hold ends ({hold})",
                )
            )
        if table in RETRY:
            final, asked, attempt = RETRY[table]
            out.append(
                Check(
                    f"trg_{table}_retry",
                    table,
                    f"OLD.status = '{final}' AND NEW.status {d.differs} OLD.status AND NOT "
                    f"COALESCE(OLD.{asked} > OLD.{attempt} AND NEW.{attempt} = OLD.{asked}, "
                    f"{d.false})",
                    f"{table}: a {final} run moves again only as the retry an operator asked "
                    f"for, starting the attempt it names ({asked})",
                )
            )
        decided = columns(table, rule="decision")
        if decided:
            opened = _quoted(OPEN[table])
            leaves = (
                f"COALESCE(OLD.status IN ({opened}) AND NEW.status NOT IN ({opened}), {d.false})"
            )
            if table in UNDO:  # the undo clears them (trg_*_undo checks the rest)
                sources, to, _hold = UNDO[table]
                cleared = " AND ".join(f"NEW.{c} IS NULL" for c in decided)
                leaves = (
                    f"({leaves} OR COALESCE(OLD.status IN ({_quoted(sources)}) AND "
                    f"NEW.status = '{to}' AND {cleared}, {d.false}))"
                )
            out.append(
                Check(
                    f"trg_{table}_decision",
                    table,
                    f"({_changed(decided, d)}) AND NOT {leaves}",
                    f"{table}: {', '.join(decided)} are written once, with the decision",
                )
            )
        moved = columns(table, rule="with_move")
        if moved:
            out.append(
                Check(
                    f"trg_{table}_with_move",
                    table,
                    f"({_changed(moved, d)}) AND NEW.status IS NOT DISTINCT FROM OLD.status"
                    if d is POSTGRESQL
                    else f"({_changed(moved, d)}) AND NEW.status IS OLD.status",
                    f"{table}: {', '.join(moved)} change only with a status move",
                )
            )
        versioned = columns(table, rule="with_version")
        if versioned:
            out.append(
                Check(
                    f"trg_{table}_with_version",
                    table,
                    f"({_changed(versioned, d)}) AND NOT COALESCE(NEW.version > OLD.version, "
                    f"{d.false})",
                    f"{table}: {', '.join(versioned)} change only with a new version "
                    "(and its mutation)",
                )
            )
    return out


__all__ = [
    "AGENT_FIRST_WRITES",
    "AGENT_MOVES",
    "ALONG",
    "CENSUS",
    "DECIDER",
    "HELD",
    "HELD_BY_CLOCK",
    "MOVES",
    "OPEN",
    "RETRY",
    "SERVER_ONLY",
    "UNDO",
    "UNDO_BY_CLOCK",
    "WITH_EVENT",
    "Entry",
    "checks",
    "columns",
]
