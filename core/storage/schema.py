"""The journal schema (SQLAlchemy 2 typed mapping).

Portable on purpose: no rowid ordering, per-run ``sequence`` with UNIQUE,
idempotency keys as UNIQUE, every transition a guarded UPDATE. Queries use the
Core tables (``Model.__table__``); ORM rows never leave core.
"""

from __future__ import annotations

from sqlalchemy import (
    Boolean,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Table,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


class Base(DeclarativeBase):
    pass


def unique_where_set(table: str, column: str) -> Index:
    """0008x: UNIQUE over the rows whose ``column`` is set (NULLs never collide, as under a
    UNIQUE constraint, and a row without one writes no index entry)."""
    where = text(f"{column} IS NOT NULL")
    return Index(
        f"ux_{table}_{column}", column, unique=True, sqlite_where=where, postgresql_where=where
    )


class RunRow(Base):
    __tablename__ = "runs"
    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    project: Mapped[str] = mapped_column(String(200))
    space: Mapped[str] = mapped_column(String(200))
    agent: Mapped[str] = mapped_column(String(200))
    title: Mapped[str] = mapped_column(Text)
    parent_run_id: Mapped[str | None] = mapped_column(ForeignKey("runs.id"))
    status: Mapped[str] = mapped_column(String(32))
    version: Mapped[int] = mapped_column(Integer)
    deadline: Mapped[float | None] = mapped_column(Float)
    created_at: Mapped[float] = mapped_column(Float)
    updated_at: Mapped[float] = mapped_column(Float)
    finished_at: Mapped[float | None] = mapped_column(Float)
    last_sequence: Mapped[int] = mapped_column(Integer)
    last_digest: Mapped[str] = mapped_column(String(64))
    current_attempt: Mapped[int] = mapped_column(Integer)
    cancel_requested: Mapped[bool] = mapped_column(Boolean)
    cancel_reason: Mapped[str | None] = mapped_column(Text)
    error: Mapped[str | None] = mapped_column(Text)
    __table_args__ = (
        Index("ix_runs_created", "created_at", "id"),
        # 0003: one index per run sort (the sort column, then created_at/id as tie-breaks).
        Index("ix_runs_status_created_id", "status", "created_at", "id"),
        Index("ix_runs_agent_created_id", "agent", "created_at", "id"),
        Index("ix_runs_project_created_id", "project", "created_at", "id"),
        Index("ix_runs_updated", "updated_at", "id"),
        Index("ix_runs_title", "title", "id"),
        Index("ix_runs_events", "last_sequence", "id"),
        # 0008x: partial (the rows each index's reads ask for; store issue 24)
        Index(
            "ix_runs_parent",
            "parent_run_id",
            sqlite_where=text("parent_run_id IS NOT NULL"),
            postgresql_where=text("parent_run_id IS NOT NULL"),
        ),
    )


class AttemptRow(Base):
    __tablename__ = "attempts"
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id"), primary_key=True)
    number: Mapped[int] = mapped_column(Integer, primary_key=True)
    status: Mapped[str] = mapped_column(String(32))
    started_at: Mapped[float] = mapped_column(Float)
    finished_at: Mapped[float | None] = mapped_column(Float)
    error: Mapped[str | None] = mapped_column(Text)


class EventRow(Base):
    __tablename__ = "events"
    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id"))
    sequence: Mapped[int] = mapped_column(Integer)
    type: Mapped[str] = mapped_column(String(100))
    payload: Mapped[str] = mapped_column(Text)
    run_version: Mapped[int] = mapped_column(Integer)
    attempt: Mapped[int] = mapped_column(Integer)
    actor: Mapped[str] = mapped_column(String(250))
    created_at: Mapped[float] = mapped_column(Float)
    prev_digest: Mapped[str] = mapped_column(String(64))
    digest: Mapped[str] = mapped_column(String(64))
    __table_args__ = (
        UniqueConstraint("run_id", "sequence", name="uq_events_run_sequence"),
        Index("ix_events_run_type", "run_id", "type", "sequence"),
    )


class ToolCallRow(Base):
    __tablename__ = "tool_calls"
    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id"))
    attempt: Mapped[int] = mapped_column(Integer)
    tool: Mapped[str] = mapped_column(String(200))
    safety_class: Mapped[str] = mapped_column(String(32))
    idempotency_key: Mapped[str | None] = mapped_column(String(200))
    request: Mapped[str] = mapped_column(Text)
    result: Mapped[str | None] = mapped_column(Text)
    error: Mapped[str | None] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(32))
    version: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[float] = mapped_column(Float)
    updated_at: Mapped[float] = mapped_column(Float)
    __table_args__ = (Index("ix_tool_calls_run", "run_id", "created_at"),)


