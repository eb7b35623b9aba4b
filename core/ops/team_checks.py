"""Team mode's check triggers: ``trg_<table>_team``, one BEFORE INSERT OR UPDATE trigger
per written table, and the helper functions they use. What they refuse is listed in
:mod:`.team`'s docstring."""

from __future__ import annotations

from proctor.core.decisions.writer import CONSUME_WINDOW
from proctor.core.ops.team_undo import APPROVAL_UNDO, QUESTION_UNDO

from .team_access import (
    AGENT_TABLES,
    OPERATOR,
    OPERATOR_COLUMNS,
    OPERATOR_TABLES,
    STRICT_TABLES,
)

# how far (seconds) a rule decision's decided_at may be from the server's clock
CLOCK_SKEW = 300
PERSON_TRUST_SQL = "('user_confirmed', 'operator_edited')"  # core/memory.PERSON_TRUST
# what a person confirmed (or wrote) in a memory entry, which only an operator login changes
MEMORY_PROTECTED = (
    "scope",
    "scope_key",
    "kind",
    "title",
    "content",
    "content_hash",
    "priority",
    "trust",
    "sensitivity",
    "pinned",
    "confirmed",
    "deleted",
)
CHECKED = "trg_{table}_team"


def _refuse(message: str) -> str:
    quoted = message.replace("'", "''")
    return (
        f"RAISE EXCEPTION '{quoted}' USING ERRCODE = 'insufficient_privilege', "
        "HINT = 'Connect as a login of the role that may do this.';"
    )


