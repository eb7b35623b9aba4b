"""Roles the server enforces (`proctor team init`, core/ops/team.py), against a real PostgreSQL
server: an agent login's raw SQL cannot approve, forge a decision, an operator's audit row or
event, become an operator, or use a rule it may not; an observer writes nothing; an operator
is recorded as its own login and cannot decide what its login filed. The positive path
goes through the public API as each login."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import team_fixtures
from team_fixtures import Team

from proctor.core import Actor, Journal, errors

team, team_logins = team_fixtures.team, team_fixtures.team_logins  # the fixtures

ACTION = {"tool": "shell", "args": {"command": "make build"}}


@pytest.fixture
def agent(team) -> Iterator[Journal]:
    with team.journal("agent_a", Actor.agent("builder")) as j:
        yield j


@pytest.fixture
def operator(team) -> Iterator[Journal]:
    with team.journal("op_dana", Actor.operator("op_dana")) as j:
        yield j


@pytest.fixture
def pending(agent):
    run = agent.runs.start("proj", "team run")
    return run, agent.approvals.request(run.id, ACTION, reason="build it")


def refused(conn: Any, sql: str, params: Any = None) -> str:
    import psycopg

    with pytest.raises(psycopg.errors.InsufficientPrivilege) as err:
        conn.execute(sql, params)
    return str(err.value)


def status_of(team: Team, approval_id: str) -> tuple:
    with team.owner() as conn:
        return conn.execute(
            "SELECT status, decided_by, version FROM approvals WHERE id = %s", (approval_id,)
        ).fetchone()


# ---------------------------------------------------------------- an agent login's raw SQL


def test_an_agent_login_cannot_approve_by_raw_sql(team, pending):
    _run, approval = pending
    before = status_of(team, approval.id)
    with team.raw("agent_a") as conn:
        for sets in (
            "status = 'approved', decided_by = 'operator:op_dana', decided_at = 1",
            "status = 'approved'",
            "status = 'approved', decided_by = 'system:expiry'",
            "status = 'approved', decided_by = 'rule:rule_x', rule_id = 'rule_x'",
            "status = 'denied', decided_by = 'agent:builder'",
            "approved_action = '{\"tool\": \"shell\"}', approved_digest = 'x'",
            "snoozed_until = 99999999999",
        ):
            refused(
                conn,
                f"UPDATE approvals SET {sets}, version = version + 1 WHERE id = %s",
                (approval.id,),
            )
        refused(conn, "UPDATE approvals SET status = 'approved' WHERE true")
    assert status_of(team, approval.id) == before == ("pending", None, 1)


def test_an_agent_login_cannot_insert_a_decided_approval(team, pending):
    _run, _approval = pending
    with team.raw("agent_a") as conn:
        row = conn.execute("SELECT * FROM approvals LIMIT 1").fetchone()
        cols = [d.name for d in conn.execute("SELECT * FROM approvals LIMIT 0").description]
        values = dict(zip(cols, row, strict=True))
        values.update(
            id="apr_forged",
            request_key="forged",
            status="approved",
            decided_by="agent:builder",
            decided_at=1.0,
        )
        names = ", ".join(values)
        marks = ", ".join(["%s"] * len(values))
        refused(conn, f"INSERT INTO approvals ({names}) VALUES ({marks})", list(values.values()))


def decision_row(approval_id: str, run_id: str, actor: str) -> tuple:
    return (
        "dec_forged",
        "approval",
        approval_id,
        run_id,
        json.dumps({"approved": True, "scope": "once"}),
        actor,
        "desk",
        None,
        None,
        1.0,
        "0" * 64,
    )


DECISION_INSERT = (
    "INSERT INTO decisions (id, target_kind, target_id, run_id, decision, actor, "
    "source, request_id, reason, created_at, digest) VALUES "
    "(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
)


def test_an_agent_login_cannot_forge_a_decision_row(team, pending):
    run, approval = pending
    with team.raw("agent_a") as conn:
        for actor in ("operator:op_dana", "agent:builder", "op_dana"):
            refused(conn, DECISION_INSERT, decision_row(approval.id, run.id, actor))
    with team.owner() as conn:
        assert conn.execute("SELECT count(*) FROM decisions").fetchone()[0] == 0


def test_an_agent_login_cannot_write_an_operators_audit_row_or_event(team, pending):
    run, approval = pending
    with team.raw("agent_a") as conn:
        refused(
            conn,
            "INSERT INTO audit (sequence, id, actor, action, entity_kind, entity_id, "
            "run_id, before, after, reason, request_id, request_digest, created_at, "
            "prev_digest, digest) VALUES (9999, 'aud_forged', 'operator:op_dana', "
            "'approval.approved', 'approval', %s, %s, '{}', '{}', NULL, NULL, NULL, "
            "1.0, %s, %s)",
            (approval.id, run.id, "0" * 64, "1" * 64),
        )
        refused(
            conn,
            "INSERT INTO events (id, run_id, sequence, type, payload, run_version, "
            "attempt, actor, created_at, prev_digest, digest) VALUES ('evt_forged', "
            "%s, 999, 'approval.approved', '{}', 1, 1, 'operator:op_dana', 1.0, %s, %s)",
            (run.id, "0" * 64, "1" * 64),
        )


def test_an_agent_login_cannot_make_rules_or_sign(team, pending):
    with team.raw("agent_a") as conn:
        refused(
            conn,
            "INSERT INTO approval_rules (id, effect, action_pattern, resource_pattern, "
            "scope, run_id, project, space, created_by, created_at, version) VALUES "
            "('rule_forged', 'allow', '*', '*', 'space', NULL, '*', NULL, "
            "'agent:builder', 1.0, 1)",
        )
        refused(
            conn,
            "INSERT INTO signatures (record_id, record_kind, key_id, operator, payload, "
            "signature, created_at) VALUES ('dec_x', 'decision', 'k', 'operator:op_dana', '{}', "
            "'s', 1.0)",
        )
        refused(
            conn,
            "INSERT INTO operator_keys (key_id, operator, public_key, first_seen_at) "
            "VALUES ('k', 'operator:op_dana', 'pk', 1.0)",
        )


def test_an_agent_login_cannot_answer_a_question(team, agent, pending):
    run, _approval = pending
    question = agent.questions.ask(run.id, "choice", "which?", options=["a", "b"])
    with team.raw("agent_a") as conn:
        refused(
            conn,
            "UPDATE interactions SET status = 'resolved', response = '{\"choice\": "
            '"a"}\', version = version + 1 WHERE id = %s',
            (question.id,),
        )
        refused(conn, "UPDATE interactions SET response = '{}' WHERE id = %s", (question.id,))
    assert agent.questions.get(question.id).status == "requested"


def test_an_agent_login_cannot_dismiss_a_question_and_an_operator_can(
    team, agent, operator, pending
):
    """Issue 37: a dismissal is an operator's decision, never an agent login's (even one
    naming an operator as its decider); the operator's goes through."""
    run, _approval = pending
    question = agent.questions.ask(run.id, "question", "which?")
    with team.raw("agent_a") as conn:
        refused(
            conn,
            "UPDATE interactions SET status = 'dismissed', resolved_by = 'operator:op_a', "
            'resolved_at = 1, response = \'{"dismissed": true, "reason": "x"}\', '
            "version = version + 1 WHERE id = %s",
            (question.id,),
        )
        refused(  # no reason written: only the move, with an operator named as its decider
            conn,
            "UPDATE interactions SET status = 'dismissed', resolved_by = 'operator:op_a', "
            "resolved_at = 1, version = version + 1 WHERE id = %s",
            (question.id,),
        )
    assert agent.questions.get(question.id).status == "requested"
    done = operator.questions.dismiss(question.id, "not needed", expected_version=1)
    assert agent.questions.get(question.id).dismissal == "dismissed by the operator: not needed"
    assert done.resolved_by == operator.actor.label