class ApprovalRow(Base):
    __tablename__ = "approvals"
    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id"))
    attempt: Mapped[int] = mapped_column(Integer)
    agent: Mapped[str] = mapped_column(String(200))
    tool_call_id: Mapped[str | None] = mapped_column(ForeignKey("tool_calls.id"))
    action: Mapped[str] = mapped_column(Text)
    action_name: Mapped[str] = mapped_column(String(200))
    action_digest: Mapped[str] = mapped_column(String(64))
    safety_class: Mapped[str] = mapped_column(String(32))
    reason: Mapped[str] = mapped_column(Text)
    requested_scope: Mapped[str] = mapped_column(String(16))
    status: Mapped[str] = mapped_column(String(16))
    on_expiry: Mapped[str] = mapped_column(String(16))
    expires_at: Mapped[float | None] = mapped_column(Float)
    request_key: Mapped[str] = mapped_column(String(200), unique=True)
    request_digest: Mapped[str] = mapped_column(String(64))
    version: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[float] = mapped_column(Float)
    decided_at: Mapped[float | None] = mapped_column(Float)
    decided_by: Mapped[str | None] = mapped_column(String(250))
    decision_reason: Mapped[str | None] = mapped_column(Text)
    decision_scope: Mapped[str | None] = mapped_column(String(16))
    rule_id: Mapped[str | None] = mapped_column(String(64))
    consumed_at: Mapped[float | None] = mapped_column(Float)
    consumed_effect_key: Mapped[str | None] = mapped_column(String(200))
    snoozed_until: Mapped[float | None] = mapped_column(Float)
    input_schema: Mapped[str | None] = mapped_column(Text)  # 0005r
    approved_action: Mapped[str | None] = mapped_column(Text)  # 0005r: the edited action
    approved_digest: Mapped[str | None] = mapped_column(String(64))  # 0005r
    origin: Mapped[str | None] = mapped_column(Text)  # 0006o: as the agent reported it
    __table_args__ = (
        Index("ix_approvals_status_created", "status", "created_at", "id"),
        Index("ix_approvals_run", "run_id", "created_at"),
        # 0008x: partial (the decided ones; the ones that expire)
        Index(
            "ix_approvals_action",
            "action_name",
            "decided_at",
            sqlite_where=text("decided_at IS NOT NULL"),
            postgresql_where=text("decided_at IS NOT NULL"),
        ),
        Index(
            "ix_approvals_expiry",
            "status",
            "expires_at",
            sqlite_where=text("expires_at IS NOT NULL"),
            postgresql_where=text("expires_at IS NOT NULL"),
        ),
        Index("ix_approvals_run_status", "run_id", "status"),
    )


class ApprovalRuleRow(Base):
    __tablename__ = "approval_rules"
    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    effect: Mapped[str] = mapped_column(String(16))
    action_pattern: Mapped[str] = mapped_column(String(400))
    resource_pattern: Mapped[str] = mapped_column(String(400))
    scope: Mapped[str] = mapped_column(String(16))
    run_id: Mapped[str | None] = mapped_column(ForeignKey("runs.id"))
    project: Mapped[str] = mapped_column(String(200))
    space: Mapped[str | None] = mapped_column(String(200))
    created_by: Mapped[str] = mapped_column(String(250))
    created_at: Mapped[float] = mapped_column(Float)
    expires_at: Mapped[float | None] = mapped_column(Float)
    revoked_at: Mapped[float | None] = mapped_column(Float)
    revoked_by: Mapped[str | None] = mapped_column(String(250))
    source_approval_id: Mapped[str | None] = mapped_column(String(64))
    version: Mapped[int] = mapped_column(Integer)
    predicate: Mapped[str | None] = mapped_column(Text)  # 0005r
    revoke_reason: Mapped[str | None] = mapped_column(Text)  # 0005r
    __table_args__ = (Index("ix_rules_lookup", "revoked_at", "project", "space"),)