def helper_sql(owner: str) -> list[str]:
    """The functions every check uses (SECURITY INVOKER; search_path pinned so a session's
    temporary tables cannot stand in for the journal's)."""
    path = "SET search_path = {schema}, pg_catalog, pg_temp"
    return [
        f"""CREATE OR REPLACE FUNCTION proctor_privileged() RETURNS boolean LANGUAGE sql
        STABLE {path} AS $fn$ SELECT pg_has_role(session_user, '{owner}', 'MEMBER') $fn$""",
        f"""CREATE OR REPLACE FUNCTION proctor_is_operator() RETURNS boolean LANGUAGE sql
        STABLE {path} AS $fn$ SELECT pg_has_role(session_user, '{OPERATOR}', 'MEMBER') $fn$""",
        # an "operator:NAME" value is only this login's own (``strict``: any value must be)
        f"""CREATE OR REPLACE FUNCTION proctor_check_operator(value text, strict boolean)
        RETURNS void LANGUAGE plpgsql STABLE {path} AS $fn$ BEGIN
          IF value IS NULL THEN RETURN; END IF;
          IF strict OR value LIKE 'operator:%' THEN
            IF NOT proctor_is_operator() THEN
              {_refuse("an agent or observer login cannot write an operator's row")}
            END IF;
            IF value IS DISTINCT FROM 'operator:' || session_user THEN
              RAISE EXCEPTION 'the operator recorded must be the login (operator:%), not %',
                session_user, value USING ERRCODE = 'insufficient_privilege';
            END IF;
          END IF;
        END $fn$""",
        # the server's clock (the statement's start), in the journal's epoch seconds: what a
        # rule's expiry is compared with, never a time the writer chose
        f"""CREATE OR REPLACE FUNCTION proctor_now() RETURNS double precision LANGUAGE sql
        STABLE {path} AS $fn$
          SELECT extract(epoch FROM statement_timestamp())::double precision $fn$""",
        # fnmatch.fnmatchcase's glob as an anchored regular expression
        f"""CREATE OR REPLACE FUNCTION proctor_glob_regex(glob text) RETURNS text
        LANGUAGE plpgsql IMMUTABLE {path} AS $fn$ DECLARE
          out text := '^'; i int := 1; n int := length(glob); c text; j int;
        BEGIN
          WHILE i <= n LOOP
            c := substr(glob, i, 1);
            IF c = '*' THEN out := out || '.*';
            ELSIF c = '?' THEN out := out || '.';
            ELSIF c = '[' THEN
              j := i + 1;
              IF j <= n AND substr(glob, j, 1) = '!' THEN j := j + 1; END IF;
              IF j <= n AND substr(glob, j, 1) = ']' THEN j := j + 1; END IF;
              WHILE j <= n AND substr(glob, j, 1) <> ']' LOOP j := j + 1; END LOOP;
              IF j > n THEN out := out || '\\['; ELSE
                c := substr(glob, i + 1, j - i - 1);
                IF left(c, 1) = '!' THEN c := '^' || substr(c, 2);
                ELSIF left(c, 1) = '^' THEN c := '\\' || c; END IF;
                out := out || '[' || replace(c, '\\', '\\\\') || ']';
                i := j;
              END IF;
            ELSE out := out || regexp_replace(c, '([.^$+(){{}}|\\\\\\[\\]])', '\\\\\\1', 'g');
            END IF;
            i := i + 1;
          END LOOP;
          RETURN out || '$';
        END $fn$""",
        # core/decision_rows.action_resource: the action's resource as rules match it
        f"""CREATE OR REPLACE FUNCTION proctor_action_resource(action text) RETURNS text
        LANGUAGE plpgsql IMMUTABLE {path} AS $fn$ DECLARE a jsonb := action::jsonb; k text;
        BEGIN
          IF a ? 'resource' THEN
            IF jsonb_typeof(a->'resource') <> 'string' THEN RETURN NULL; END IF;
            RETURN a->>'resource';
          END IF;
          IF jsonb_typeof(a->'args') <> 'object' THEN RETURN ''; END IF;
          FOREACH k IN ARRAY ARRAY['path', 'url', 'command', 'to', 'table', 'account'] LOOP
            IF a->'args' ? k THEN
              IF jsonb_typeof(a->'args'->k) <> 'string' THEN RETURN NULL; END IF;
              RETURN a->'args'->>k;
            END IF;
          END LOOP;
          RETURN '';
        END $fn$""",
        # a standing rule may decide this approval: an operator's, live, scoped to its run
        f"""CREATE OR REPLACE FUNCTION proctor_rule_decides(rule text, appr approvals)
        RETURNS boolean LANGUAGE plpgsql STABLE {path} AS $fn$ DECLARE r approval_rules;
          run runs; res text;
        BEGIN
          SELECT * INTO r FROM approval_rules WHERE id = rule;
          SELECT * INTO run FROM runs WHERE id = appr.run_id;
          IF r.id IS NULL OR run.id IS NULL OR r.revoked_at IS NOT NULL
             OR r.created_by NOT LIKE 'operator:%'
             OR (r.expires_at IS NOT NULL AND r.expires_at <= proctor_now())
             OR appr.decided_at IS NULL
             OR abs(appr.decided_at - proctor_now()) > {CLOCK_SKEW} THEN
            RETURN false;
          END IF;
          IF NOT (r.run_id = run.id OR (r.scope = 'space' AND (r.project = run.project
                  OR r.project = '*') AND (r.space IS NULL OR r.space = run.space))) THEN
            RETURN false;
          END IF;
          res := proctor_action_resource(appr.action);
          RETURN res IS NOT NULL
             AND appr.action_name ~ proctor_glob_regex(r.action_pattern)
             AND res ~ proctor_glob_regex(r.resource_pattern)
             AND appr.status = CASE r.effect WHEN 'allow' THEN 'approved' ELSE 'denied' END;
        END $fn$""",
    ]


def _operator_checks(table: str) -> str:
    bare = table in STRICT_TABLES  # every value there must be this operator's own label
    columns = OPERATOR_COLUMNS.get(table, ())
    checks = []
    for c in columns:  # a value written now (an UPDATE that keeps it is not checked again)
        check = f"PERFORM proctor_check_operator(NEW.{c}::text, {str(bare).lower()});"
        checks.append(
            f"IF TG_OP = 'INSERT' THEN {check} ELSIF NEW.{c} IS DISTINCT FROM "
            f"OLD.{c} THEN {check} END IF;"
        )
    return " ".join(checks)


