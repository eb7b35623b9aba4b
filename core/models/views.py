"""What the journal's views return: audit entries, change sets, inbox items and filters, a page
of results, a bulk action's result, verify's report."""

from __future__ import annotations

from typing import Any, Generic, Literal, TypeVar

from .enums import ChangeKind, Frozen, InboxKind
from .runs import Origin


class AuditEntry(Frozen):
    sequence: int
    id: str
    actor: str
    action: str
    entity_kind: str
    entity_id: str
    run_id: str | None
    before: Any
    after: Any
    reason: str | None
    request_id: str | None
    created_at: float
    prev_digest: str
    digest: str
    # Where the decision behind the entry was made (desk, cli, rule, expiry, mcp…), read
    # from its decision row (not part of the entry's digest); None when no decision row
    # records it (e.g. an agent's withdrawal, a rule created, a cancel request).
    source: str | None = None


class Change(Frozen):
    seq: int
    entity_kind: ChangeKind
    entity_id: str
    run_id: str | None
    created_at: float


class ChangeSet(Frozen):
    """What changed since a change_seq: enough for each view to refresh its part."""

    since: int
    until: int
    changes: list[Change]
    # an agent's look (``waiter_seen_at``, written without a change row): the newest look
    # when this was read, and the requests looked at since the reader's last (``Changes.since``
    # with ``looks_after``) as (approval | question, id)
    looked_at: float | None = None
    looks: list[tuple[ChangeKind, str]] = []  # noqa: RUF012 - a pydantic field (Frozen)

    def kinds(self) -> set[ChangeKind]:
        """The kinds that changed; an appended event ('event') changed its run ('run') too
        (the feed stores no 'run' row for an append that left the run's status alone)."""
        kinds = {c.entity_kind for c in self.changes}
        if ChangeKind.EVENT in kinds:
            kinds.add(ChangeKind.RUN)
        return kinds

    def ids(self, kind: ChangeKind) -> set[str]:
        found = {c.entity_id for c in self.changes if c.entity_kind == kind}
        if kind == ChangeKind.RUN:
            found |= {
                c.run_id for c in self.changes if c.entity_kind == ChangeKind.EVENT and c.run_id
            }
        return found

    def run_ids(self) -> set[str]:
        return {c.run_id for c in self.changes if c.run_id}


class InboxItem(Frozen):
    """One row of the cross-run inbox: something that waits for a person."""

    kind: InboxKind
    id: str
    run_id: str | None
    agent: str
    project: str
    space: str
    run_title: str
    summary: str
    safety_class: str | None
    created_at: float
    expires_at: float | None
    snoozed_until: float | None
    version: int
    origin: Origin | None = None  # as the agent reported it (never verified)
    # when the requesting agent's wait last looked (approvals and questions; None: never)
    waiter_seen_at: float | None = None
    # who took it on ("assign to me", 0016a; None: nobody) and, under a policy, "1 of 2"
    assignee: str | None = None
    progress: str | None = None


class InboxFilter(Frozen):
    kinds: frozenset[InboxKind] = frozenset()
    agent: str | None = None
    project: str | None = None
    safety_class: str | None = None
    text: str | None = None
    snoozed: bool = False  # False: hide snoozed items; True: show only snoozed ones
    # True: only the requests an agent waits for now (a fresh waiter_seen_at, 0012w)
    waited: bool = False
    newest_first: bool = True
    # "waiter": the requests an agent waits for now first (core/kernel/waiting.py's
    # ``waiter_rank``), each group by age as ``newest_first`` says; "age": by age alone
    sort: Literal["age", "waiter"] = "age"
    # waiting since: created after ``created_after`` (exclusive) and at or before
    # ``created_until`` (an Overview bar's age bucket, as of the moment it was counted)
    created_after: float | None = None
    created_until: float | None = None
    # an operator's name: the requests under a policy waiting for them to step
    # ("waiting for me"), waiting for a group of theirs, and the items assigned to them
    # (core/policies/views.py)
    waiting_for: str | None = None
    for_groups_of: str | None = None
    assigned_to: str | None = None


T = TypeVar("T")


class Page(Frozen, Generic[T]):
    items: list[T]
    next_cursor: str | None = None


class BulkResult(Frozen):
    id: str
    ok: bool
    error: str | None = None
    error_type: str | None = None
    version: int | None = None  # the item's version after the write (what an undo expects)
    hold_until: float | None = None  # a held decision may be undone until then


class VerifyProblem(Frozen):
    what: str
    where: str
    detail: str


class VerifyReport(Frozen):
    ok: bool
    checked_runs: int
    checked_events: int
    checked_audit: int
    problems: list[VerifyProblem]
    # the other evidence verified, by table (receipts, memory_mutations, approvals, effects)
    checked_rows: dict[str, int] = {}  # noqa: RUF012 - a pydantic field (Frozen)
    # signed decisions: how many decisions are signed / unsigned / invalid / automatic
    # (checked against the trust file when one was given, else the journal's own keys)
    signatures: dict[str, int] | None = None
    trusted: bool = False  # the signatures were checked against a trust file

    @property
    def first_problem(self) -> VerifyProblem | None:
        return self.problems[0] if self.problems else None