def test_an_agent_login_cannot_resolve_an_unknown_outcome_or_confirm_memory(
    team, agent, operator, pending
):
    run, _approval = pending
    call = agent.runs.record_tool_call(run.id, "http.post", {"url": "https://x"})
    with team.owner() as conn:  # as a crash leaves it (runs.py: the seed rule)
        conn.execute("UPDATE tool_calls SET status = 'outcome_unknown' WHERE id = %s", (call.id,))
    entry = agent.memory.add("project", "proj", "db", "db1", run_id=run.id)
    with team.raw("agent_a") as conn:
        refused(conn, "UPDATE tool_calls SET status = 'succeeded' WHERE id = %s", (call.id,))
        refused(
            conn,
            "UPDATE memory_entries SET confirmed = true, trust = 'user_confirmed' WHERE id = %s",
            (entry.id,),
        )
        refused(
            conn, "UPDATE memory_entries SET trust = 'user_confirmed' WHERE id = %s", (entry.id,)
        )
    confirmed = operator.memory.confirm(entry.id, expected_version=entry.version)
    assert confirmed.confirmed


def test_an_ambiguous_effect_waits_for_an_operator_then_the_agent_may_retry(
    team, agent, operator, pending
):
    from .helpers import FakeClock

    run, _approval = pending
    clock = FakeClock()
    with team.journal("agent_a", Actor.agent("builder"), clock=clock) as timed:
        timed.effects.reserve("fx-lapse", tool="pay", run_id=run.id, owner="w", lease_seconds=5)
        clock.advance(10)
        with pytest.raises(errors.EffectAmbiguous):  # the lease lapsed mid-flight
            timed.effects.reserve("fx-lapse", tool="pay", run_id=run.id, owner="w2")
    with team.raw("agent_a") as conn:
        for sets in (
            "status = 'failed'",
            "status = 'committed'",
            "resolved_by = 'agent:builder', resolution_reason = 'trust me'",
        ):
            refused(conn, f"UPDATE effects SET {sets} WHERE key = 'fx-lapse'")
    effect = operator.effects.get("fx-lapse")
    operator.effects.resolve(
        "fx-lapse", "failed", reason="never sent", expected_version=effect.version
    )
    retried = agent.effects.reserve("fx-lapse", tool="pay", run_id=run.id, owner="w3")
    assert retried.status == "reserved" and retried.resolved_by is None


