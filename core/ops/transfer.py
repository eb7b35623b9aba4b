"""Export a run (JSON bundle, JSONL events), the run list and the audit log (CSV);
import a run into another journal with the same ids, times, sequences and digests.

The JSON bundle holds the run's rows verbatim: every column of every table, JSON text
columns parsed (``"_null"`` lists the JSON columns that were SQL NULL). ``import_run``
checks the event chain before writing, inserts everything in one transaction, and
refuses a run id that already exists. Audit rows and memory mutations are exported for
reading but not imported: the audit log is one chain per journal (the import writes its
own ``run.imported`` audit row) and memory entries belong to the whole journal.
"""

from __future__ import annotations

import csv
import datetime as dt
import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import IO, Any

from sqlalchemy import Table, exc, insert, select

from proctor.core import errors
from proctor.core.journal import Journal
from proctor.core.kernel.canonical import ZERO_DIGEST, canonical_json, chain_digest, digest_of
from proctor.core.kernel.safe_text import csv_text, json_escaped
from proctor.core.models import AuditEntry, ChangeKind, Frozen, Run, VerifyReport
from proctor.core.storage import db
from proctor.core.storage import schema as s
from proctor.core.storage.paging import RunQuery
from proctor.core.storage.rows import all_rows
from proctor.core.storage.tx import Tx, event_digest_body

FORMAT = "proctor-run"
VERSION = 1
EVENT_PAGE = 5000
INSERT_CHUNK = 2000

JSON_COLUMNS: dict[str, tuple[str, ...]] = {
    "events": ("payload",),
    "tool_calls": ("request", "result"),
    "approvals": ("action",),
    "interactions": ("request", "response_schema", "options", "response"),
    "decisions": ("decision",),
    "effects": ("action", "result"),
    "receipts": ("evidence",),
    "audit": ("before", "after"),
}
# Rows that belong to a run, in an order that satisfies the foreign keys.
RUN_TABLES: dict[str, Table] = {
    "attempts": s.attempts,
    "tool_calls": s.tool_calls,
    "approvals": s.approvals,
    "interactions": s.questions,
    "decisions": s.decisions,
    "effects": s.effects,
    "receipts": s.receipts,
    "memory_mutations": s.memory_mutations,
    "audit": s.audit,
}
IMPORTED = (
    "attempts",
    "tool_calls",
    "approvals",
    "interactions",
    "decisions",
    "effects",
    "receipts",
)
NOT_IMPORTED = {
    "memory_mutations": "memory entries belong to the whole journal",
    "audit": "the audit log is one chain per journal",
}
ORDER = {"attempts": "number", "audit": "sequence", "effects": "key"}


class ImportReport(Frozen):
    run_id: str
    events: int
    rows: dict[str, int]
    notes: list[str]
    verify: VerifyReport | None


# ---------------------------------------------------------------- rows <-> JSON


def row_to_json(table: str, row: Any) -> dict:
    data = dict(row._mapping)
    nulls = []
    for col in JSON_COLUMNS.get(table, ()):
        if data[col] is None:
            nulls.append(col)
        else:
            data[col] = json.loads(data[col])
    if nulls:
        data["_null"] = nulls
    return data


# Columns a later revision added, made from the rest of the row when an older export lacks
# them (0005: an effect's action digest is the digest of the action it carries). A filler
# returns UNFILLED when it cannot. Every other added column an older export lacks means what
# an older journal means by its absence (db.ADDED_COLUMNS: NULL, or 0): a run exported
# before 0013u has no retry asked, its approvals no hold; one before 0014u, its questions none.
UNFILLED = object()
FILLED: dict[str, dict[str, Callable[[dict], Any]]] = {
    "effects": {
        "action_digest": lambda row: digest_of(row["action"]) if "action" in row else UNFILLED
    },
}
ABSENT = {"NULL": None, db.NO_TIME: None, "0": 0}  # db.ADDED_COLUMNS' SQL -> the value


def absent_values(table: str) -> dict[str, Any]:
    """The added columns of ``table`` an older export may lack, with what their absence
    means (the ones FILLED makes from the row are not among them)."""
    made = FILLED.get(table, {})
    added = db.ADDED_COLUMNS.get(table, {})
    return {col: ABSENT[sql] for col, sql in added.items() if col not in made}


