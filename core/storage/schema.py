"""The journal schema: SQLAlchemy Core tables (no ORM mapping: nothing here is an ORM class,
and importing it never loads ``sqlalchemy.orm``).

Portable on purpose: no rowid ordering, per-run ``sequence`` with UNIQUE,
idempotency keys as UNIQUE, every transition a guarded UPDATE. A column marked
``nullable=False`` is NOT NULL; the others are nullable (Core's default), as the Optional
annotations of the typed mapping this replaced made them: the DDL is the same statement for
statement on SQLite and PostgreSQL. ``tests/core/test_schema_tables.py`` compares these tables
with what the migrations build.
"""

from __future__ import annotations

from sqlalchemy import (
    Boolean,
    Column,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    text,
)

metadata = MetaData()


# The partial indexes, whose WHERE PostgreSQL is given only when a server journal's engine is
# made (for_postgresql): naming ``postgresql_where`` here would load SQLAlchemy's PostgreSQL
# dialect (and asyncio, through its asyncpg module) in every process that imports the schema.
PARTIAL_INDEXES: list[Index] = []


def partial_index(name: str, *columns: str, where: str, unique: bool = False) -> Index:
    """An index over the rows ``where`` holds for, the same clause on SQLite and PostgreSQL."""
    index = Index(name, *columns, unique=unique, sqlite_where=text(where))
    PARTIAL_INDEXES.append(index)
    return index


def for_postgresql() -> None:
    """Give each partial index its ``postgresql_where`` (the SQLite clause), once: the DDL and
    Alembic's comparison on a server are then what they were with both options written out."""
    for index in PARTIAL_INDEXES:
        server = index.dialect_options["postgresql"]
        if server["where"] is None:
            server["where"] = index.dialect_options["sqlite"]["where"]


def unique_where_set(table: str, column: str) -> Index:
    """0008x: UNIQUE over the rows whose ``column`` is set (NULLs never collide, as under a
    UNIQUE constraint, and a row without one writes no index entry)."""
    return partial_index(f"ux_{table}_{column}", column, unique=True, where=f"{column} IS NOT NULL")


runs = Table(
    "runs",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("project", String(200), nullable=False),
    Column("space", String(200), nullable=False),
    Column("agent", String(200), nullable=False),
    Column("title", Text, nullable=False),
    Column("parent_run_id", ForeignKey("runs.id")),
    Column("status", String(32), nullable=False),
    Column("version", Integer, nullable=False),
    Column("deadline", Float),
    Column("created_at", Float, nullable=False),
    Column("updated_at", Float, nullable=False),
    Column("finished_at", Float),
    Column("last_sequence", Integer, nullable=False),
    Column("last_digest", String(64), nullable=False),
    Column("current_attempt", Integer, nullable=False),
    Column("cancel_requested", Boolean, nullable=False),
    Column("cancel_reason", Text),
    Column("error", Text),
    Column("retry_requested", Integer),  # 0013u: the attempt an operator asked a retry as
    Column("retry_reason", Text),  # 0013u
    Index("ix_runs_created", "created_at", "id"),
    # 0003: one index per run sort (the sort column, then created_at/id as tie-breaks).
    Index("ix_runs_status_created_id", "status", "created_at", "id"),
    Index("ix_runs_agent_created_id", "agent", "created_at", "id"),
    Index("ix_runs_project_created_id", "project", "created_at", "id"),
    Index("ix_runs_updated", "updated_at", "id"),
    Index("ix_runs_title", "title", "id"),
    Index("ix_runs_events", "last_sequence", "id"),
    # 0008x: partial (the rows each index's reads ask for; store issue 24)
    partial_index(
        "ix_runs_parent",
        "parent_run_id",
        where="parent_run_id IS NOT NULL",
    ),
)


attempts = Table(
    "attempts",
    metadata,
    Column("run_id", ForeignKey("runs.id"), primary_key=True),
    Column("number", Integer, primary_key=True),
    Column("status", String(32), nullable=False),
    Column("started_at", Float, nullable=False),
    Column("finished_at", Float),
    Column("error", Text),
)