def test_an_agent_login_cannot_become_an_operator_or_lift_the_checks(team, pending):
    import psycopg

    _run, approval = pending
    with team.raw("agent_a") as conn:
        refused(conn, "SET ROLE proctor_operator")
        refused(conn, "SET ROLE op_dana")
        refused(conn, "SET SESSION AUTHORIZATION op_dana")
        for ddl in (
            "ALTER TABLE approvals DISABLE TRIGGER ALL",
            "DROP TRIGGER trg_approvals_team ON approvals",
            "CREATE FUNCTION public.pwn() RETURNS int LANGUAGE sql AS 'SELECT 1'",
            "TRUNCATE approvals",
            "DELETE FROM approvals",
            "UPDATE journal_meta SET value = 'x'",
            "SET session_replication_role = replica",
        ):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(ddl)
        # the checks' own functions, called directly with forged arguments
        with pytest.raises(psycopg.Error):
            conn.execute("SELECT trg_approvals_team()")
        refused(conn, "SELECT proctor_check_operator('operator:op_dana', false)")
        refused(conn, "SELECT proctor_check_operator('op_dana', true)")
        assert (
            conn.execute(
                "SELECT proctor_rule_decides('rule_x', a) FROM approvals a WHERE id = %s",
                (approval.id,),
            ).fetchone()[0]
            is False
        )
    assert status_of(team, approval.id)[0] == "pending"