def row_from_json(table: Table, data: dict) -> dict:
    names = {c.name for c in table.columns}
    filled = {col: fill(data) for col, fill in FILLED.get(table.name, {}).items()}
    made = {c: v for c, v in filled.items() if v is not UNFILLED}
    data = {**absent_values(table.name), **made, **data}
    given = set(data) - {"_null"}
    if given != names:
        missing, unknown = sorted(names - given), sorted(given - names)
        raise errors.ValidationError(
            f"{table.name} row does not match this journal's columns "
            f"(missing {missing}, unknown {unknown})",
            field=table.name,
        )
    row = {k: v for k, v in data.items() if k != "_null"}
    nulls = set(data.get("_null") or ())
    for col in JSON_COLUMNS.get(table.name, ()):
        row[col] = None if col in nulls else canonical_json(row[col])
    return row


# ---------------------------------------------------------------- export


def _run_rows(j: Journal, run_id: str) -> tuple[dict, dict[str, list[dict]]]:
    """The run row and its rows in every table, in one read transaction."""

    def q(conn: Any) -> tuple[dict, dict[str, list[dict]]]:
        run = conn.execute(select(s.runs).where(s.runs.c.id == run_id)).first()
        if run is None:
            raise errors.NotFound(f"run {run_id} does not exist")
        tables = {}
        for name, table in RUN_TABLES.items():
            order = table.c[ORDER.get(name, "created_at")]
            extra = [table.c.id] if "id" in table.c and name != "audit" else []
            rows = conn.execute(
                select(table).where(table.c.run_id == run_id).order_by(order, *extra)
            )
            tables[name] = [row_to_json(name, r) for r in rows]
        return dict(run._mapping), tables

    return j.read(q)


def iter_event_rows(j: Journal, run_id: str, last_sequence: int) -> Iterable[dict]:
    """The run's events up to ``last_sequence`` as verbatim JSON rows, page by page."""
    e = s.events.c
    after = 0
    while after < last_sequence:
        stmt = (
            select(s.events)
            .where(e.run_id == run_id, e.sequence > after, e.sequence <= last_sequence)
            .order_by(e.sequence)
            .limit(EVENT_PAGE)
        )
        rows = j.read(all_rows(stmt))
        if not rows:
            return
        for row in rows:
            yield row_to_json("events", row)
        after = rows[-1].sequence


def export_run(j: Journal, run_id: str) -> dict:
    """The whole run as one JSON-able dict (see ``write_run_json`` for big runs)."""
    run, tables = _run_rows(j, run_id)
    events = list(iter_event_rows(j, run_id, run["last_sequence"]))
    return _header(j, run) | {"tables": tables, "events": events}


def _header(j: Journal, run: dict) -> dict:
    return {
        "format": FORMAT,
        "version": VERSION,
        "schema": j.schema_revision,
        "exported_at": j.now(),
        "run": run,
    }


def write_run_json(j: Journal, run_id: str, out: IO[str]) -> int:
    """Stream the bundle to ``out`` (events written page by page). Returns the event count."""
    run, tables = _run_rows(j, run_id)
    head = _header(j, run) | {"tables": tables}
    text = json_escaped(json.dumps(head, ensure_ascii=False, indent=1))
    out.write(text[:-2] + ',\n "events": [')
    count = 0
    for row in iter_event_rows(j, run_id, run["last_sequence"]):
        out.write(
            ("\n  " if count == 0 else ",\n  ") + json_escaped(json.dumps(row, ensure_ascii=False))
        )
        count += 1
    out.write("\n ]\n}\n")
    return count


def write_run_jsonl(j: Journal, run_id: str, out: IO[str]) -> int:
    """One event per line (the same shape as ``proctor export``). Returns the count."""
    run = j.runs.get(run_id)
    count = 0
    for row in iter_event_rows(j, run_id, run.last_sequence):
        out.write(json_escaped(json.dumps(row, ensure_ascii=False, sort_keys=True)) + "\n")
        count += 1
    return count


# ---------------------------------------------------------------- CSV

RUN_CSV = (
    "id",
    "title",
    "status",
    "agent",
    "project",
    "space",
    "parent_run_id",
    "started",
    "finished",
    "duration_s",
    "attempts",
    "events",
    "open_items",
    "cancel_requested",
    "error",
)
# ``source``: where the decision behind the entry was made (desk, cli, rule, expiry, mcp…);
# empty when no decision row records it (``AuditEntry.source``).
AUDIT_CSV = (
    "sequence",
    "time",
    "actor",
    "source",
    "action",
    "entity_kind",
    "entity_id",
    "run_id",
    "reason",
    "before",
    "after",
    "request_id",
    "digest",
)
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def iso(ts: float | None) -> str:
    if ts is None:
        return ""
    return (
        dt.datetime.fromtimestamp(ts, dt.UTC)
        .isoformat(timespec="milliseconds")
        .replace("+00:00", "Z")
    )


