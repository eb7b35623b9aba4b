"""Rules that match what the risk lens reads (issue 36): a condition's ``risk.`` paths read
the lens's facts of the action, the same at request time and when a trusting agent re-checks
the rule's decision; without the lens such a condition fails safe."""

from __future__ import annotations

import pytest

from proctor.core import canonical_json, digest_of, errors
from proctor.core.kernel import predicates
from proctor.core.models import RuleEffect

from .helpers import drop_immutability_triggers, raw
from .test_signed import key, refused, signer, trust_path, trusting  # noqa: F401 (fixtures)


def bash(command: str) -> dict:
    return {"tool": "Bash", "args": {"command": command}}


UNBOUNDED = bash('psql -c "DELETE FROM t"')
BOUNDED = bash('psql -c "DELETE FROM t WHERE id = 7"')


def test_a_deny_rule_on_a_fact_denies_only_the_unbounded_delete(operator, agent, run):
    deny = operator.approvals.add_rule(
        "deny", "Bash", run_id=run.id, predicate="exists risk.sql.unbounded_write"
    )
    denied = agent.approvals.request(run.id, UNBOUNDED, reason="r")
    assert (denied.status, denied.rule_id) == ("denied", deny.id)
    kept = agent.approvals.request(run.id, BOUNDED, reason="r")
    assert kept.status == "pending" and kept.rule_id is None


def test_the_detected_class_and_counts_can_be_compared(operator, agent, run):
    allow = operator.approvals.add_rule(
        "allow", "Bash", run_id=run.id, predicate="risk.detected == null and risk.unread == 0"
    )
    worst = operator.approvals.add_rule(
        "deny", "Bash", run_id=run.id, predicate='risk.detected in ["destructive", "financial"]'
    )
    assert agent.approvals.request(run.id, bash("ls -la"), reason="r").rule_id == allow.id
    assert agent.approvals.request(run.id, UNBOUNDED, reason="r").rule_id == worst.id
    assert agent.approvals.request(run.id, BOUNDED, reason="r").status == "pending"


def test_an_unknown_fact_is_refused_when_the_rule_is_made(operator, run):
    for text in ("exists risk.sql.unbounded_writes", "exists risk.sq", "risk.sql.write.x == 1"):
        with pytest.raises(errors.ValidationError) as info:
            operator.approvals.add_rule("deny", "Bash", run_id=run.id, predicate=text)
        assert info.value.field == "predicate" and "risk" in info.value.message


def test_a_trusting_agent_accepts_the_rules_decision(signer, trusting, run):  # noqa: F811
    allow = signer.approvals.add_rule(
        "allow", "Bash", run_id=run.id, predicate="not exists risk.sql.unbounded_write"
    )
    ok = trusting.approvals.request(run.id, BOUNDED, reason="r")
    assert ok.rule_id == allow.id
    assert trusting.approvals.wait(ok.id, timeout=0).status == "approved"
    trusting.approvals.consume_and_reserve(ok.id, ok.action_digest, "e-risk")
    held = trusting.approvals.request(run.id, UNBOUNDED, reason="r")
    assert held.status == "pending"


def test_a_trusting_agent_refuses_a_risk_rule_pointed_at_an_action_it_does_not_match(
    signer,  # noqa: F811
    trusting,  # noqa: F811
    run,
    journal_path,
):
    """The decision is moved by hand onto the unbounded DELETE: the re-check reads the lens
    of that action and refuses it."""
    allow = signer.approvals.add_rule(
        "allow", "Bash", run_id=run.id, predicate="not exists risk.sql.unbounded_write"
    )
    ok = trusting.approvals.request(run.id, BOUNDED, reason="r")
    with raw(journal_path) as conn:
        drop_immutability_triggers(conn)
        conn.execute(
            "UPDATE approvals SET action = ?, action_digest = ? WHERE id = ?",
            (canonical_json(UNBOUNDED), digest_of(UNBOUNDED), ok.id),
        )
    assert allow.id == ok.rule_id
    with refused("rule_mismatch") as info:
        trusting.approvals.consume_and_reserve(ok.id, digest_of(UNBOUNDED), "e-moved")
    assert "condition the action does not meet" in info.value.message


class Row:
    def __init__(self, effect: str, predicate: str) -> None:
        self.effect, self.predicate = RuleEffect(effect), predicate


def test_without_the_lens_a_risk_condition_fails_safe(monkeypatch):
    monkeypatch.setattr(predicates, "risk_reader", None)
    condition = "exists risk.sql.unbounded_write"
    assert predicates.condition_holds(Row("deny", condition), UNBOUNDED) is True
    assert predicates.condition_holds(Row("deny", condition), BOUNDED) is True
    assert predicates.condition_holds(Row("allow", condition), UNBOUNDED) is False
    assert predicates.condition_holds(Row("allow", "exists args"), UNBOUNDED) is True
    with pytest.raises(errors.ValidationError):
        predicates.normalized(condition)


def test_the_action_is_read_once_for_all_rules_and_only_when_a_condition_names_risk(
    monkeypatch,
):
    reads: list[object] = []
    real = predicates.risk_reader
    assert real is not None

    def counting(action):
        reads.append(action)
        return real.read(action)

    monkeypatch.setattr(predicates, "risk_reader", predicates.RiskReader(counting, real.names))
    subject = predicates.Subject(UNBOUNDED)
    assert predicates.parse("exists args.command").matches(subject)
    assert reads == []
    for text in ("exists risk.sql.unbounded_write", 'risk.detected == "destructive"'):
        assert predicates.parse(text).matches(subject)
    assert reads == [UNBOUNDED]