events = Table(
    "events",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("run_id", ForeignKey("runs.id"), nullable=False),
    Column("sequence", Integer, nullable=False),
    Column("type", String(100), nullable=False),
    Column("payload", Text, nullable=False),
    Column("run_version", Integer, nullable=False),
    Column("attempt", Integer, nullable=False),
    Column("actor", String(250), nullable=False),
    Column("created_at", Float, nullable=False),
    Column("prev_digest", String(64), nullable=False),
    Column("digest", String(64), nullable=False),
    UniqueConstraint("run_id", "sequence", name="uq_events_run_sequence"),
    Index("ix_events_run_type", "run_id", "type", "sequence"),
)


tool_calls = Table(
    "tool_calls",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("run_id", ForeignKey("runs.id"), nullable=False),
    Column("attempt", Integer, nullable=False),
    Column("tool", String(200), nullable=False),
    Column("safety_class", String(32), nullable=False),
    Column("idempotency_key", String(200)),
    Column("request", Text, nullable=False),
    Column("result", Text),
    Column("error", Text),
    Column("status", String(32), nullable=False),
    Column("version", Integer, nullable=False),
    Column("created_at", Float, nullable=False),
    Column("updated_at", Float, nullable=False),
    Index("ix_tool_calls_run", "run_id", "created_at"),
)


approvals = Table(
    "approvals",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("run_id", ForeignKey("runs.id"), nullable=False),
    Column("attempt", Integer, nullable=False),
    Column("agent", String(200), nullable=False),
    Column("tool_call_id", ForeignKey("tool_calls.id")),
    Column("action", Text, nullable=False),
    Column("action_name", String(200), nullable=False),
    Column("action_digest", String(64), nullable=False),
    Column("safety_class", String(32), nullable=False),
    Column("reason", Text, nullable=False),
    Column("requested_scope", String(16), nullable=False),
    Column("status", String(16), nullable=False),
    Column("on_expiry", String(16), nullable=False),
    Column("expires_at", Float),
    Column("request_key", String(200), unique=True, nullable=False),
    Column("request_digest", String(64), nullable=False),
    Column("version", Integer, nullable=False),
    Column("created_at", Float, nullable=False),
    Column("decided_at", Float),
    Column("decided_by", String(250)),
    Column("decision_reason", Text),
    Column("decision_scope", String(16)),
    Column("rule_id", String(64)),
    Column("consumed_at", Float),
    Column("consumed_effect_key", String(200)),
    Column("snoozed_until", Float),
    Column("input_schema", Text),  # 0005r
    Column("approved_action", Text),  # 0005r: the edited action
    Column("approved_digest", String(64)),  # 0005r
    Column("origin", Text),  # 0006o: as the agent reported it
    Column("waiter_seen_at", Float),  # 0012w: when the waiting agent last looked
    Column("hold_until", Float),  # 0013u: a person's decision may be undone until then
    # 0014u: the rows an agent has looked at, newest look last (the desk's probe for new looks)
    partial_index("ix_approvals_waiter", "waiter_seen_at", where="waiter_seen_at IS NOT NULL"),
    Index("ix_approvals_status_created", "status", "created_at", "id"),
    Index("ix_approvals_run", "run_id", "created_at"),
    # 0008x: partial (the decided ones; the ones that expire)
    partial_index(
        "ix_approvals_action",
        "action_name",
        "decided_at",
        where="decided_at IS NOT NULL",
    ),
    partial_index(
        "ix_approvals_expiry",
        "status",
        "expires_at",
        where="expires_at IS NOT NULL",
    ),
    Index("ix_approvals_run_status", "run_id", "status"),
)


approval_rules = Table(
    "approval_rules",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("effect", String(16), nullable=False),
    Column("action_pattern", String(400), nullable=False),
    Column("resource_pattern", String(400), nullable=False),
    Column("scope", String(16), nullable=False),
    Column("run_id", ForeignKey("runs.id")),
    Column("project", String(200), nullable=False),
    Column("space", String(200)),
    Column("created_by", String(250), nullable=False),
    Column("created_at", Float, nullable=False),
    Column("expires_at", Float),
    Column("revoked_at", Float),
    Column("revoked_by", String(250)),
    Column("source_approval_id", String(64)),
    Column("version", Integer, nullable=False),
    Column("predicate", Text),  # 0005r
    Column("revoke_reason", Text),  # 0005r
    Index("ix_rules_lookup", "revoked_at", "project", "space"),
)