def cell(value: Any) -> Any:
    """Text that a spreadsheet would run as a formula is prefixed with a quote; control and
    invisible characters (ESC, C1 controls, DEL, bidi marks …) are shown as escapes."""
    if not isinstance(value, str):
        return value
    value = csv_text(value)
    return "'" + value if value.startswith(FORMULA_START) else value


def run_csv_row(run: Run, now: float) -> list[Any]:
    end = run.finished_at or now
    return [
        cell(v)
        for v in (
            run.id,
            run.title,
            run.status.value,
            run.agent,
            run.project,
            run.space,
            run.parent_run_id or "",
            iso(run.created_at),
            iso(run.finished_at),
            round(end - run.created_at, 3),
            run.current_attempt,
            run.last_sequence,
            run.open_items,
            run.cancel_requested,
            run.error or "",
        )
    ]


def audit_csv_row(a: AuditEntry) -> list[Any]:
    return [
        cell(v)
        for v in (
            a.sequence,
            iso(a.created_at),
            a.actor,
            a.source or "",
            a.action,
            a.entity_kind,
            a.entity_id,
            a.run_id or "",
            a.reason or "",
            canonical_json(a.before),
            canonical_json(a.after),
            a.request_id or "",
            a.digest,
        )
    ]


def write_runs_csv(j: Journal, q: RunQuery, out: IO[str], *, limit: int | None = None) -> int:
    """Every run matching ``q`` (in its sort order) as CSV. Returns the row count."""
    writer = csv.writer(out)
    writer.writerow(RUN_CSV)
    count, cursor, now = 0, None, j.now()
    while True:
        page = j.runs.list(q, cursor=cursor, limit=1000)
        for run in page.items:
            if limit is not None and count >= limit:
                return count
            writer.writerow(run_csv_row(run, now))
            count += 1
        if page.next_cursor is None:
            return count
        cursor = page.next_cursor


def write_audit_csv(j: Journal, out: IO[str], **filters: Any) -> int:
    """The audit log (newest first, ``audit.list`` filters) as CSV. Returns the row count."""
    writer = csv.writer(out)
    writer.writerow(AUDIT_CSV)
    count, before = 0, None
    while True:
        page = j.audit.list(before=before, limit=1000, **filters)
        for entry in page.items:
            writer.writerow(audit_csv_row(entry))
            count += 1
        if page.next_cursor is None:
            return count
        before = int(page.next_cursor)


# ---------------------------------------------------------------- reading exports


EXPORT_HINT = "Import a file written by `proctor export-run` (JSON) or `proctor export` (JSONL)."


def read_export(path: str | Path) -> dict:
    """A bundle from a JSON export, or one rebuilt from a JSONL event export. A file that is
    neither (binary, not JSON, JSON of another shape) is refused with ValidationError."""
    try:
        bundle = _read_export(path)
    except UnicodeDecodeError as err:
        raise errors.ValidationError(
            f"{path} is not a Proctor export: it is not text (UTF-8)",
            field="path",
            hint=EXPORT_HINT,
        ) from err
    except json.JSONDecodeError as err:
        raise errors.ValidationError(
            f"{path} is not a Proctor export: {err}", field="path", hint=EXPORT_HINT
        ) from err
    except (KeyError, TypeError, AttributeError, IndexError) as err:
        raise errors.ValidationError(
            f"{path} is not a Proctor export: it lacks {err}", field="path", hint=EXPORT_HINT
        ) from err
    if not isinstance(bundle, dict):
        raise errors.ValidationError(
            f"{path} is not a Proctor export: not a JSON object", field="path", hint=EXPORT_HINT
        )
    return bundle


def _read_export(path: str | Path) -> Any:
    with open(path, encoding="utf-8") as f:
        first = f.readline()
        f.seek(0)
        try:
            line = json.loads(first)
        except json.JSONDecodeError:
            line = None
        if not isinstance(line, dict) or "format" in line:
            try:
                return json.load(f)
            except json.JSONDecodeError as err:
                raise errors.ValidationError(
                    f"{path} is not a Proctor export: {err}", field="path"
                ) from err
        lines = [json.loads(text) for text in f if text.strip()]
    return bundle_from_events(lines)