def test_a_temporary_table_cannot_stand_in_for_the_rules(team, pending):
    """The checks read the journal's tables, not a session's TEMP table of the same name."""
    run, approval = pending
    with team.raw("agent_a") as conn:
        conn.execute(
            "CREATE TEMP TABLE approval_rules AS SELECT * FROM public.approval_rules WITH NO DATA"
        )
        conn.execute(
            "INSERT INTO approval_rules (id, effect, action_pattern, resource_pattern, "
            "scope, run_id, project, space, created_by, created_at, version) VALUES "
            "('rule_tmp', 'allow', '*', '*', 'run', %s, 'proj', NULL, "
            "'operator:op_dana', 1.0, 1)",
            (run.id,),
        )
        refused(
            conn,
            "UPDATE approvals SET status = 'approved', decided_by = 'rule:rule_tmp', "
            "rule_id = 'rule_tmp', decided_at = 2.0, version = 2 WHERE id = %s",
            (approval.id,),
        )


def test_an_agent_login_may_use_only_a_rule_that_covers_its_request(team, agent, operator):
    """A run-scoped rule an operator made decides that run's next matching request through
    the agent's own Journal; cited by raw SQL for another run, for another tool, or once
    revoked, it decides nothing."""
    run = agent.runs.start("proj", "ruled run")
    first = agent.approvals.request(run.id, ACTION, reason="first")
    operator.approvals.decide(first.id, True, expected_version=1, scope="run")
    rule_id = operator.approvals.get(first.id).rule_id
    again = agent.approvals.request(run.id, ACTION, reason="again")
    assert again.status == "approved" and again.decided_by == f"rule:{rule_id}"
    other_run = agent.runs.start("proj", "another run")
    elsewhere = agent.approvals.request(other_run.id, ACTION, reason="elsewhere")
    other_tool = agent.approvals.request(run.id, {"tool": "pay", "args": {"to": "x"}}, reason="pay")
    forge = (
        "UPDATE approvals SET status = 'approved', decided_by = %s, rule_id = %s, "
        "decided_at = %s, version = version + 1 WHERE id = %s"
    )
    with team.raw("agent_a") as conn:
        for target in (elsewhere, other_tool):
            refused(conn, forge, (f"rule:{rule_id}", rule_id, target.created_at, target.id))
    operator.approvals.revoke_rule(rule_id, expected_version=1, reason="done")
    late = agent.approvals.request(run.id, ACTION, reason="after the revocation")
    assert late.status == "pending"
    with team.raw("agent_a") as conn:
        refused(conn, forge, (f"rule:{rule_id}", rule_id, late.created_at, late.id))


def test_the_server_records_who_filed_a_request(team, pending):
    _run, approval = pending
    with team.raw("agent_a") as conn:
        conn.execute("UPDATE approvals SET requested_by = 'op_eli' WHERE id = %s", (approval.id,))
    with team.owner() as conn:
        assert (
            conn.execute(
                "SELECT requested_by FROM approvals WHERE id = %s", (approval.id,)
            ).fetchone()[0]
            == "agent_a"
        )


# ---------------------------------------------------------------- observers and operators


def test_an_observer_reads_and_writes_nothing(team, pending):
    import psycopg

    run, approval = pending
    with team.journal("obs_fay", Actor.operator("obs_fay"), read_only=True) as j:
        assert [i.id for i in j.inbox.list().items] == [approval.id]
    with team.raw("obs_fay") as conn:
        for sql in (
            "INSERT INTO runs (id) VALUES ('run_x')",
            "UPDATE approvals SET status = 'approved'",
            "UPDATE runs SET title = 'x'",
            "INSERT INTO changes (seq) VALUES (1)",
        ):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(sql)
        refused(conn, DECISION_INSERT, decision_row(approval.id, run.id, "operator:obs_fay"))
    with team.journal("obs_fay", Actor.operator("obs_fay")) as j, pytest.raises(errors.NotAllowed):
        j.approvals.decide(approval.id, True, expected_version=1)
    assert status_of(team, approval.id)[0] == "pending"


