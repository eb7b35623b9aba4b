"""Signed decisions: a decision the operator did not make is refused by a trusting agent.

The adversary here can write the journal file: it drops the triggers, inserts and updates
rows by hand, moves signatures between rows, replays them. A trusting agent (opened with
``trust=``) must refuse every such decision with DecisionUnverified naming why; an agent
without trust keeps today's behaviour.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import uuid

import pytest

from proctor.core import Actor, Journal, errors
from proctor.core.decisions.keys import OperatorKey, trust_file
from proctor.core.kernel.canonical import digest_of

from .conftest import AGENT, OPERATOR
from .helpers import drop_immutability_triggers, raw

ACTION = {"tool": "shell", "args": {"command": "rm -rf build/"}}
OTHER = {"tool": "shell", "args": {"command": "rm -rf /"}}


@pytest.fixture
def key() -> OperatorKey:
    return OperatorKey.generate(OPERATOR)


@pytest.fixture
def trust_path(tmp_path, key):
    path = tmp_path / "trusted.json"
    path.write_text(json.dumps(trust_file([{"name": OPERATOR, "public_key": key.public_key}])))
    return path


@pytest.fixture
def signer(open_journal, key):
    """The operator, signing with its key."""
    return open_journal(Actor.operator(OPERATOR), signer=key)


@pytest.fixture
def trusting(open_journal, trust_path):
    """An agent that trusts only the operator's key."""
    return open_journal(Actor.agent(AGENT), trust=trust_path)


@pytest.fixture
def run(trusting):
    return trusting.runs.start("proj", "signed run")


def request(agent, run, action=ACTION, **kw):
    return agent.approvals.request(run.id, action, reason="tidy up", **kw)


def refused(why: str):
    class Check:
        def __enter__(self):
            self.ctx = pytest.raises(errors.DecisionUnverified)
            self.info = self.ctx.__enter__()
            return self.info

        def __exit__(self, *exc):
            handled = self.ctx.__exit__(*exc)
            if not handled:
                return False
            assert self.info.value.why == why, self.info.value.message
            return handled

    return Check()


def forge_approval(
    path, approval_id, *, decided_by="operator:alice", decision=None, status="approved"
):
    """What a process with write access can do: drop the triggers, approve by hand."""
    decision = decision or {"approved": status == "approved", "scope": "once", "rule_id": None}
    with raw(path) as conn:
        drop_immutability_triggers(conn)
        now = (
            conn.execute("SELECT created_at FROM approvals WHERE id=?", (approval_id,)).fetchone()[
                0
            ]
            + 1
        )
        conn.execute(
            "UPDATE approvals SET status=?, decided_at=?, decided_by=?, "
            "decision_scope='once', version=version+1 WHERE id=?",
            (status, now, decided_by, approval_id),
        )
        conn.execute(
            "INSERT INTO decisions (id, target_kind, target_id, run_id, decision, "
            "actor, source, request_id, reason, created_at, digest) VALUES "
            "(?, 'approval', ?, NULL, ?, ?, 'desk', NULL, NULL, ?, ?)",
            (
                f"dec_{uuid.uuid4().hex[:24]}",
                approval_id,
                json.dumps(decision),
                decided_by,
                now,
                "0" * 64,
            ),
        )


# ---------------------------------------------------------------- the honest path


def test_a_signed_approval_is_consumed_by_a_trusting_agent(signer, trusting, run):
    approval = request(trusting, run)
    signer.approvals.decide(approval.id, True, expected_version=approval.version)
    assert trusting.approvals.wait(approval.id, timeout=0).status == "approved"
    effect = trusting.approvals.consume_and_reserve(approval.id, approval.action_digest, "e1")
    assert effect.status == "reserved"