def _decided(table: str, column: str) -> str:  # the column it reads
    """A login deciding a request its own login filed is refused."""
    return (
        f"IF OLD.requested_by = session_user THEN "
        f"{_refuse(f'the login that filed this {table} row cannot decide it')} END IF;"
    )


# a genuine standing-rule decision: the rule an operator made (not this login), live, covering it
RULE_DECIDES = (
    "NEW.rule_id IS NOT NULL AND NEW.decided_by = 'rule:' || NEW.rule_id "
    "AND proctor_rule_decides(NEW.rule_id, NEW) AND (SELECT created_by FROM "
    "approval_rules WHERE id = NEW.rule_id) IS DISTINCT FROM "
    "'operator:' || session_user"
)

# what an agent login may not do to a request (approvals, questions): withdraw or expire one
# another login filed, or expire one before its expiry by the server's clock
OTHERS_REQUEST = "an agent login withdraws or expires only the requests its own login filed"
NOT_DUE = (
    "an agent login expires a request only at or after its expiry by the server's clock "
    "(and an approval only if it expires to a denial)"
)
# core/storage/waiter.py: only the login that filed a request stamps that it waits for it
WAITER_STAMP = f"""
  IF TG_OP = 'UPDATE' AND NEW.waiter_seen_at IS DISTINCT FROM OLD.waiter_seen_at
     AND OLD.requested_by IS DISTINCT FROM session_user THEN
    {_refuse("an agent login stamps that it waits only on the requests its own login filed")}
  END IF;
"""
# 0018e (core/policies/escalation.py): the policy the request is bound to denies it at its
# deadline, by the server's clock (any login may sweep it, as an expiry)
POLICY_DENIES = (
    "NEW.status = 'denied' AND NEW.decided_by LIKE 'policy:%' AND EXISTS (SELECT 1 FROM "
    "policy_bindings b JOIN policies p ON p.id = b.policy_id WHERE b.approval_id = NEW.id "
    "AND NEW.decided_by = 'policy:' || p.id AND p.at_deadline = 'deny' "
    "AND OLD.created_at + p.deadline <= proctor_now()) AND NEW.rule_id IS NULL "
    "AND NEW.approved_action IS NOT DISTINCT FROM OLD.approved_action "
    "AND NEW.approved_digest IS NOT DISTINCT FROM OLD.approved_digest "
    "AND NEW.snoozed_until IS NOT DISTINCT FROM OLD.snoozed_until AND NEW.consumed_at IS NULL"
)
# 0014p: a step names the login that takes it
STEP_RULES = f"""
  IF NEW.operator IS DISTINCT FROM session_user::text THEN
    {_refuse("a step is the login's own (approval_steps.operator is the login)")}
  END IF;
  RETURN NEW;
"""
# core/decisions/writer.consume_deadline: until when an approved approval may be consumed
CONSUME_DEADLINE = (
    "(CASE WHEN OLD.expires_at IS NOT NULL AND coalesce(OLD.decided_at, OLD.created_at) "
    "< OLD.expires_at THEN OLD.expires_at ELSE coalesce(OLD.decided_at, OLD.created_at) "
    f"+ {CONSUME_WINDOW} END"
    " + GREATEST(coalesce(OLD.hold_until - coalesce(OLD.decided_at, OLD.created_at), 0), 0))"
)