def test_an_operator_is_recorded_as_its_login_only(team, pending):
    run, approval = pending
    with team.raw("op_dana") as conn:
        refused(conn, DECISION_INSERT, decision_row(approval.id, run.id, "operator:op_eli"))
        refused(
            conn,
            "UPDATE approvals SET status = 'approved', decided_by = 'operator:op_eli', "
            "decided_at = 2.0, version = 2 WHERE id = %s",
            (approval.id,),
        )
        refused(
            conn,
            "INSERT INTO signatures (record_id, record_kind, key_id, operator, payload, "
            "signature, created_at) VALUES ('dec_x', 'decision', 'k', 'operator:op_eli', "
            "'{}', 's', 1.0)",
        )
    with (
        team.journal("op_dana", Actor.operator("eli")) as typed_name,
        pytest.raises(errors.NotAllowed, match="the operator recorded must be the login"),
    ):
        typed_name.approvals.decide(approval.id, True, expected_version=1)
    assert status_of(team, approval.id) == ("pending", None, 1)


def test_an_agent_files_an_operator_decides_the_agent_sees_it(team, agent, operator, pending):
    run, approval = pending
    decided = operator.approvals.decide(approval.id, True, expected_version=1, reason="ok")
    assert decided.status == "approved" and decided.decided_by == "operator:op_dana"
    seen = agent.approvals.get(approval.id)
    assert seen.status == "approved" and seen.decided_by == "operator:op_dana"
    agent.approvals.consume_and_reserve(approval.id, approval.action_digest, "fx-team", owner="w")
    agent.effects.begin("fx-team", owner="w")
    agent.effects.commit("fx-team", {"ok": True}, owner="w")
    question = agent.questions.ask(run.id, "choice", "which?", options=["a", "b"])
    operator.questions.answer(question.id, {"choice": "a"}, expected_version=1)
    assert agent.questions.get(question.id).status == "resolved"
    from proctor.core.audit.verify import verify

    assert verify(operator).ok


def test_an_operator_cannot_decide_what_its_own_login_filed(team):
    with (
        team.journal("op_dana", Actor.agent("dana-script")) as filer,
        team.journal("op_dana", Actor.operator("op_dana")) as decider,
    ):
        run = filer.runs.start("proj", "self-serve")
        mine = filer.approvals.request(run.id, ACTION, reason="let me")
        with pytest.raises(errors.NotAllowed, match="cannot decide it"):
            decider.approvals.decide(mine.id, True, expected_version=1)
        assert decider.approvals.get(mine.id).status == "pending"
    with team.journal("op_eli", Actor.operator("op_eli")) as other:
        assert other.approvals.decide(mine.id, True, expected_version=1).status == "approved"


def test_an_operator_cannot_dismiss_what_its_own_login_asked(team):
    with (
        team.journal("op_dana", Actor.agent("dana-script")) as filer,
        team.journal("op_dana", Actor.operator("op_dana")) as decider,
    ):
        run = filer.runs.start("proj", "self-serve")
        mine = filer.questions.ask(run.id, "question", "may I?")
        with pytest.raises(errors.NotAllowed, match="cannot decide it"):
            decider.questions.dismiss(mine.id, "sure", expected_version=1)
        assert decider.questions.get(mine.id).status == "requested"
    with team.journal("op_eli", Actor.operator("op_eli")) as other:
        assert other.questions.dismiss(mine.id, "no", expected_version=1).status == "dismissed"


def test_a_busy_journal_is_built_by_an_agent_login_and_an_operator_login(team):
    """Everything helpers.populate does (a row in every table: rules, expiry, cancelled
    runs, lapsed leases, memory conflicts, answers) goes through the checks: nothing an
    agent or an operator may do is refused."""
    from .helpers import FakeClock, populate

    clock = FakeClock()
    with (
        team.journal("agent_a", Actor.agent("agent-1"), clock=clock) as agent,
        team.journal("op_dana", Actor.operator("op_dana"), clock=clock) as operator,
    ):
        populate(agent, operator, clock)
        from proctor.core.audit.verify import verify

        assert verify(operator).ok


# ---------------------------------------------------------------- review holes (adversary)


FORGE_RULE = (
    "UPDATE approvals SET status = 'approved', decided_by = %s, rule_id = %s, "
    "decided_at = %s, version = version + 1 WHERE id = %s"
)