class QuestionRow(Base):
    __tablename__ = "interactions"
    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id"))
    attempt: Mapped[int] = mapped_column(Integer)
    agent: Mapped[str] = mapped_column(String(200))
    kind: Mapped[str] = mapped_column(String(32))
    prompt: Mapped[str] = mapped_column(Text)
    request: Mapped[str] = mapped_column(Text)
    response_schema: Mapped[str] = mapped_column(Text)
    options: Mapped[str] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(16))
    expires_at: Mapped[float | None] = mapped_column(Float)
    request_key: Mapped[str] = mapped_column(String(200), unique=True)
    request_digest: Mapped[str] = mapped_column(String(64))
    version: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[float] = mapped_column(Float)
    resolved_at: Mapped[float | None] = mapped_column(Float)
    resolved_by: Mapped[str | None] = mapped_column(String(250))
    response: Mapped[str | None] = mapped_column(Text)
    snoozed_until: Mapped[float | None] = mapped_column(Float)
    origin: Mapped[str | None] = mapped_column(Text)  # 0006o: as the agent reported it
    __table_args__ = (
        Index("ix_interactions_status_created", "status", "created_at", "id"),
        Index("ix_interactions_run", "run_id", "created_at"),
        Index("ix_interactions_run_status", "run_id", "status"),
    )


class DecisionRow(Base):
    __tablename__ = "decisions"
    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    target_kind: Mapped[str] = mapped_column(String(32))
    target_id: Mapped[str] = mapped_column(String(200))
    run_id: Mapped[str | None] = mapped_column(String(64))
    decision: Mapped[str] = mapped_column(Text)
    actor: Mapped[str] = mapped_column(String(250))
    source: Mapped[str] = mapped_column(String(32))
    request_id: Mapped[str | None] = mapped_column(String(200))  # ux_decisions_request_id
    reason: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[float] = mapped_column(Float)
    digest: Mapped[str] = mapped_column(String(64))
    __table_args__ = (
        Index("ix_decisions_target", "target_kind", "target_id"),
        unique_where_set("decisions", "request_id"),
    )


class MemoryEntryRow(Base):
    __tablename__ = "memory_entries"
    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    scope: Mapped[str] = mapped_column(String(16))
    scope_key: Mapped[str] = mapped_column(String(200))
    kind: Mapped[str] = mapped_column(String(32))
    title: Mapped[str] = mapped_column(Text)
    content: Mapped[str] = mapped_column(Text)
    priority: Mapped[int] = mapped_column(Integer)
    trust: Mapped[str] = mapped_column(String(32))
    sensitivity: Mapped[str] = mapped_column(String(32))
    pinned: Mapped[bool] = mapped_column(Boolean)
    confirmed: Mapped[bool] = mapped_column(Boolean)
    deleted: Mapped[bool] = mapped_column(Boolean)
    version: Mapped[int] = mapped_column(Integer)
    content_hash: Mapped[str] = mapped_column(String(64))
    source_run_id: Mapped[str | None] = mapped_column(String(64))
    created_at: Mapped[float] = mapped_column(Float)
    updated_at: Mapped[float] = mapped_column(Float)
    last_used_at: Mapped[float] = mapped_column(Float, server_default="0")  # 0: never used
    use_count: Mapped[int] = mapped_column(Integer, server_default="0")
    __table_args__ = (
        Index("ix_memory_scope", "scope", "scope_key", "updated_at"),
        Index("ix_memory_last_used", "last_used_at", "id"),
    )