def test_signature_payload_names_journal_item_version_decision_operator_time(
    signer, trusting, run, journal_path, key
):
    approval = request(trusting, run)
    signer.approvals.decide(approval.id, True, expected_version=1, reason="fine")
    with raw(journal_path) as conn:
        ((payload,),) = conn.execute("SELECT payload FROM signatures WHERE record_kind='decision'")
        ((journal_id,),) = conn.execute("SELECT value FROM journal_meta WHERE key='journal_id'")
    body = json.loads(payload)
    assert body["journal_id"] == journal_id
    assert (body["target_kind"], body["target_id"], body["target_version"]) == (
        "approval",
        approval.id,
        2,
    )
    assert body["subject_digest"] == approval.action_digest
    assert body["content"] == {"approved": True, "scope": "once", "rule_id": None}
    assert body["reason"] == "fine"
    assert body["operator"] == "operator:alice" and body["key_id"] == key.key_id
    assert body["signed_at"] == approval.created_at  # the decision's time (JCS number)


def test_without_trust_todays_behaviour_is_kept(agent, run, journal_path):
    """An agent that was told nobody to trust accepts what the rows say (the README says
    what that means)."""
    approval = request(agent, run)
    forge_approval(journal_path, approval.id)
    assert agent.approvals.wait(approval.id, timeout=0).status == "approved"
    agent.approvals.consume_and_reserve(approval.id, approval.action_digest, "e1")


# ---------------------------------------------------------------- forgeries


def test_a_decision_forged_by_raw_sql_is_refused_by_a_trusting_agent(trusting, run, journal_path):
    approval = request(trusting, run)
    forge_approval(journal_path, approval.id)
    with refused("unsigned"):
        trusting.approvals.wait(approval.id, timeout=0)
    with refused("unsigned"):
        trusting.approvals.consume_and_reserve(approval.id, approval.action_digest, "e1")
    assert trusting.approvals.get(approval.id).consumed_at is None
    with raw(journal_path) as conn:
        assert conn.execute("SELECT count(*) FROM effects").fetchone()[0] == 0


def test_a_decision_signed_by_an_untrusted_key_is_refused(open_journal, trusting, run):
    stranger = open_journal(Actor.operator("mallory"), signer=OperatorKey.generate("mallory"))
    approval = request(trusting, run)
    stranger.approvals.decide(approval.id, True, expected_version=1)
    with refused("unknown_key"):
        trusting.approvals.wait(approval.id, timeout=0)


def test_a_signature_moved_from_one_approval_to_another_is_refused(
    signer, trusting, run, journal_path
):
    harmless = request(trusting, run)
    dangerous = request(trusting, run, OTHER)
    signer.approvals.decide(harmless.id, True, expected_version=1)
    forge_approval(journal_path, dangerous.id)
    with raw(journal_path) as conn:  # give the forged decision the harmless one's signature
        forged_id = conn.execute(
            "SELECT id FROM decisions WHERE target_id=?", (dangerous.id,)
        ).fetchone()[0]
        good_id = conn.execute(
            "SELECT id FROM decisions WHERE target_id=?", (harmless.id,)
        ).fetchone()[0]
        conn.execute("UPDATE signatures SET record_id=? WHERE record_id=?", (forged_id, good_id))
    with refused("mismatch"):
        trusting.approvals.consume_and_reserve(dangerous.id, dangerous.action_digest, "e1")


def test_a_signed_decision_with_its_payload_edited_does_not_verify(
    signer, trusting, run, journal_path
):
    approval = request(trusting, run)
    signer.approvals.decide(approval.id, False, expected_version=1, reason="no")
    with raw(journal_path) as conn:
        drop_immutability_triggers(conn)
        conn.execute("UPDATE approvals SET status='approved' WHERE id=?", (approval.id,))
        ((did, decision),) = conn.execute("SELECT id, decision FROM decisions")
        conn.execute(
            "UPDATE decisions SET decision=? WHERE id=?", (decision.replace("false", "true"), did)
        )
        payload = conn.execute("SELECT payload FROM signatures").fetchone()[0]
        conn.execute(
            "UPDATE signatures SET payload=?",
            (payload.replace('"approved":false', '"approved":true'),),
        )
    with refused("bad_signature"):
        trusting.approvals.wait(approval.id, timeout=0)