questions = Table(
    "interactions",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("run_id", ForeignKey("runs.id"), nullable=False),
    Column("attempt", Integer, nullable=False),
    Column("agent", String(200), nullable=False),
    Column("kind", String(32), nullable=False),
    Column("prompt", Text, nullable=False),
    Column("request", Text, nullable=False),
    Column("response_schema", Text, nullable=False),
    Column("options", Text, nullable=False),
    Column("status", String(16), nullable=False),
    Column("expires_at", Float),
    Column("request_key", String(200), unique=True, nullable=False),
    Column("request_digest", String(64), nullable=False),
    Column("version", Integer, nullable=False),
    Column("created_at", Float, nullable=False),
    Column("resolved_at", Float),
    Column("resolved_by", String(250)),
    Column("response", Text),
    Column("snoozed_until", Float),
    Column("origin", Text),  # 0006o: as the agent reported it
    Column("waiter_seen_at", Float),  # 0012w: when the waiting agent last looked
    Column("hold_until", Float),  # 0014u: a person's answer may be undone until then
    Column("taken_at", Float),  # 0014u: when the agent took the held answer
    # 0014u: the rows an agent has looked at, newest look last (the desk's probe for new looks)
    partial_index("ix_interactions_waiter", "waiter_seen_at", where="waiter_seen_at IS NOT NULL"),
    Index("ix_interactions_status_created", "status", "created_at", "id"),
    Index("ix_interactions_run", "run_id", "created_at"),
    Index("ix_interactions_run_status", "run_id", "status"),
)


decisions = Table(
    "decisions",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("target_kind", String(32), nullable=False),
    Column("target_id", String(200), nullable=False),
    Column("run_id", String(64)),
    Column("decision", Text, nullable=False),
    Column("actor", String(250), nullable=False),
    Column("source", String(32), nullable=False),
    Column("request_id", String(200)),  # ux_decisions_request_id
    Column("reason", Text),
    Column("created_at", Float, nullable=False),
    Column("digest", String(64), nullable=False),
    Index("ix_decisions_target", "target_kind", "target_id"),
    unique_where_set("decisions", "request_id"),
)


memory_entries = Table(
    "memory_entries",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("scope", String(16), nullable=False),
    Column("scope_key", String(200), nullable=False),
    Column("kind", String(32), nullable=False),
    Column("title", Text, nullable=False),
    Column("content", Text, nullable=False),
    Column("priority", Integer, nullable=False),
    Column("trust", String(32), nullable=False),
    Column("sensitivity", String(32), nullable=False),
    Column("pinned", Boolean, nullable=False),
    Column("confirmed", Boolean, nullable=False),
    Column("deleted", Boolean, nullable=False),
    Column("version", Integer, nullable=False),
    Column("content_hash", String(64), nullable=False),
    Column("source_run_id", String(64)),
    Column("created_at", Float, nullable=False),
    Column("updated_at", Float, nullable=False),
    Column("last_used_at", Float, server_default="0", nullable=False),  # 0: never used
    Column("use_count", Integer, server_default="0", nullable=False),
    Index("ix_memory_scope", "scope", "scope_key", "updated_at"),
    Index("ix_memory_last_used", "last_used_at", "id"),
)


memory_mutations = Table(
    "memory_mutations",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("entry_id", ForeignKey("memory_entries.id"), nullable=False),
    Column("operation", String(32), nullable=False),
    Column("actor", String(250), nullable=False),
    Column("reason", Text),
    Column("version", Integer, nullable=False),
    Column("before_hash", String(64)),
    Column("after_hash", String(64)),
    Column("before_content", Text),
    Column("after_content", Text),
    Column("run_id", String(64)),
    Column("idempotency_key", String(200)),  # ux_memory_mutations_idempotency_key
    Column("request_digest", String(64)),
    Column("created_at", Float, nullable=False),
    Column("event_sequence", Integer),  # run_id's event, if any
    # 0005: a hash chain per entry, in version order (integrity.mutation_digest)
    Column("prev_digest", String(64)),
    Column("digest", String(64)),
    Index("ix_mutations_entry", "entry_id", "version"),
    unique_where_set("memory_mutations", "idempotency_key"),
)