class MemoryMutationRow(Base):
    __tablename__ = "memory_mutations"
    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    entry_id: Mapped[str] = mapped_column(ForeignKey("memory_entries.id"))
    operation: Mapped[str] = mapped_column(String(32))
    actor: Mapped[str] = mapped_column(String(250))
    reason: Mapped[str | None] = mapped_column(Text)
    version: Mapped[int] = mapped_column(Integer)
    before_hash: Mapped[str | None] = mapped_column(String(64))
    after_hash: Mapped[str | None] = mapped_column(String(64))
    before_content: Mapped[str | None] = mapped_column(Text)
    after_content: Mapped[str | None] = mapped_column(Text)
    run_id: Mapped[str | None] = mapped_column(String(64))
    idempotency_key: Mapped[str | None] = mapped_column(
        String(200)
    )  # ux_memory_mutations_idempotency_key
    request_digest: Mapped[str | None] = mapped_column(String(64))
    created_at: Mapped[float] = mapped_column(Float)
    event_sequence: Mapped[int | None] = mapped_column(Integer)  # run_id's event, if any
    # 0005: a hash chain per entry, in version order (integrity.mutation_digest)
    prev_digest: Mapped[str | None] = mapped_column(String(64))
    digest: Mapped[str | None] = mapped_column(String(64))
    __table_args__ = (
        Index("ix_mutations_entry", "entry_id", "version"),
        unique_where_set("memory_mutations", "idempotency_key"),
    )


class ConflictRow(Base):
    __tablename__ = "memory_reconciliations"
    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    entry_id: Mapped[str] = mapped_column(ForeignKey("memory_entries.id"))
    local_content: Mapped[str] = mapped_column(Text)
    local_version: Mapped[int] = mapped_column(Integer)
    incoming_content: Mapped[str] = mapped_column(Text)
    incoming_source: Mapped[str] = mapped_column(String(200))
    # the incoming version's fields; NULL: it did not carry that field
    incoming_kind: Mapped[str | None] = mapped_column(String(32))
    incoming_priority: Mapped[int | None] = mapped_column(Integer)
    incoming_trust: Mapped[str | None] = mapped_column(String(32))
    incoming_sensitivity: Mapped[str | None] = mapped_column(String(32))
    run_id: Mapped[str | None] = mapped_column(String(64))
    status: Mapped[str] = mapped_column(String(32))
    version: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[float] = mapped_column(Float)
    resolved_at: Mapped[float | None] = mapped_column(Float)
    resolved_by: Mapped[str | None] = mapped_column(String(250))
    resolution_reason: Mapped[str | None] = mapped_column(Text)
    snoozed_until: Mapped[float | None] = mapped_column(Float)
    agent: Mapped[str | None] = mapped_column(String(200))  # who recorded it (0005b)
    origin: Mapped[str | None] = mapped_column(Text)  # 0006o: as the agent reported it
    __table_args__ = (
        Index("ix_recon_status_created", "status", "created_at", "id"),
        # at most one pending conflict per entry (0005b)
        Index(
            "ux_recon_entry_pending",
            "entry_id",
            unique=True,
            sqlite_where=text("status = 'pending'"),
            postgresql_where=text("status = 'pending'"),
        ),
    )


class EffectRow(Base):
    __tablename__ = "effects"
    key: Mapped[str] = mapped_column(String(200), primary_key=True)
    run_id: Mapped[str | None] = mapped_column(ForeignKey("runs.id"))
    attempt: Mapped[int] = mapped_column(Integer)
    tool: Mapped[str] = mapped_column(String(200))
    action: Mapped[str] = mapped_column(Text)
    # 0005: sha256(canonical(action)); '' (the backfill's default) never matches
    action_digest: Mapped[str] = mapped_column(String(64), server_default="")
    safety_class: Mapped[str] = mapped_column(String(32))
    idempotency_key: Mapped[str | None] = mapped_column(String(200))
    status: Mapped[str] = mapped_column(String(16))
    lease_owner: Mapped[str | None] = mapped_column(String(250))
    lease_seconds: Mapped[float] = mapped_column(Float)
    lease_expires_at: Mapped[float | None] = mapped_column(Float)
    approval_id: Mapped[str | None] = mapped_column(String(64))
    result: Mapped[str | None] = mapped_column(Text)
    error: Mapped[str | None] = mapped_column(Text)
    ambiguous_reason: Mapped[str | None] = mapped_column(Text)
    resolved_by: Mapped[str | None] = mapped_column(String(250))
    resolution_reason: Mapped[str | None] = mapped_column(Text)
    version: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[float] = mapped_column(Float)
    started_at: Mapped[float | None] = mapped_column(Float)
    updated_at: Mapped[float] = mapped_column(Float)
    snoozed_until: Mapped[float | None] = mapped_column(Float)
    agent: Mapped[str | None] = mapped_column(String(200))  # who reserved it (0005b)
    origin: Mapped[str | None] = mapped_column(Text)  # 0006o: as the agent reported it
    __table_args__ = (
        Index("ix_effects_status_created", "status", "created_at", "key"),
        Index("ix_effects_run_status", "run_id", "status"),
    )