RUN_STATUS_OF = {
    "run.completed": "completed",
    "run.failed": "failed",
    "run.cancelled": "cancelled",
    "run.interrupted": "interrupted",
    "run.waiting": "waiting_for_user",
    "run.resumed": "running",
    "attempt.started": "running",
    "run.retried": "running",  # 0013u: the operator's retry, started
}


def bundle_from_events(events: list[dict]) -> dict:
    """Rebuild the run row and attempts from its events alone (a JSONL export)."""
    events = sorted(events, key=lambda e: e["sequence"])
    first, last = events[0], events[-1]
    if first.get("type") != "run.started":
        raise errors.ValidationError(
            "a JSONL export must start with the run.started event", field="events"
        )
    started = first["payload"] or {}
    status, finished_at, error, cancel = "running", None, None, None
    retry: tuple[Any, Any] = (None, None)
    for e in events:
        status = RUN_STATUS_OF.get(e["type"], status)
        if e["type"] in ("run.completed", "run.failed", "run.cancelled"):
            finished_at = e["created_at"]
        if e["type"] == "run.failed" and error is None:  # set once: a retried run keeps its first
            error = (e["payload"] or {}).get("error")
        if e["type"] == "run.cancel_requested":
            cancel = (e["payload"] or {}).get("reason") or ""
        if e["type"] == "run.retry_requested":  # 0013u
            retry = (e["payload"] or {}).get("attempt"), (e["payload"] or {}).get("reason")
        if e["type"] == "run.retried":
            finished_at = None
    run = {
        "id": first["run_id"],
        "project": started.get("project", ""),
        "space": started.get("space", "default"),
        "agent": started.get("agent", ""),
        "title": started.get("title", ""),
        "parent_run_id": started.get("parent_run_id"),
        "status": status,
        "version": last["run_version"],
        "deadline": started.get("deadline"),
        "created_at": first["created_at"],
        "updated_at": last["created_at"],
        "finished_at": finished_at,
        "last_sequence": last["sequence"],
        "last_digest": last["digest"],
        "current_attempt": last["attempt"],
        "cancel_requested": cancel is not None,
        "cancel_reason": cancel,
        "error": error,
        "retry_requested": retry[0],
        "retry_reason": retry[1],
    }
    rows = [{k: e[k] for k in (c.name for c in s.events.columns)} for e in events]
    return {
        "format": FORMAT,
        "version": VERSION,
        "run": run,
        "tables": {"attempts": _attempts_from_events(run, events)},
        "events": rows,
        "rebuilt_from_events": True,
    }


def _attempts_from_events(run: dict, events: list[dict]) -> list[dict]:
    """Attempts as ``Runs`` leaves them: one the agent finished (``attempt.finished``) keeps
    its status and error; an open one ends with the run (a cancelled run's fails with
    "cancelled: <reason>") or is interrupted by the next attempt."""
    spans: dict[int, list[float]] = {}
    finished: dict[Any, dict] = {}  # by attempt number, as the payload says
    cancelled = None
    for e in events:
        spans.setdefault(e["attempt"], [e["created_at"], e["created_at"]])[1] = e["created_at"]
        payload = e["payload"] or {}
        if e["type"] == "attempt.finished" and payload.get("attempt") not in finished:
            finished[payload.get("attempt")] = {
                "status": payload.get("status"),
                "finished_at": e["created_at"],
                "error": payload.get("error"),
            }
        if e["type"] == "run.cancelled":
            cancelled = f"cancelled: {payload.get('reason')}"
    final = {"completed": "completed", "failed": "failed", "cancelled": "failed"}
    rows = []
    for number, (start, end) in sorted(spans.items()):
        current = number == run["current_attempt"]
        status = final.get(run["status"], "running") if current else "interrupted"
        done = not current or run["finished_at"] is not None
        row = {
            "run_id": run["id"],
            "number": number,
            "status": status,
            "started_at": start,
            "finished_at": end if done else None,
            "error": (cancelled or run["error"]) if current and done else None,
        }
        rows.append({**row, **finished.get(number, {})})
    return rows


# ---------------------------------------------------------------- import