def test_an_agent_login_cannot_use_an_expired_rule_by_choosing_decided_at(team, agent, operator):
    """A rule's expiry is compared with the server's clock, not with the decided_at the
    writer chose (0, NULL); a decided_at far from the server's clock is refused."""
    import time

    run = agent.runs.start("proj", "expiring rule")
    first = agent.approvals.request(run.id, ACTION, reason="first")
    waiting = agent.approvals.request(run.id, ACTION, reason="filed before the rule")
    operator.approvals.decide(first.id, True, expected_version=1, scope="run")
    rule_id = operator.approvals.get(first.id).rule_id
    with team.owner() as conn:  # a rule's expiry is identity (0009b): the owner lifts that
        conn.execute(
            "ALTER TABLE approval_rules DISABLE TRIGGER trg_approval_rules_census_identity"
        )
        conn.execute(
            "UPDATE approval_rules SET expires_at = extract(epoch FROM now()) - 60 WHERE id = %s",
            (rule_id,),
        )
    with team.raw("agent_a") as conn:
        for decided_at in (0.0, None, time.time()):
            refused(conn, FORGE_RULE, (f"rule:{rule_id}", rule_id, decided_at, waiting.id))
    with team.owner() as conn:
        conn.execute("UPDATE approval_rules SET expires_at = NULL WHERE id = %s", (rule_id,))
        conn.execute("ALTER TABLE approval_rules ENABLE TRIGGER trg_approval_rules_census_identity")
    with team.raw("agent_a") as conn:  # a live rule, but a time far from the server's
        for decided_at in (0.0, None, time.time() + 86400):
            refused(conn, FORGE_RULE, (f"rule:{rule_id}", rule_id, decided_at, waiting.id))
        assert status_of(team, waiting.id)[0] == "pending"
        conn.execute(FORGE_RULE, (f"rule:{rule_id}", rule_id, time.time(), waiting.id))
    assert status_of(team, waiting.id)[:2] == ("approved", f"rule:{rule_id}")


def test_an_operator_cannot_decide_its_own_request_under_another_name(team, agent):
    """requester ≠ approver whatever decided_by says (NULL, an agent's, a rule the login
    made itself); and an operator decides as operator:<login> or by a live rule."""
    import time

    with (
        team.journal("op_dana", Actor.agent("dana-script")) as filer,
        team.journal("op_dana", Actor.operator("op_dana")) as dana,
    ):
        run = filer.runs.start("proj", "self-serve")
        mine = filer.approvals.request(run.id, ACTION, reason="let me")
        theirs = agent.approvals.request(run.id, ACTION, reason="the agent's")
        dana.approvals.decide(theirs.id, True, expected_version=1, scope="run")
        dana_rule = dana.approvals.get(theirs.id).rule_id
    with team.raw("op_dana") as conn:
        for sets in (
            "status = 'approved'",
            "status = 'approved', decided_by = NULL",
            "status = 'approved', decided_by = 'agent:builder'",
            "status = 'denied', decided_by = 'system:expiry'",
            "status = 'approved', decided_by = 'rule:rule_x', rule_id = 'rule_x'",
        ):
            refused(
                conn,
                f"UPDATE approvals SET {sets}, decided_at = {time.time()}, "
                "version = version + 1 WHERE id = %s",
                (mine.id,),
            )
        refused(conn, FORGE_RULE, (f"rule:{dana_rule}", dana_rule, time.time(), mine.id))
    with team.raw("op_eli") as conn:  # not the filer, but still only as itself
        for sets in (
            "status = 'approved'",
            "status = 'approved', decided_by = 'agent:x'",
            "status = 'approved', decided_by = 'rule:rule_x', rule_id = 'rule_x'",
        ):
            refused(
                conn,
                f"UPDATE approvals SET {sets}, decided_at = {time.time()}, "
                "version = version + 1 WHERE id = %s",
                (mine.id,),
            )
        assert status_of(team, mine.id) == ("pending", None, 1)
        conn.execute(FORGE_RULE, (f"rule:{dana_rule}", dana_rule, time.time(), mine.id))
    assert status_of(team, mine.id)[:2] == ("approved", f"rule:{dana_rule}")