def test_a_replayed_decision_for_a_new_version_is_refused(signer, trusting, run, journal_path):
    """The operator approved version 1; the row is re-opened and moved on (a new version)
    and the old decision is offered again: refused."""
    approval = request(trusting, run)
    signer.approvals.decide(approval.id, True, expected_version=1)
    with raw(journal_path) as conn:
        drop_immutability_triggers(conn)
        conn.execute("UPDATE approvals SET version=5 WHERE id=?", (approval.id,))
    with refused("mismatch"):
        trusting.approvals.consume_and_reserve(approval.id, approval.action_digest, "e1")


@pytest.mark.sqlite_only
def test_a_decision_signed_in_another_journal_is_refused(
    signer, trusting, run, journal_path, tmp_path
):
    """The same rows copied into a journal with another id: the signature names the first."""
    approval = request(trusting, run)
    signer.approvals.decide(approval.id, True, expected_version=1)
    signer.close()
    trusting.close()  # checkpointed: the copy has every row
    copy = tmp_path / "copy.db"
    shutil.copy2(journal_path, copy)
    with raw(copy) as conn:
        drop_immutability_triggers(conn)
        conn.execute("UPDATE journal_meta SET value='jnl_other'")
    with (
        Journal.open(copy, actor=Actor.agent(AGENT), trust=trusting.trust) as other,
        refused("mismatch"),
    ):
        other.approvals.wait(approval.id, timeout=0)


def test_a_retired_keys_new_decisions_are_refused(open_journal, run, key, tmp_path, clock):
    retired_at = clock()
    path = tmp_path / "trusted-retired.json"
    path.write_text(
        json.dumps(
            trust_file([{"name": OPERATOR, "public_key": key.public_key, "retired_at": retired_at}])
        )
    )
    agent = open_journal(Actor.agent(AGENT), trust=path)
    signer = open_journal(Actor.operator(OPERATOR), signer=key)
    before = request(agent, run)
    clock.advance(-10)
    signer.approvals.decide(before.id, True, expected_version=1)  # signed before retiring
    clock.advance(20)
    after = request(agent, run, OTHER)
    signer.approvals.decide(after.id, True, expected_version=1)
    assert agent.approvals.wait(before.id, timeout=0).status == "approved"
    with refused("retired_key"):
        agent.approvals.wait(after.id, timeout=0)


@pytest.mark.parametrize(
    "content",
    ["", "not json", '{"operators": []}', '{"proctor_trusted_operators": 1, "operators": []}'],
)
def test_trust_fails_closed(open_journal, signer, run, tmp_path, content):
    """An empty, unreadable or malformed trusted-operators file trusts no one."""
    path = tmp_path / "trust.json"
    path.write_text(content)
    agent = open_journal(Actor.agent(AGENT), trust=path)
    approval = request(agent, run)
    signer.approvals.decide(approval.id, True, expected_version=1)
    with refused("no_trust"):
        agent.approvals.wait(approval.id, timeout=0)


def test_a_missing_trust_file_trusts_no_one(open_journal, run, tmp_path, monkeypatch):
    monkeypatch.setenv("PROCTOR_TRUSTED_OPERATORS", str(tmp_path / "absent.json"))
    agent = open_journal(Actor.agent(AGENT))
    assert agent.trust is not None and agent.trust.problem
    approval = request(agent, run)
    forge_approval(agent.path, approval.id)
    with refused("no_trust"):
        agent.approvals.wait(approval.id, timeout=0)


# ---------------------------------------------------------------- rules


def test_a_rule_signed_by_a_trusted_operator_auto_approves(signer, trusting, run):
    signer.approvals.add_rule("allow", "shell", run_id=run.id)
    approval = request(trusting, run)
    assert approval.status == "approved"
    trusting.approvals.consume_and_reserve(approval.id, approval.action_digest, "e1")


def test_a_rule_made_by_a_signed_approval_auto_approves_the_next_request(signer, trusting, run):
    first = request(trusting, run)
    signer.approvals.decide(first.id, True, expected_version=1, scope="run")
    second = request(trusting, run)  # the same action again (issue 19: the rule is narrow)
    assert second.status == "approved" and second.rule_id
    assert trusting.approvals.wait(second.id, timeout=0).status == "approved"
    assert request(trusting, run, OTHER).status == "pending"  # rm -rf / is not rm -rf build/