class ReceiptRow(Base):
    __tablename__ = "receipts"
    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    effect_key: Mapped[str] = mapped_column(ForeignKey("effects.key"))
    run_id: Mapped[str | None] = mapped_column(String(64))
    kind: Mapped[str] = mapped_column(String(32))
    status: Mapped[str] = mapped_column(String(32))
    external_id: Mapped[str | None] = mapped_column(String(400))
    evidence: Mapped[str] = mapped_column(Text)
    digest: Mapped[str] = mapped_column(String(64))
    actor: Mapped[str] = mapped_column(String(250))
    created_at: Mapped[float] = mapped_column(Float)
    __table_args__ = (Index("ix_receipts_effect", "effect_key", "created_at"),)


class AuditRow(Base):
    __tablename__ = "audit"
    sequence: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    id: Mapped[str] = mapped_column(String(64), unique=True)
    actor: Mapped[str] = mapped_column(String(250))
    action: Mapped[str] = mapped_column(String(64))
    entity_kind: Mapped[str] = mapped_column(String(32))
    entity_id: Mapped[str] = mapped_column(String(200))
    run_id: Mapped[str | None] = mapped_column(String(64))
    before: Mapped[str] = mapped_column(Text)
    after: Mapped[str] = mapped_column(Text)
    reason: Mapped[str | None] = mapped_column(Text)
    request_id: Mapped[str | None] = mapped_column(String(200))  # ux_audit_request_id
    request_digest: Mapped[str | None] = mapped_column(String(64))
    created_at: Mapped[float] = mapped_column(Float)
    prev_digest: Mapped[str] = mapped_column(String(64))
    digest: Mapped[str] = mapped_column(String(64))
    __table_args__ = (
        unique_where_set("audit", "request_id"),
        Index("ix_audit_entity", "entity_kind", "entity_id"),
        Index("ix_audit_run", "run_id", "sequence"),
        Index("ix_audit_actor", "actor", "sequence"),
    )


class ChangeRow(Base):
    __tablename__ = "changes"
    seq: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    entity_kind: Mapped[str] = mapped_column(String(32))
    entity_id: Mapped[str] = mapped_column(String(200))
    run_id: Mapped[str | None] = mapped_column(String(64))
    created_at: Mapped[float] = mapped_column(Float)


class SignatureRow(Base):
    """0005: an operator's Ed25519 signature over one record (a decision, a rule, a
    rule's revocation, a snooze); see docs/signed-decisions.md. Immutable by trigger."""

    __tablename__ = "signatures"
    record_id: Mapped[str] = mapped_column(String(250), primary_key=True)
    record_kind: Mapped[str] = mapped_column(String(32))
    key_id: Mapped[str] = mapped_column(String(64))
    operator: Mapped[str] = mapped_column(String(250))
    payload: Mapped[str] = mapped_column(Text)  # the RFC 8785 bytes that were signed
    signature: Mapped[str] = mapped_column(String(128))  # base64 of 64 bytes
    created_at: Mapped[float] = mapped_column(Float)


class OperatorKeyRow(Base):
    """0005: operators' public keys, for display only (trust never comes from here)."""

    __tablename__ = "operator_keys"
    key_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    operator: Mapped[str] = mapped_column(String(250))
    public_key: Mapped[str] = mapped_column(String(100))
    first_seen_at: Mapped[float] = mapped_column(Float)