def test_an_agent_login_cannot_rewrite_confirmed_memory_or_claim_a_persons_trust(
    team, agent, operator, pending
):
    run, _approval = pending
    entry = agent.memory.add("project", "proj", "db", "db1", run_id=run.id)
    confirmed = operator.memory.confirm(entry.id, expected_version=entry.version)
    loose = agent.memory.add("project", "proj", "cache", "c1", run_id=run.id)
    with team.raw("agent_a") as conn:
        for sets in (
            "content = 'db2'",
            "title = 'other'",
            "kind = 'constraint'",
            "deleted = true",
            "scope = 'global'",
            "scope_key = 'other'",
            "content_hash = 'x'",
            "priority = 99",
            "pinned = NOT pinned",
        ):
            refused(conn, f"UPDATE memory_entries SET {sets} WHERE id = %s", (entry.id,))
        refused(
            conn, "UPDATE memory_entries SET trust = 'operator_edited' WHERE id = %s", (loose.id,)
        )
        row = conn.execute("SELECT * FROM memory_entries WHERE id = %s", (loose.id,)).fetchone()
        cols = [d.name for d in conn.execute("SELECT * FROM memory_entries LIMIT 0").description]
        values = dict(zip(cols, row, strict=True))
        values.update(id="mem_forged", trust="operator_edited", confirmed=False)
        refused(
            conn,
            f"INSERT INTO memory_entries ({', '.join(values)}) VALUES "
            f"({', '.join(['%s'] * len(values))})",
            list(values.values()),
        )
    assert agent.memory.get(entry.id).content == confirmed.content == "db1"


def test_a_consumed_approval_and_a_committed_effect_stay_so(team, agent, operator, pending):
    """One approval gates one effect: an agent login cannot clear or move consumed_*; a
    committed effect cannot be moved back to failed (and so run again)."""
    _run, approval = pending
    operator.approvals.decide(approval.id, True, expected_version=1)
    agent.approvals.consume_and_reserve(approval.id, approval.action_digest, "fx-once", owner="w")
    agent.effects.begin("fx-once", owner="w")
    agent.effects.commit("fx-once", {"ok": True}, owner="w")
    with team.raw("agent_a") as conn:
        for sets in (
            "consumed_at = NULL, consumed_effect_key = NULL",
            "consumed_at = NULL",
            "consumed_effect_key = 'fx-twice'",
            "consumed_at = consumed_at + 1",
        ):
            refused(conn, f"UPDATE approvals SET {sets} WHERE id = %s", (approval.id,))
        for status in ("failed", "reserved", "running", "ambiguous"):
            refused(conn, "UPDATE effects SET status = %s WHERE key = 'fx-once'", (status,))
    with team.owner() as conn:
        assert (
            conn.execute(
                "SELECT consumed_effect_key FROM approvals WHERE id = %s", (approval.id,)
            ).fetchone()[0]
            == "fx-once"
        )
        assert (
            conn.execute("SELECT status FROM effects WHERE key = 'fx-once'").fetchone()[0]
            == "committed"
        )


def test_only_an_operator_login_asks_a_failed_run_to_retry(team, agent, operator):
    """runs.retry_requested is an operator's request (request_retry): an agent login's raw
    SQL cannot set it or its reason, by UPDATE (column grants, the team check) or by
    INSERT of a run that carries one (the team check); the operator's request then works."""
    run = agent.runs.start("proj", "flaky run")
    agent.runs.fail(run.id, "rate limited")
    with team.raw("agent_a") as conn:
        for sets in (
            "retry_requested = current_attempt + 1, retry_reason = 'operator op_dana: go'",
            "retry_requested = 2",
            "retry_reason = 'go'",
        ):
            refused(conn, f"UPDATE runs SET {sets} WHERE id = %s", (run.id,))
        conn.execute("CREATE TEMP TABLE copy AS SELECT * FROM runs WHERE id = %s", (run.id,))
        conn.execute("UPDATE copy SET id = 'run_forged', retry_requested = 2, retry_reason = 'x'")
        assert "retry" in refused(conn, "INSERT INTO runs SELECT * FROM copy")
    failed = agent.runs.get(run.id)
    assert (failed.retry_requested, failed.status) == (None, "failed")
    operator.runs.request_retry(run.id, "the API is back", expected_version=failed.version)
    assert agent.runs.retry(run.id).number == 2