def test_edited_and_conditional_rule_decisions_verify_for_a_trusting_agent(
    signer, trusting, run, journal_path
):
    """Issue 19 under trust: an edited approval is signed with the edited digest; a rule made
    with a condition (and applied to a pending request) is signed and its condition is
    checked when a trusting agent consumes what it decided."""
    from proctor.core import digest_of
    from proctor.core.models import RuleDraft

    asked = request(trusting, run)
    edited = {"tool": "shell", "args": {"command": "rm -rf build/tmp"}}
    signer.approvals.approve_edited(asked.id, edited, expected_version=1)
    done = trusting.approvals.wait(asked.id, timeout=0)
    assert done.effective_digest == digest_of(edited)
    trusting.approvals.consume_and_reserve(asked.id, digest_of(edited), "e-edit")
    pending = request(trusting, run, {"tool": "deploy", "args": {"env": "staging"}})
    draft = RuleDraft(
        action_pattern="deploy",
        run_id=run.id,
        project=run.project,
        predicate='args.env == "staging"',
    )
    made = signer.approvals.make_rule(draft, apply_to=[(pending.id, pending.version)])
    assert made.applied == [pending.id]
    trusting.approvals.consume_and_reserve(pending.id, pending.action_digest, "e-rule")
    later = request(trusting, run, {"tool": "deploy", "args": {"env": "staging"}})
    assert later.rule_id == made.rule.id
    with raw(journal_path) as conn:  # the condition widened by hand: not the signed rule
        drop_immutability_triggers(conn)  # 0009b refuses it with them in place
        conn.execute(
            "UPDATE approval_rules SET predicate = 'exists args' WHERE id = ?", (made.rule.id,)
        )
    with refused("mismatch"):
        trusting.approvals.consume_and_reserve(later.id, later.action_digest, "e-later")


def test_a_rule_forged_in_the_table_does_not_auto_approve(trusting, run, journal_path):
    with raw(journal_path) as conn:
        conn.execute(
            "INSERT INTO approval_rules (id, effect, action_pattern, "
            "resource_pattern, scope, run_id, project, space, created_by, "
            "created_at, version) VALUES ('rule_forged', 'allow', '*', '*', 'run', "
            "?, 'proj', NULL, 'operator:alice', 0, 1)",
            (run.id,),
        )
    approval = request(trusting, run)
    assert approval.status == "approved"  # the rows say so; the agent does not believe it
    with refused("rule_unsigned"):
        trusting.approvals.consume_and_reserve(approval.id, approval.action_digest, "e1")


def test_a_signed_rule_widened_by_hand_does_not_auto_approve(signer, trusting, run, journal_path):
    rule = signer.approvals.add_rule("allow", "git_status", run_id=run.id)
    with raw(journal_path) as conn:
        drop_immutability_triggers(conn)  # 0009b refuses it with them in place
        conn.execute("UPDATE approval_rules SET action_pattern='*' WHERE id=?", (rule.id,))
    approval = request(trusting, run)
    with refused("mismatch"):
        trusting.approvals.wait(approval.id, timeout=0)


def test_an_action_the_signed_rule_does_not_match_is_refused(signer, trusting, run, journal_path):
    """The rule is genuine, but the decision row points a non-matching action at it."""
    rule = signer.approvals.add_rule("allow", "git_status", run_id=run.id)
    approval = request(trusting, run)
    with raw(journal_path) as conn:
        drop_immutability_triggers(conn)
        conn.execute(
            "UPDATE approvals SET status='approved', decided_by=?, rule_id=?, "
            "decision_scope='run', version=2 WHERE id=?",
            (f"rule:{rule.id}", rule.id, approval.id),
        )
        conn.execute(
            "INSERT INTO decisions VALUES ('dec_x', 'approval', ?, ?, ?, ?, 'rule', "
            "NULL, 'matched', ?, ?)",
            (
                approval.id,
                run.id,
                json.dumps({"approved": True, "scope": "run"}),
                f"rule:{rule.id}",
                approval.created_at,
                "0" * 64,
            ),
        )
    with refused("rule_mismatch"):
        trusting.approvals.wait(approval.id, timeout=0)