conflicts = Table(
    "memory_reconciliations",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("entry_id", ForeignKey("memory_entries.id"), nullable=False),
    Column("local_content", Text, nullable=False),
    Column("local_version", Integer, nullable=False),
    Column("incoming_content", Text, nullable=False),
    Column("incoming_source", String(200), nullable=False),
    # the incoming version's fields; NULL: it did not carry that field
    Column("incoming_kind", String(32)),
    Column("incoming_priority", Integer),
    Column("incoming_trust", String(32)),
    Column("incoming_sensitivity", String(32)),
    Column("run_id", String(64)),
    Column("status", String(32), nullable=False),
    Column("version", Integer, nullable=False),
    Column("created_at", Float, nullable=False),
    Column("resolved_at", Float),
    Column("resolved_by", String(250)),
    Column("resolution_reason", Text),
    Column("snoozed_until", Float),
    Column("agent", String(200)),  # who recorded it (0005b)
    Column("origin", Text),  # 0006o: as the agent reported it
    Index("ix_recon_status_created", "status", "created_at", "id"),
    # at most one pending conflict per entry (0005b)
    partial_index(
        "ux_recon_entry_pending",
        "entry_id",
        unique=True,
        where="status = 'pending'",
    ),
)


effects = Table(
    "effects",
    metadata,
    Column("key", String(200), primary_key=True),
    Column("run_id", ForeignKey("runs.id")),
    Column("attempt", Integer, nullable=False),
    Column("tool", String(200), nullable=False),
    Column("action", Text, nullable=False),
    # 0005: sha256(canonical(action)); '' (the backfill's default) never matches
    Column("action_digest", String(64), server_default="", nullable=False),
    Column("safety_class", String(32), nullable=False),
    Column("idempotency_key", String(200)),
    Column("status", String(16), nullable=False),
    Column("lease_owner", String(250)),
    Column("lease_seconds", Float, nullable=False),
    Column("lease_expires_at", Float),
    Column("approval_id", String(64)),
    Column("result", Text),
    Column("error", Text),
    Column("ambiguous_reason", Text),
    Column("resolved_by", String(250)),
    Column("resolution_reason", Text),
    Column("version", Integer, nullable=False),
    Column("created_at", Float, nullable=False),
    Column("started_at", Float),
    Column("updated_at", Float, nullable=False),
    Column("snoozed_until", Float),
    Column("agent", String(200)),  # who reserved it (0005b)
    Column("origin", Text),  # 0006o: as the agent reported it
    Index("ix_effects_status_created", "status", "created_at", "key"),
    Index("ix_effects_run_status", "run_id", "status"),
)


receipts = Table(
    "receipts",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("effect_key", ForeignKey("effects.key"), nullable=False),
    Column("run_id", String(64)),
    Column("kind", String(32), nullable=False),
    Column("status", String(32), nullable=False),
    Column("external_id", String(400)),
    Column("evidence", Text, nullable=False),
    Column("digest", String(64), nullable=False),
    Column("actor", String(250), nullable=False),
    Column("created_at", Float, nullable=False),
    Index("ix_receipts_effect", "effect_key", "created_at"),
)