APPROVAL_RULES = f"""
  IF TG_OP = 'UPDATE' AND OLD.status = 'pending' AND coalesce({POLICY_DENIES}, false) THEN
    RETURN NEW;
  END IF;
  IF (TG_OP = 'INSERT' AND NEW.status IN ('approved', 'denied'))
     OR (TG_OP = 'UPDATE' AND NEW.status IS DISTINCT FROM OLD.status
         AND OLD.status = 'pending' AND NEW.status IN ('approved', 'denied')) THEN
    IF (TG_OP = 'INSERT' OR OLD.requested_by = session_user) AND NOT ({RULE_DECIDES}) THEN
      {_refuse("the login that filed this approvals row cannot decide it")}
    END IF;
    IF proctor_is_operator() AND NEW.decided_by IS DISTINCT FROM 'operator:' || session_user
       AND NOT ({RULE_DECIDES}) THEN
      {_refuse("an operator login decides as itself (operator:<login>) or by a live rule")}
    END IF;
  END IF;
  IF TG_OP = 'UPDATE' AND (OLD.consumed_at IS NOT NULL OR OLD.consumed_effect_key IS NOT NULL)
     AND (NEW.consumed_at IS DISTINCT FROM OLD.consumed_at
          OR NEW.consumed_effect_key IS DISTINCT FROM OLD.consumed_effect_key) THEN
    {_refuse("an approval once consumed stays consumed (it gates one effect)")}
  END IF;
  {APPROVAL_UNDO}
  IF proctor_is_operator() THEN RETURN NEW; END IF;
  IF TG_OP = 'INSERT' THEN
    IF NEW.status <> 'pending' OR NEW.decided_by IS NOT NULL OR NEW.approved_action IS NOT NULL
       OR NEW.approved_digest IS NOT NULL OR NEW.rule_id IS NOT NULL THEN
      {_refuse("an agent login files an approval as pending; only operators decide it")}
    END IF;
    RETURN NEW;
  END IF;
  {WAITER_STAMP}
  IF NEW.approved_action IS DISTINCT FROM OLD.approved_action
     OR NEW.approved_digest IS DISTINCT FROM OLD.approved_digest
     OR NEW.snoozed_until IS DISTINCT FROM OLD.snoozed_until THEN
    {_refuse("an agent login cannot edit, snooze or decide an approval")}
  END IF;
  IF NEW.status IS NOT DISTINCT FROM OLD.status THEN
    IF NEW.decided_by IS DISTINCT FROM OLD.decided_by
       OR NEW.decided_at IS DISTINCT FROM OLD.decided_at
       OR NEW.decision_reason IS DISTINCT FROM OLD.decision_reason
       OR NEW.decision_scope IS DISTINCT FROM OLD.decision_scope
       OR NEW.rule_id IS DISTINCT FROM OLD.rule_id THEN
      {_refuse("an agent login cannot change a decision")}
    END IF;
    RETURN NEW;
  END IF;
  IF NEW.status IN ('expired', 'cancelled') AND OLD.requested_by IS DISTINCT FROM session_user
  THEN
    {_refuse(OTHERS_REQUEST)}
  END IF;
  IF OLD.status = 'pending' AND NEW.status IN ('expired', 'cancelled')
     AND coalesce(NEW.decided_by, '') NOT LIKE 'rule:%' AND NEW.rule_id IS NULL THEN
    IF NEW.status = 'expired' AND (OLD.on_expiry IS DISTINCT FROM 'deny'
       OR OLD.expires_at IS NULL OR OLD.expires_at > proctor_now()) THEN
      {_refuse(NOT_DUE)}
    END IF;
    RETURN NEW;
  END IF;
  IF OLD.status = 'approved' AND NEW.status = 'expired'
     AND NEW.decided_by IS NOT DISTINCT FROM OLD.decided_by
     AND NEW.decision_scope IS NOT DISTINCT FROM OLD.decision_scope
     AND NEW.rule_id IS NOT DISTINCT FROM OLD.rule_id THEN
    IF {CONSUME_DEADLINE} > proctor_now() THEN
      {_refuse("an agent login lets an approval lapse only once its time to be used has passed")}
    END IF;
    RETURN NEW;
  END IF;
  IF OLD.status = 'pending' AND NEW.status IN ('approved', 'denied')
     AND NEW.rule_id IS NOT NULL AND NEW.decided_by = 'rule:' || NEW.rule_id
     AND proctor_rule_decides(NEW.rule_id, NEW) THEN
    RETURN NEW;
  END IF;
  {_refuse("an agent login cannot decide an approval")}
"""