# ---------------------------------------------------------------- answers, effects, memory


def test_a_forged_answer_is_refused_and_a_signed_one_read(signer, trusting, run, journal_path):
    honest = trusting.questions.ask(run.id, "question", "Which branch?")
    signer.questions.answer(honest.id, {"text": "main"}, expected_version=honest.version)
    assert trusting.questions.get(honest.id).response == {"text": "main"}
    forged = trusting.questions.ask(run.id, "question", "Deploy to prod?")
    with raw(journal_path) as conn:
        drop_immutability_triggers(conn)
        conn.execute(
            "UPDATE interactions SET status='resolved', response='\"yes\"', "
            "resolved_by='operator:alice', version=2 WHERE id=?",
            (forged.id,),
        )
        conn.execute(
            "INSERT INTO decisions VALUES ('dec_f', 'interaction', ?, ?, '\"yes\"', "
            "'operator:alice', 'desk', NULL, NULL, 1, ?)",
            (forged.id, run.id, "0" * 64),
        )
    with refused("unsigned"):
        trusting.questions.get(forged.id)


def test_a_changed_answer_under_a_good_signature_is_refused(signer, trusting, run, journal_path):
    question = trusting.questions.ask(run.id, "question", "Which branch?")
    signer.questions.answer(question.id, {"text": "main"}, expected_version=1)
    with raw(journal_path) as conn:
        drop_immutability_triggers(conn)
        conn.execute(
            "UPDATE interactions SET response=? WHERE id=?", ('{"text":"prod"}', question.id)
        )
    with refused("mismatch"):
        trusting.questions.get(question.id)


def _ambiguous_effect(agent, run, key="send-1"):
    agent.effects.reserve(key, tool="mail", run_id=run.id, action={"to": "x"})
    agent.effects.mark_ambiguous(key, "crashed")
    return agent.effects.get(key)


def test_a_forged_effect_resolution_is_refused(trusting, run, journal_path):
    effect = _ambiguous_effect(trusting, run)
    with raw(journal_path) as conn:
        drop_immutability_triggers(conn)
        conn.execute(
            "UPDATE effects SET status='failed', resolved_by='operator:alice', "
            "version=version+1, updated_at=updated_at+1 WHERE key=?",
            (effect.key,),
        )
        conn.execute(
            "INSERT INTO decisions VALUES ('dec_e', 'effect', ?, ?, "
            "'{\"outcome\":\"failed\"}', 'operator:alice', 'desk', NULL, 'r', "
            "(SELECT updated_at FROM effects WHERE key=?), ?)",
            (effect.key, run.id, effect.key, "0" * 64),
        )
    with refused("unsigned"):  # a forged "failed" would run the effect twice
        trusting.effects.reserve(effect.key, tool="mail", run_id=run.id, action={"to": "x"})


def test_a_signed_effect_resolution_lets_the_agent_retry(signer, trusting, run):
    effect = _ambiguous_effect(trusting, run)
    signer.effects.resolve(effect.key, "failed", reason="bounced", expected_version=effect.version)
    again = trusting.effects.reserve(effect.key, tool="mail", run_id=run.id, action={"to": "x"})
    assert again.attempt == 2


def test_a_forged_memory_resolution_is_refused(signer, trusting, run, journal_path):
    entry = signer.memory.add("project", "proj", "style", "tabs")
    item = signer.memory.record_conflict(entry.id, "spaces", incoming_source="agent")
    with raw(journal_path) as conn:
        drop_immutability_triggers(conn)
        conn.execute(
            "UPDATE memory_reconciliations SET status='accepted_incoming', "
            "resolved_by='operator:alice', version=2 WHERE id=?",
            (item.id,),
        )
        conn.execute(
            "INSERT INTO decisions VALUES ('dec_m', 'reconciliation', ?, NULL, "
            "'{\"choice\":\"accepted_incoming\"}', 'operator:alice', 'desk', NULL, "
            "NULL, 1, ?)",
            (item.id, "0" * 64),
        )
    with refused("unsigned"):
        trusting.memory.conflict(item.id)