audit = Table(
    "audit",
    metadata,
    Column("sequence", Integer, primary_key=True, autoincrement=False),
    Column("id", String(64), unique=True, nullable=False),
    Column("actor", String(250), nullable=False),
    Column("action", String(64), nullable=False),
    Column("entity_kind", String(32), nullable=False),
    Column("entity_id", String(200), nullable=False),
    Column("run_id", String(64)),
    Column("before", Text, nullable=False),
    Column("after", Text, nullable=False),
    Column("reason", Text),
    Column("request_id", String(200)),  # ux_audit_request_id
    Column("request_digest", String(64)),
    Column("created_at", Float, nullable=False),
    Column("prev_digest", String(64), nullable=False),
    Column("digest", String(64), nullable=False),
    unique_where_set("audit", "request_id"),
    Index("ix_audit_entity", "entity_kind", "entity_id"),
    Index("ix_audit_run", "run_id", "sequence"),
    Index("ix_audit_actor", "actor", "sequence"),
)


changes = Table(
    "changes",
    metadata,
    Column("seq", Integer, primary_key=True, autoincrement=True),
    Column("entity_kind", String(32), nullable=False),
    Column("entity_id", String(200), nullable=False),
    Column("run_id", String(64)),
    Column("created_at", Float, nullable=False),
)


# 0005: an operator's Ed25519 signature over one record (a decision, a rule, a
#     rule's revocation, a snooze); see docs/signed-decisions.md. Immutable by trigger.
signatures = Table(
    "signatures",
    metadata,
    Column("record_id", String(250), primary_key=True),
    Column("record_kind", String(32), nullable=False),
    Column("key_id", String(64), nullable=False),
    Column("operator", String(250), nullable=False),
    Column("payload", Text, nullable=False),  # the RFC 8785 bytes that were signed
    Column("signature", String(128), nullable=False),  # base64 of 64 bytes
    Column("created_at", Float, nullable=False),
)


# 0005: operators' public keys, for display only (trust never comes from here).
operator_keys = Table(
    "operator_keys",
    metadata,
    Column("key_id", String(64), primary_key=True),
    Column("operator", String(250), nullable=False),
    Column("public_key", String(100), nullable=False),
    Column("first_seen_at", Float, nullable=False),
)


# 0014p: approval policies (docs/policies.md). Every table is evidence: rows are only
# inserted (a group change, a policy, its stages, its revocation, the policy a request is
# bound to, each approver's step); core/storage/policy_sql.py refuses the rest.
group_changes = Table(
    "group_changes",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("group_name", String(200), nullable=False),
    Column("operator", String(200), nullable=False),
    Column("seq", Integer, nullable=False),  # 1, 2, ... per group and person
    Column("change", String(16), nullable=False),  # add / remove
    Column("decision_id", String(64), nullable=False),
    Column("actor", String(250), nullable=False),
    Column("created_at", Float, nullable=False),
    UniqueConstraint("group_name", "operator", "seq", name="uq_group_changes_seq"),
)

policies = Table(
    "policies",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("name", String(200), nullable=False),
    Column("action_pattern", String(400), nullable=False),
    Column("resource_pattern", String(400), nullable=False),
    Column("safety_class", String(32)),  # NULL: any
    Column("predicate", Text),
    Column("project", String(200), nullable=False),  # "*": every project
    Column("space", String(200)),  # NULL: every space
    Column("mode", String(16), nullable=False),  # quorum / sequence
    Column("escalate_after", Float),  # seconds undecided, then escalate_to may step too
    Column("escalate_to", String(200)),
    Column("decision_id", String(64), nullable=False),
    Column("created_by", String(250), nullable=False),
    Column("created_at", Float, nullable=False),
    # 0018e: what the escalation's deadline does ("deny": the policy denies the request
    # ``deadline`` seconds after it was filed; NULL or "wait": it waits for its own expiry)
    Column("at_deadline", String(16)),
    Column("deadline", Float),
)

policy_stages = Table(
    "policy_stages",
    metadata,
    Column("policy_id", ForeignKey("policies.id"), primary_key=True),
    Column("stage", Integer, primary_key=True),
    Column("group_name", String(200), primary_key=True),
    Column("need", Integer, nullable=False),
)

policy_revocations = Table(
    "policy_revocations",
    metadata,
    Column("policy_id", ForeignKey("policies.id"), primary_key=True),
    Column("reason", Text, nullable=False),
    Column("decision_id", String(64), nullable=False),
    Column("revoked_by", String(250), nullable=False),
    Column("revoked_at", Float, nullable=False),
)

