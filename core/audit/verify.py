"""`proctor verify`: integrity_check, triggers present, every run's event chain and the
audit chain recomputed, every receipt's digest, every memory entry's mutation chain, every
approval's and effect's action against its digest; the first broken link of each chain and
each bad row are named.

This module runs the checks and holds the file-wide ones (the witness tail, every stored text
decodes); each family of row checks is its own module: verify_chains (event and audit
chains), verify_signatures (decisions and their signatures), verify_evidence (receipts,
approvals, effects, memory digests), verify_state (revocations, retries, undos, answers),
with verify_pages the paging they share."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from sqlalchemy import LargeBinary, String, Text, cast, select, tuple_

from proctor.core import errors
from proctor.core.audit.undos import undone_by_another
from proctor.core.models import VerifyProblem, VerifyReport
from proctor.core.storage import db
from proctor.core.storage import schema as s
from proctor.core.storage.rows import all_rows

from .verify_chains import _verify_audit, _verify_runs
from .verify_evidence import _verify_approvals, _verify_effects, _verify_memory, _verify_receipts
from .verify_pages import BATCH, LIMIT, _has_digests
from .verify_signatures import _verify_decisions, signature_counts
from .verify_state import (
    _verify_answers,
    _verify_question_undos,
    _verify_retries,
    _verify_revocations,
    _verify_undos,
)

if TYPE_CHECKING:  # the facade is above this module: its type only
    from proctor.core.journal import Journal


def verify(
    journal: Journal, *, quick: bool = False, run_id: str | None = None, trust: Any = None
) -> VerifyReport:
    """``trust`` (a Trust, a path or None: the journal's own ``trust``): every operator
    decision must be signed by a trusted key and match its rows; the first unsigned or
    forged decision is the first ``signature`` problem."""
    problems: list[VerifyProblem] = []
    if run_id is None:
        for line in journal.integrity_check(quick=quick):
            if line != "ok":
                problems.append(VerifyProblem(what="integrity", where="file", detail=line))
        for name in sorted(journal.missing_triggers()):
            problems.append(
                VerifyProblem(
                    what="trigger missing",
                    where=name,
                    detail="evidence rows are no longer protected",
                )
            )
        for name, why in journal.altered_triggers().items():
            problems.append(
                VerifyProblem(
                    what="trigger altered",
                    where=name,
                    detail=f"{why}: the rows it guards are no longer protected",
                )
            )
        _verify_tail(journal, problems)
        _verify_decodes(journal, problems)
    try:
        return _verify_rows(journal, problems, run_id, trust)
    except errors.Corrupt as err:  # a check that cannot read on: the damage is the finding
        if not any(p.what == "damaged" for p in problems):
            problems.append(VerifyProblem(what="damaged", where="journal", detail=err.message))
        return VerifyReport(
            ok=False, checked_runs=0, checked_events=0, checked_audit=0, problems=problems
        )


def _verify_rows(
    journal: Journal, problems: list[VerifyProblem], run_id: str | None, trust: Any
) -> VerifyReport:
    runs, events = _verify_runs(journal, problems, run_id)
    audits = 0 if run_id else _verify_audit(journal, problems)
    counts = None
    if run_id is None:
        _verify_decisions(journal, problems)
        journal.read(lambda c: _verify_revocations(c, problems))
        journal.read(lambda c: _verify_answers(c, problems))
        journal.read(lambda c: _verify_retries(c, problems))
        journal.read(lambda c: _verify_undos(c, problems))
        journal.read(lambda c: _verify_question_undos(c, problems))
        problems.extend(journal.read(undone_by_another))
        if db.has_revision(journal.read(db.current_revision), "0014p"):
            from proctor.core.policies.verify import problems_in

            problems.extend(journal.read(problems_in))
        if db.has_revision(journal.read(db.current_revision), "0016a"):
            from proctor.core.assignments.verify import problems_in as assigned

            problems.extend(journal.read(assigned))
        if db.has_revision(journal.read(db.current_revision), "0017c"):
            from proctor.core.comments.verify import problems_in as comment_problems

            problems.extend(journal.read(comment_problems))
        from proctor.core.decisions.trust import resolve_trust

        trusted = resolve_trust(trust) if trust is not None else journal.trust
        counts = journal.read(lambda c: signature_counts(c, trusted, problems))
    rows = {
        "receipts": _verify_receipts(journal, problems, run_id),
        "approvals": _verify_approvals(journal, problems, run_id),
        "effects": _verify_effects(journal, problems, run_id),
    }
    if run_id is None and _has_digests(journal):
        rows["memory_mutations"] = _verify_memory(journal, problems)
    return VerifyReport(
        ok=not problems,
        checked_runs=runs,
        checked_events=events,
        checked_audit=audits,
        problems=problems,
        checked_rows=rows,
        signatures=counts,
        trusted=run_id is None and (trust is not None or journal.trust is not None),
    )


# The columns that hold JSON, by table: each must parse (every text column must be UTF-8).
JSON_COLUMNS = {
    "events": ("payload",),
    "tool_calls": ("request", "result"),
    "approvals": ("action", "input_schema", "approved_action"),
    "interactions": ("request", "response_schema", "options", "response"),
    "decisions": ("decision",),
    "effects": ("action", "result"),
    "receipts": ("evidence",),
    "audit": ("before", "after"),
}


def _verify_decodes(journal: Journal, problems: list[VerifyProblem]) -> None:
    """Every stored text decodes: UTF-8 bytes, and JSON where a column holds JSON. A byte
    flipped inside a content page passes SQLite's integrity check (the page's structure is
    intact) yet no read of that row can succeed: such damage is named by table, row and
    column. (A server journal validates both on every write: nothing to scan.)"""
    if journal.server:
        return
    for table in s.metadata.sorted_tables:
        texts = [c for c in table.columns if isinstance(c.type, String | Text)]
        if not texts:
            continue
        keys = list(table.primary_key.columns)
        json_names = JSON_COLUMNS.get(table.name, ())
        bad = 0
        for row in _key_pages(journal, select(*keys, *(cast(c, LargeBinary) for c in texts)), keys):
            key = "/".join(str(v) for v in row[: len(keys)])
            for column, raw in zip(texts, row[len(keys) :], strict=True):
                why = _undecodable(raw, column.name in json_names)
                if why and bad < LIMIT:
                    bad += 1
                    problems.append(
                        VerifyProblem(
                            what="damaged",
                            where=f"{table.name} {key}, its {column.name}",
                            detail=why,
                        )
                    )


def _key_pages(journal: Journal, base: Any, keys: list[Any]) -> Any:
    """The rows of ``base`` (which selects ``keys`` first) in key order, ``BATCH`` a read
    (keyset: no read holds a snapshot for a whole table)."""
    after: tuple | None = None
    order = tuple_(*keys) if len(keys) > 1 else keys[0]
    while True:
        stmt = (
            base
            if after is None
            else base.where(order > (tuple_(*after) if len(keys) > 1 else after[0]))
        )
        rows = journal.read(all_rows(stmt.order_by(*keys).limit(BATCH)))
        yield from rows
        if len(rows) < BATCH:
            return
        after = tuple(rows[-1][: len(keys)])


def _undecodable(raw: bytes | None, is_json: bool) -> str:
    """Why a stored value cannot be read ("" when it can)."""
    if raw is None:
        return ""
    try:
        text = bytes(raw).decode("utf-8")
    except UnicodeDecodeError as err:
        return f"its stored text is not valid UTF-8 ({err.reason} at byte {err.start})"
    if is_json:
        try:
            json.loads(text)
        except ValueError as err:
            return f"the stored JSON does not parse ({err})"
    return ""


def _verify_tail(journal: Journal, problems: list[VerifyProblem]) -> None:
    """Changes a desk saw (its head witness, core/audit/witness.py) that the journal lacks: a
    -wal deleted before its checkpoint leaves a shorter chain that agrees with itself."""
    from .witness import check

    lost = check(journal)
    if lost is not None:
        span = f"changes {lost.first_missing}..{lost.last_seen}"
        problems.insert(
            0,
            VerifyProblem(
                what="changes missing", where=span, detail=f"{lost.sentence}. {lost.hint}"
            ),
        )


def verify_run(journal: Journal, run_id: str) -> VerifyReport:
    return verify(journal, run_id=run_id)


__all__ = ["db", "verify", "verify_run"]