class JournalMetaRow(Base):
    """0005: facts about the journal itself (``journal_id``, named by every signature)."""

    __tablename__ = "journal_meta"
    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[str] = mapped_column(Text)


# Immutable by their own triggers from 0005 (not in IMMUTABLE_TABLES: 0001 makes those).
SIGNED_TABLES = ("signatures", "journal_meta")

IMMUTABLE_TABLES = ("events", "receipts", "decisions", "audit", "memory_mutations", "changes")

# 0006o: the tables whose rows carry an agent-reported origin; an UPDATE that changes it aborts
# (``db.origin_trigger_sql``; kept apart from IDENTITY_COLUMNS, whose triggers 0005 made).
ORIGIN_TABLES = ("approvals", "interactions", "effects", "memory_reconciliations")

# 0005: the columns of a row that name what it is (UPDATE of any aborts), and every table's
# keys (an INSERT onto an existing key aborts, so INSERT OR REPLACE and upserts cannot
# rewrite a row: REPLACE's implicit delete fires no DELETE trigger).
IDENTITY_COLUMNS: dict[str, tuple[str, ...]] = {
    "approvals": (
        "id",
        "run_id",
        "attempt",
        "agent",
        "tool_call_id",
        "action",
        "action_name",
        "action_digest",
        "safety_class",
        "reason",
        "requested_scope",
        "on_expiry",
        "expires_at",
        "request_key",
        "request_digest",
        "created_at",
    ),
    "effects": (
        "key",
        "run_id",
        "tool",
        "action",
        "action_digest",
        "safety_class",
        "idempotency_key",
        "created_at",
    ),
}
# 0006i: the same for questions and memory conflicts (what the operator answered, or chose
# between, is fixed once filed; ``db.request_trigger_sql``).
REQUEST_IDENTITY_COLUMNS: dict[str, tuple[str, ...]] = {
    "interactions": (
        "id",
        "run_id",
        "attempt",
        "agent",
        "kind",
        "prompt",
        "request",
        "response_schema",
        "options",
        "expires_at",
        "request_key",
        "request_digest",
        "created_at",
    ),
    "memory_reconciliations": (
        "id",
        "entry_id",
        "local_content",
        "local_version",
        "incoming_content",
        "incoming_source",
        "incoming_kind",
        "incoming_priority",
        "incoming_trust",
        "incoming_sensitivity",
        "run_id",
        "agent",
        "created_at",
    ),
}
REQUEST_UNIQUE_KEYS: dict[str, tuple[tuple[str, ...], ...]] = {
    "interactions": (("id",), ("request_key",)),
    "memory_reconciliations": (("id",),),
}
UNIQUE_KEYS: dict[str, tuple[tuple[str, ...], ...]] = {
    "events": (("id",), ("run_id", "sequence")),
    "receipts": (("id",),),
    "decisions": (("id",), ("request_id",)),
    "audit": (("sequence",), ("id",), ("request_id",)),
    "memory_mutations": (("id",), ("idempotency_key",)),
    "changes": (("seq",),),
    "approvals": (("id",), ("request_key",)),
    "effects": (("key",),),
}


def table_of(row: type[Base]) -> Table:
    """A mapped class's Core table (typed as the Table it is, not the FromClause the ORM
    declares)."""
    table = row.__table__
    assert isinstance(table, Table)
    return table


runs = table_of(RunRow)
attempts = table_of(AttemptRow)
events = table_of(EventRow)
tool_calls = table_of(ToolCallRow)
approvals = table_of(ApprovalRow)
approval_rules = table_of(ApprovalRuleRow)
questions = table_of(QuestionRow)
decisions = table_of(DecisionRow)
memory_entries = table_of(MemoryEntryRow)
memory_mutations = table_of(MemoryMutationRow)
conflicts = table_of(ConflictRow)
effects = table_of(EffectRow)
receipts = table_of(ReceiptRow)
audit = table_of(AuditRow)
changes = table_of(ChangeRow)
signatures = table_of(SignatureRow)
operator_keys = table_of(OperatorKeyRow)
journal_meta = table_of(JournalMetaRow)