policy_bindings = Table(
    "policy_bindings",
    metadata,
    Column("approval_id", ForeignKey("approvals.id"), primary_key=True),
    Column("policy_id", ForeignKey("policies.id"), nullable=False),
    Column("created_at", Float, nullable=False),
)

approval_steps = Table(
    "approval_steps",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("approval_id", ForeignKey("approvals.id"), nullable=False),
    Column("policy_id", ForeignKey("policies.id"), nullable=False),
    Column("stage", Integer, nullable=False),
    Column("group_name", String(200), nullable=False),
    Column("operator", String(200), nullable=False),
    Column("for_operator", String(200)),  # whose part, by their delegation (NULL: their own)
    Column("approve", Integer, nullable=False),  # 1 approves, 0 denies
    Column("reason", Text),
    Column("decision_id", String(64), nullable=False),
    Column("created_at", Float, nullable=False),
    UniqueConstraint("approval_id", "operator", name="uq_approval_steps_once_each"),
)

delegations = Table(
    "delegations",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("operator", String(200), nullable=False),  # who hands their part on
    Column("delegate", String(200), nullable=False),  # to whom
    Column("starts_at", Float, nullable=False),
    Column("ends_at", Float, nullable=False),
    Column("reason", Text),
    Column("decision_id", String(64), nullable=False),
    Column("created_at", Float, nullable=False),
)

# 0018e: a delegation ended early by its delegator, with the decision that ends it (evidence,
# like the 0014p tables; core/storage/deadline_sql.py refuses the rest).
delegation_ends = Table(
    "delegation_ends",
    metadata,
    Column("delegation_id", ForeignKey("delegations.id"), primary_key=True),
    Column("reason", Text, nullable=False),
    Column("decision_id", String(64), nullable=False),
    Column("ended_by", String(250), nullable=False),  # operator:NAME, the delegator
    Column("ended_at", Float, nullable=False),
)
DEADLINE_TABLES = ("delegation_ends",)
DEADLINE_KEYS: dict[str, tuple[tuple[str, ...], ...]] = {"delegation_ends": (("delegation_id",),)}

POLICY_TABLES = (
    "group_changes",
    "delegations",
    "policies",
    "policy_stages",
    "policy_revocations",
    "policy_bindings",
    "approval_steps",
)
POLICY_KEYS: dict[str, tuple[tuple[str, ...], ...]] = {
    "group_changes": (("id",), ("group_name", "operator", "seq")),
    "delegations": (("id",),),
    "policies": (("id",),),
    "policy_stages": (("policy_id", "stage", "group_name"),),
    "policy_revocations": (("policy_id",),),
    "policy_bindings": (("approval_id",),),
    "approval_steps": (("id",), ("approval_id", "operator")),
}


# 0016a: "assign to me" (docs/policies.md): who took an inbox item on, each with its signed
# decision; evidence like the policy tables (core/storage/assign_sql.py refuses the rest).
# An item's assignee is its last row's (``seq``: 1, 2, ... per item).
assignments = Table(
    "assignments",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("item_kind", String(16), nullable=False),  # approval / question / conflict / effect
    Column("item_id", String(200), nullable=False),
    Column("seq", Integer, nullable=False),
    Column("assignee", String(200), nullable=False),  # the operator's name
    Column("decision_id", String(64), nullable=False),
    Column("created_at", Float, nullable=False),
    UniqueConstraint("item_id", "seq", name="uq_assignments_seq"),
)
ASSIGN_KEYS: dict[str, tuple[tuple[str, ...], ...]] = {"assignments": (("id",), ("item_id", "seq"))}


# 0010k: a recorded key is never deleted nor put again under its id (``proctor verify`` and the
# desk, without a trust file, check signatures against the name recorded with it).
KEY_KEYS: dict[str, tuple[tuple[str, ...], ...]] = {"operator_keys": (("key_id",),)}


# 0005: facts about the journal itself (``journal_id``, named by every signature).
journal_meta = Table(
    "journal_meta",
    metadata,
    Column("key", String(64), primary_key=True),
    Column("value", Text, nullable=False),
)


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