# an agent login withdraws or expires only a question its login filed, and expires it only when due
QUESTION_CLOSING = f"""
  {WAITER_STAMP}
  IF TG_OP = 'UPDATE' AND NEW.status IS DISTINCT FROM OLD.status
     AND NEW.status IN ('expired', 'cancelled') THEN
    IF OLD.requested_by IS DISTINCT FROM session_user THEN
      {_refuse(OTHERS_REQUEST)}
    END IF;
    IF NEW.status = 'expired' AND (OLD.expires_at IS NULL OR OLD.expires_at > proctor_now()) THEN
      {_refuse(NOT_DUE)}
    END IF;
  END IF;
"""


def _resolution_rules(
    table: str, closed: str, answer: str, closing: str = "", undo: str = ""
) -> str:
    """A question (``closed``: answered or dismissed) or a memory conflict (``closed``: resolved): an
    agent login files it open and may withdraw a question or let it expire (``closing``
    says when), never close it with an answer; an operator login cannot close what its
    own login filed."""
    return f"""
  IF TG_OP = 'UPDATE' AND NEW.status IS DISTINCT FROM OLD.status AND {closed} THEN
    {_decided(table, "resolved_by")}
  END IF;
  {undo}
  IF proctor_is_operator() THEN RETURN NEW; END IF;
  {closing}
  IF TG_OP = 'INSERT' THEN
    IF NEW.resolved_by IS NOT NULL OR NEW.{answer} IS NOT NULL OR {closed} THEN
      {_refuse(f"an agent login files a {table} row open; only operators close it")}
    END IF;
    RETURN NEW;
  END IF;
  IF {closed} AND NEW.status IS DISTINCT FROM OLD.status
     OR NEW.{answer} IS DISTINCT FROM OLD.{answer}
     OR NEW.snoozed_until IS DISTINCT FROM OLD.snoozed_until THEN
    {_refuse(f"an agent login cannot answer or resolve a {table} row")}
  END IF;
  RETURN NEW;
"""


EFFECT_RULES = f"""
  IF TG_OP = 'UPDATE' AND OLD.status = 'committed' AND NEW.status IS DISTINCT FROM OLD.status
  THEN
    {_refuse("a committed effect stays committed (it never runs again)")}
  END IF;
  IF proctor_is_operator() THEN RETURN NEW; END IF;
  IF TG_OP = 'INSERT' THEN
    IF NEW.resolved_by IS NOT NULL OR NEW.resolution_reason IS NOT NULL THEN
      {_refuse("an agent login cannot resolve an effect")}
    END IF;
    RETURN NEW;
  END IF;
  -- a retry of a failed effect clears the last resolution (core/effects/rows.py); nothing
  -- else an agent login writes may set one, or move an ambiguous effect on
  IF (NEW.resolved_by IS NOT NULL AND NEW.resolved_by IS DISTINCT FROM OLD.resolved_by)
     OR (NEW.resolution_reason IS NOT NULL
         AND NEW.resolution_reason IS DISTINCT FROM OLD.resolution_reason)
     OR NEW.snoozed_until IS DISTINCT FROM OLD.snoozed_until
     OR (OLD.status = 'ambiguous' AND NEW.status IS DISTINCT FROM OLD.status) THEN
    {_refuse("an agent login cannot resolve an ambiguous effect")}
  END IF;
  RETURN NEW;
"""