def check_chain(run: dict, events: list[dict]) -> None:
    """Recompute the event chain of a bundle; raise DigestMismatch at the first bad link."""
    prev, expected = ZERO_DIGEST, 1
    for e in events:
        seq = e.get("sequence")
        if e.get("run_id") != run["id"]:
            raise errors.ValidationError(
                f"event #{seq} belongs to run {e.get('run_id')}", field="events"
            )
        if seq != expected:
            raise errors.DigestMismatch(f"event #{expected} is missing (found #{seq})")
        body = event_digest_body(e, e["payload"])
        if e["prev_digest"] != prev or chain_digest(prev, body) != e["digest"]:
            raise errors.DigestMismatch(
                f"the event chain breaks at #{seq}: its digest does not match its content",
                hint="The export was altered or damaged; nothing was imported.",
            )
        prev, expected = e["digest"], expected + 1
    if run["last_sequence"] != expected - 1 or run["last_digest"] != prev:
        raise errors.DigestMismatch(
            f"the run says #{run['last_sequence']} but its events end at #{expected - 1}",
            hint="The export is incomplete; nothing was imported.",
        )


def _check_bundle(bundle: dict) -> None:
    if bundle.get("format") != FORMAT:
        raise errors.ValidationError("not a Proctor run export", field="format")
    if int(bundle.get("version", 0)) > VERSION:
        raise errors.ValidationError(
            f"export version {bundle.get('version')} is newer than this Proctor knows",
            field="version",
        )
    for key in ("run", "events", "tables"):
        if key not in bundle:
            raise errors.ValidationError(f"the export has no {key!r}", field=key)


def import_run(j: Journal, bundle: dict, *, verify: bool = True, source: str = "") -> ImportReport:
    """Write the bundle's run into ``j`` verbatim, in one transaction; then (``verify``)
    recompute its chain from the journal. Refuses a run id that already exists."""
    _check_bundle(bundle)
    run = row_from_json(s.runs, bundle["run"])
    events = [row_from_json(s.events, e) for e in bundle["events"]]
    check_chain(run, bundle["events"])  # on the parsed payloads, as the digests were made
    tables = {
        name: [row_from_json(RUN_TABLES[name], r) for r in bundle["tables"].get(name, [])]
        for name in IMPORTED
    }
    notes = [
        f"{len(bundle['tables'][name])} {name.replace('_', ' ')} not imported: {why}"
        for name, why in NOT_IMPORTED.items()
        if bundle["tables"].get(name)
    ]

    def op(tx: Tx) -> None:
        if tx.conn.execute(select(s.runs.c.id).where(s.runs.c.id == run["id"])).first():
            raise errors.NotAllowed(
                f"run {run['id']} already exists in this journal",
                hint="Import into another journal; nothing was changed.",
            )
        if (
            run["parent_run_id"]
            and not tx.conn.execute(
                select(s.runs.c.id).where(s.runs.c.id == run["parent_run_id"])
            ).first()
        ):
            notes.append(
                f"parent run {run['parent_run_id']} is not in this journal; the link was dropped"
            )
            run["parent_run_id"] = None
        tx.conn.execute(insert(s.runs).values(**run))
        _insert(tx, s.attempts, tables["attempts"])
        _insert(tx, s.tool_calls, tables["tool_calls"])
        _insert(tx, s.events, events)
        for name in IMPORTED[2:]:
            _insert(tx, RUN_TABLES[name], tables[name])
        tx.changed(ChangeKind.RUN, run["id"], run["id"])
        tx.audit(
            "run.imported",
            "run",
            run["id"],
            run_id=run["id"],
            reason=source or None,
            after={"events": len(events), "last_digest": run["last_digest"]},
        )

    try:
        j.write(op)
    except (exc.IntegrityError, errors.Refused) as err:
        raise errors.NotAllowed(
            f"the export conflicts with rows already in this journal: {getattr(err, 'orig', err)}",
            hint="Nothing was imported.",
        ) from err
    report = None
    if verify:
        from proctor.core.audit.verify import verify_run

        report = verify_run(j, run["id"])
    return ImportReport(
        run_id=run["id"],
        events=len(events),
        rows={k: len(v) for k, v in tables.items()},
        notes=notes,
        verify=report,
    )


def _insert(tx: Tx, table: Table, rows: list[dict]) -> None:
    for start in range(0, len(rows), INSERT_CHUNK):
        tx.conn.execute(insert(table), rows[start : start + INSERT_CHUNK])


__all__ = [
    "AUDIT_CSV",
    "FORMAT",
    "RUN_CSV",
    "ImportReport",
    "bundle_from_events",
    "check_chain",
    "export_run",
    "import_run",
    "read_export",
    "write_audit_csv",
    "write_run_json",
    "write_run_jsonl",
    "write_runs_csv",
]