def test_a_signed_memory_resolution_is_read(signer, trusting):
    entry = signer.memory.add("project", "proj", "style", "tabs")
    item = signer.memory.record_conflict(entry.id, "spaces", incoming_source="agent")
    signer.memory.resolve(
        item.id, "accepted_incoming", expected_version=item.version, reason="checked"
    )
    assert trusting.memory.conflict(item.id).status == "accepted_incoming"


def test_every_operator_write_is_signed(signer, trusting, run, journal_path):
    """Approve/deny (with the rule it makes), answers, effect and memory resolutions,
    snoozes, rule creation and revocation: each leaves one signature."""
    a1, a2 = request(trusting, run), request(trusting, run, OTHER)
    signer.inbox.snooze("approval", a2.id, 10**10, expected_version=1)
    signer.approvals.decide(a1.id, True, expected_version=1, scope="run")
    signer.approvals.decide(a2.id, False, expected_version=2, reason="no")
    q = trusting.questions.ask(run.id, "question", "?")
    signer.questions.answer(q.id, {"text": "x"}, expected_version=1)
    effect = _ambiguous_effect(trusting, run)
    signer.effects.resolve(effect.key, "committed", reason="sent", expected_version=effect.version)
    entry = signer.memory.add("project", "proj", "t", "a")
    item = signer.memory.record_conflict(entry.id, "b", incoming_source="agent")
    signer.memory.resolve(item.id, "dismissed", expected_version=1, reason="checked")
    rule = signer.approvals.add_rule("deny", "curl", run_id=run.id)
    signer.approvals.revoke_rule(rule.id, expected_version=1)
    with raw(journal_path) as conn:
        kinds = sorted(k for (k,) in conn.execute("SELECT record_kind FROM signatures"))
        unsigned = conn.execute(
            "SELECT count(*) FROM decisions d WHERE d.actor LIKE "
            "'operator:%' AND d.id NOT IN (SELECT record_id FROM "
            "signatures)"
        ).fetchone()[0]
    assert unsigned == 0
    assert kinds == ["decision"] * 5 + ["rule"] * 2 + ["rule.revoke", "snooze"]


def test_signatures_are_immutable_by_trigger(signer, trusting, run, journal_path):
    approval = request(trusting, run)
    signer.approvals.decide(approval.id, True, expected_version=1)
    with raw(journal_path) as conn:
        for sql in (
            "UPDATE signatures SET operator='x'",
            "DELETE FROM signatures",
            "UPDATE journal_meta SET value='x'",
        ):
            with pytest.raises(sqlite3.DatabaseError, match="immutable"):
                conn.execute(sql)


def test_approval_digest_is_still_the_agents(trusting, run):
    assert request(trusting, run).action_digest == digest_of(ACTION)


# ---------------------------------------------------------------- proctor verify


def test_verify_with_trust_names_the_first_forged_decision(
    signer, trusting, run, journal_path, trust_path
):
    from proctor.core.audit.verify import verify

    good = request(trusting, run)
    signer.approvals.decide(good.id, True, expected_version=1)
    forged = request(trusting, run, OTHER)
    forge_approval(journal_path, forged.id)
    report = verify(trusting, trust=trust_path)
    signature_problems = [
        p for p in report.problems if p.what in ("decision unsigned", "decision forged")
    ]
    assert signature_problems[0].what == "decision unsigned"
    assert forged.id in signature_problems[0].where
    assert report.signatures == {"signed": 1, "unsigned": 1, "invalid": 0, "automatic": 0}
    assert not any(good.id in p.where for p in report.problems)


def test_verify_with_trust_passes_an_honest_signed_journal(signer, trusting, run, trust_path):
    from proctor.core.audit.verify import verify

    signer.approvals.add_rule("allow", "git_*", run_id=run.id)
    auto = request(trusting, run, {"tool": "git_status"})
    approval = request(trusting, run)
    signer.approvals.decide(approval.id, False, expected_version=1, reason="no")
    report = verify(trusting, trust=trust_path)
    assert report.ok, report.problems
    assert auto.status == "approved"
    assert report.signatures == {"signed": 1, "unsigned": 0, "invalid": 0, "automatic": 1}