DECISION_RULES = f"""
  IF NOT proctor_is_operator() AND NEW.actor NOT LIKE 'rule:%' AND NEW.actor NOT LIKE
     'system:%' AND NOT (NEW.actor LIKE 'policy:%' AND NEW.source = 'deadline'
     AND NEW.target_kind = 'approval') THEN
    {_refuse("an agent login records no decisions (only a rule's or the system's)")}
  END IF;
  RETURN NEW;
"""
RUN_RULES = f"""
  IF proctor_is_operator() THEN RETURN NEW; END IF;
  IF (TG_OP = 'INSERT' AND (NEW.retry_requested IS NOT NULL OR NEW.retry_reason IS NOT NULL))
     OR (TG_OP = 'UPDATE' AND (NEW.retry_requested IS DISTINCT FROM OLD.retry_requested
         OR NEW.retry_reason IS DISTINCT FROM OLD.retry_reason)) THEN
    {_refuse("only an operator login asks a run to retry (retry_requested, retry_reason)")}
  END IF;
  RETURN NEW;
"""

TOOL_CALL_RULES = f"""
  IF proctor_is_operator() THEN RETURN NEW; END IF;
  IF TG_OP = 'UPDATE' AND OLD.status = 'outcome_unknown'
     AND NEW.status IS DISTINCT FROM OLD.status THEN
    {_refuse("a person resolves a tool call whose outcome is unknown, not an agent login")}
  END IF;
  RETURN NEW;
"""

MEMORY_RULES = f"""
  IF proctor_is_operator() THEN RETURN NEW; END IF;
  IF (NEW.confirmed OR NEW.trust IN {PERSON_TRUST_SQL}) AND (TG_OP = 'INSERT'
      OR NEW.confirmed IS DISTINCT FROM OLD.confirmed OR NEW.trust IS DISTINCT FROM OLD.trust)
  THEN
    {_refuse("only an operator login confirms a memory entry or writes a person's trust")}
  END IF;
  IF TG_OP = 'UPDATE' AND (OLD.confirmed OR OLD.trust IN {PERSON_TRUST_SQL})
     AND ({" OR ".join(f"NEW.{c} IS DISTINCT FROM OLD.{c}" for c in MEMORY_PROTECTED)}) THEN
    {_refuse("an agent login cannot change a memory entry a person confirmed")}
  END IF;
  RETURN NEW;
"""


def check_trigger_sql(schema: str) -> dict[str, list[str]]:
    """``trg_<table>_team``: one BEFORE INSERT OR UPDATE trigger per written table."""
    extra = {
        "approvals": APPROVAL_RULES,
        "effects": EFFECT_RULES,
        "decisions": DECISION_RULES,
        "approval_steps": STEP_RULES,
        "tool_calls": TOOL_CALL_RULES,
        "runs": RUN_RULES,
        "memory_entries": MEMORY_RULES,
        "interactions": _resolution_rules(
            "interactions",
            "NEW.status IN ('resolved', 'dismissed')",
            "response",
            QUESTION_CLOSING,
            QUESTION_UNDO,
        ),
        "memory_reconciliations": _resolution_rules(
            "memory_reconciliations", "NEW.status <> 'pending'", "resolution_reason"
        ),
    }
    sql = {}
    for table in OPERATOR_TABLES:
        name = CHECKED.format(table=table)
        only_operators = (
            ""
            if table in AGENT_TABLES
            else (
                f"IF NOT proctor_is_operator() THEN "
                f"{_refuse(f'only an operator login writes {table}')} END IF;"
            )
        )
        body = (
            f"IF proctor_privileged() THEN RETURN NEW; END IF; {only_operators} "
            f"{_operator_checks(table)} {extra.get(table, 'RETURN NEW;')}"
        )
        sql[name] = [
            f"CREATE OR REPLACE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql "
            f"SET search_path = {schema}, pg_catalog, pg_temp AS $fn$ BEGIN {body} END $fn$",
            f"CREATE OR REPLACE TRIGGER {name} BEFORE INSERT OR UPDATE ON {table} "
            f"FOR EACH ROW EXECUTE FUNCTION {name}()",
        ]
    return sql