def test_add_user_refuses_the_servers_own_roles_and_sends_no_password(team):
    """team add-user does not turn a role name, the owner, postgres, a superuser or a
    CREATEROLE role into a team login; the password reaches the server only as a SCRAM
    verifier computed client-side."""
    from sqlalchemy import event
    from sqlalchemy.engine import Engine

    from proctor.core.ops.team import add_user

    url = team.url()
    with team.owner() as conn:
        owner = conn.execute("SELECT current_user").fetchone()[0]
        for role, attrs in (("boss_su", "SUPERUSER"), ("boss_cr", "CREATEROLE")):
            conn.execute(f"DROP ROLE IF EXISTS {role}")
            conn.execute(f"CREATE ROLE {role} LOGIN {attrs}")
    try:
        for name in ("proctor_agent", "proctor_operator", "postgres", owner, "boss_su", "boss_cr"):
            with pytest.raises((errors.ValidationError, errors.NotAllowed)):
                add_user(url, name, "agent", "pw-x")
        with team.owner() as conn:
            assert conn.execute(
                "SELECT rolsuper, rolcreaterole FROM pg_roles WHERE rolname "
                "IN ('boss_su', 'boss_cr') ORDER BY rolname"
            ).fetchall() == [(False, True), (True, False)]
        sent: list[str] = []

        def spy(_conn: Any, _cursor: Any, statement: str, *_rest: Any) -> None:
            sent.append(statement)

        event.listen(Engine, "before_cursor_execute", spy)
        try:
            add_user(url, "agent_scram", "agent", "s3cret-Plain'pw")
        finally:
            event.remove(Engine, "before_cursor_execute", spy)
        assert sent and not any("s3cret" in s for s in sent)
        with team.owner() as conn:
            assert (
                conn.execute("SELECT rolpassword FROM pg_authid WHERE rolname = 'agent_scram'")
                .fetchone()[0]
                .startswith("SCRAM-SHA-256$")
            )
        with Journal.open(
            team.server.url(team.database, user="agent_scram", password="s3cret-Plain'pw"),
            actor=Actor.agent("builder"),
            create=False,
        ) as j:
            assert j.runs.start("proj", "scram login").id
    finally:
        with team.owner() as conn:
            for role in ("boss_su", "boss_cr", "agent_scram"):
                conn.execute(f"DROP OWNED BY {role} CASCADE") if conn.execute(
                    "SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)
                ).fetchone() else None
                conn.execute(f"DROP ROLE IF EXISTS {role}")


def test_running_team_init_again_upgrades_the_checks(team, agent, operator, pending):
    """A server set up by an older Proctor (a check missing) is brought up to date by
    `proctor team init` run again: the checks are CREATE OR REPLACE'd every time."""
    from proctor.core.ops.team import init

    run, _approval = pending
    entry = agent.memory.add("project", "proj", "db", "db1", run_id=run.id)
    operator.memory.confirm(entry.id, expected_version=entry.version)
    with team.owner() as conn:  # as an older init left it: this table unchecked
        conn.execute(
            "CREATE OR REPLACE FUNCTION trg_memory_entries_team() RETURNS trigger "
            "LANGUAGE plpgsql AS $fn$ BEGIN RETURN NEW; END $fn$"
        )
    init(team.url())
    with team.raw("agent_a") as conn:
        refused(conn, "UPDATE memory_entries SET content = 'db2' WHERE id = %s", (entry.id,))
