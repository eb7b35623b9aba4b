"""A Hypothesis state machine drives approvals and effects through the public API and checks
the journal against a plain-Python model after every step (DESIGN §2 invariants 3-6, 9)."""

from __future__ import annotations

import itertools
import shutil
from dataclasses import dataclass, field

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    invariant,
    rule,
    run_state_machine_as_test,
)
from proctor.core import Actor, Journal, digest_of, errors, verify

from .helpers import FakeClock

KEYS = st.sampled_from(["k0", "k1", "k2"])
OWNERS = st.sampled_from(["w1", "w2"])
LIVE = ("reserved", "executing")
CONSUME_LEASE = 20.0


@dataclass
class ModelApproval:
    digest: str
    expires_at: float | None
    on_expiry: str
    status: str = "pending"
    version: int = 1
    consumed_key: str | None = None


@dataclass
class ModelEffect:
    status: str
    owner: str
    lease_seconds: float
    lease_until: float | None
    attempt: int = 1
    approval_id: str | None = None


@dataclass
class Model:
    approvals: dict[str, ModelApproval] = field(default_factory=dict)
    effects: dict[str, ModelEffect] = field(default_factory=dict)


class ApprovalEffectMachine(RuleBasedStateMachine):
    approvals = Bundle("approvals")

    def __init__(self, path):
        super().__init__()
        self.clock = FakeClock()
        self.agent = Journal.open(path, actor=Actor.agent("bot"), clock=self.clock)
        self.operator = Journal.open(path, actor=Actor.operator("ops"), clock=self.clock)
        self.run_id = self.agent.runs.start("proj", "model run").id
        self.model = Model()
        self.actions = itertools.count()

    def teardown(self):
        try:
            report = verify(self.agent)
            assert report.ok, report.problems
        finally:
            self.agent.close()
            self.operator.close()

    # ------------------------------------------------------------ helpers
    def now(self) -> float:
        return self.clock()

    def expect(self, error, call):
        """Run ``call``; it must raise exactly ``error`` (or succeed when ``error`` is None)."""
        if error is None:
            return call()
        try:
            call()
        except errors.ProctorError as err:
            assert type(err) is error, f"expected {error.__name__}, got {type(err).__name__}"
            return None
        raise AssertionError(f"expected {error.__name__}, the call succeeded")

    def lapsed(self, approval: ModelApproval) -> bool:
        return (approval.status == "pending" and approval.on_expiry == "deny"
                and approval.expires_at is not None and self.now() >= approval.expires_at)

    def expire(self, approval: ModelApproval) -> None:
        approval.status, approval.version = "expired", approval.version + 1

    def reservation_outcome(self, key: str, owner: str, lease: float,
                            approval_id: str | None):
        """Model of Effects.reserve_in: (error, changed)."""
        effect = self.model.effects.get(key)
        if effect is None:
            self.model.effects[key] = ModelEffect("reserved", owner, lease, self.now() + lease,
                                                  approval_id=approval_id)
            return None
        if effect.status == "committed":
            return errors.EffectCommitted
        if effect.status == "ambiguous":
            return errors.EffectAmbiguous
        if effect.status in LIVE:
            if effect.lease_until > self.now():
                return errors.EffectBusy
            effect.status, effect.lease_until = "ambiguous", None
            return errors.EffectAmbiguous
        effect.status, effect.owner, effect.attempt = "reserved", owner, effect.attempt + 1
        effect.lease_seconds, effect.lease_until = lease, self.now() + lease
        effect.approval_id = approval_id
        return None

    def owned_outcome(self, key: str, owner: str, allowed: tuple[str, ...]):
        """Model of Effects._owned: (error, effect-or-None when the caller may proceed)."""
        effect = self.model.effects.get(key)
        if effect is None:
            return errors.NotFound, None
        if effect.status not in allowed:
            return errors.InvalidTransition, None
        if effect.owner != owner:
            return errors.EffectBusy, None
        if effect.lease_until is not None and effect.lease_until <= self.now():
            effect.status, effect.lease_until = "ambiguous", None
            return errors.EffectAmbiguous, None
        return None, effect

    # ------------------------------------------------------------ approval rules
    @rule(target=approvals, variant=st.integers(0, 2),
          expires_in=st.sampled_from([None, 5.0, 50.0]),
          on_expiry=st.sampled_from(["deny", "keep_pending"]))
    def request(self, variant, expires_in, on_expiry):
        action = {"tool": "deploy", "args": {"target": f"env-{variant}"},
                  "n": next(self.actions)}
        approval = self.agent.approvals.request(self.run_id, action, reason="ship it",
                                                expires_in=expires_in, on_expiry=on_expiry)
        self.model.approvals[approval.id] = ModelApproval(
            digest_of(action), None if expires_in is None else self.now() + expires_in,
            on_expiry)
        return approval.id

    @rule(approval_id=approvals, approve=st.booleans(), stale=st.booleans())
    def decide(self, approval_id, approve, stale):
        m = self.model.approvals[approval_id]
        version = m.version - 1 if stale else m.version
        if m.status == "expired":
            error = errors.Expired
        elif m.status != "pending":
            error = errors.AlreadyDecided
        elif self.lapsed(m):
            error = errors.Expired
            self.expire(m)
        elif stale:
            error = errors.StaleVersion
        else:
            error = None
            m.status, m.version = ("approved" if approve else "denied"), m.version + 1
        self.expect(error, lambda: self.operator.approvals.decide(
            approval_id, approve, expected_version=version, reason="because"))

    @rule(approval_id=approvals)
    def withdraw(self, approval_id):
        m = self.model.approvals[approval_id]
        error = None if m.status == "pending" else errors.InvalidTransition
        if error is None:
            m.status, m.version = "cancelled", m.version + 1
        self.expect(error, lambda: self.agent.approvals.withdraw(approval_id, "not needed"))

    @rule()
    def expire_due(self):
        due = [m for m in self.model.approvals.values() if self.lapsed(m)]
        for m in due:
            self.expire(m)
        assert self.agent.approvals.expire_due() == len(due)

    @rule(seconds=st.sampled_from([1.0, 10.0, 40.0]))
    def advance(self, seconds):
        self.clock.advance(seconds)

    @rule(approval_id=approvals, key=KEYS, owner=OWNERS, exact=st.booleans())
    def consume(self, approval_id, key, owner, exact):
        m = self.model.approvals[approval_id]
        digest = m.digest if exact else digest_of({"tool": "deploy", "edited": True})
        if m.status != "approved" or m.consumed_key is not None:
            error = errors.NotConsumable
        elif not exact:
            error = errors.DigestMismatch
        else:
            error = self.reservation_outcome(key, owner, CONSUME_LEASE, approval_id)
            if error is None:
                m.consumed_key, m.version = key, m.version + 1
        self.expect(error, lambda: self.agent.approvals.consume_and_reserve(
            approval_id, digest, key, owner=owner, lease_seconds=CONSUME_LEASE))

    # ------------------------------------------------------------ effect rules
    @rule(key=KEYS, owner=OWNERS, lease=st.sampled_from([5.0, 20.0]))
    def reserve(self, key, owner, lease):
        error = self.reservation_outcome(key, owner, lease, None)
        self.expect(error, lambda: self.agent.effects.reserve(
            key, tool="deploy", run_id=self.run_id, owner=owner, lease_seconds=lease))

    @rule(key=KEYS, owner=OWNERS)
    def begin(self, key, owner):
        error, effect = self.owned_outcome(key, owner, ("reserved",))
        if effect is not None:
            effect.status, effect.lease_until = "executing", self.now() + effect.lease_seconds
        self.expect(error, lambda: self.agent.effects.begin(key, owner=owner))

    @rule(key=KEYS, owner=OWNERS)
    def commit(self, key, owner):
        error, effect = self.owned_outcome(key, owner, ("executing",))
        if effect is not None:
            effect.status, effect.lease_until = "committed", None
        self.expect(error, lambda: self.agent.effects.commit(key, {"ok": 1}, owner=owner))

    @rule(key=KEYS, owner=OWNERS)
    def fail(self, key, owner):
        error, effect = self.owned_outcome(key, owner, LIVE)
        if effect is not None:
            effect.status, effect.lease_until = "failed", None
        self.expect(error, lambda: self.agent.effects.fail(key, "HTTP 500", owner=owner))

    @rule(key=KEYS, owner=OWNERS)
    def mark_ambiguous(self, key, owner):
        error, effect = self.owned_outcome(key, owner, LIVE)
        if effect is not None:
            effect.status, effect.lease_until = "ambiguous", None
        self.expect(error, lambda: self.agent.effects.mark_ambiguous(key, "timeout",
                                                                     owner=owner))

    @rule()
    def sweep(self):
        due = [e for e in self.model.effects.values()
               if e.status in LIVE and e.lease_until <= self.now()]
        for effect in due:
            effect.status, effect.lease_until = "ambiguous", None
        assert self.agent.effects.sweep_expired() == len(due)

    @rule(key=KEYS, outcome=st.sampled_from(["committed", "failed"]))
    def resolve(self, key, outcome):
        effect = self.model.effects.get(key)
        if effect is None:
            error = errors.NotFound
        elif effect.status != "ambiguous":
            error = errors.AlreadyDecided
        else:
            error, effect.status = None, outcome
        version = self.agent.effects.get(key).version if effect else 1
        self.expect(error, lambda: self.operator.effects.resolve(
            key, outcome, reason="checked by hand", expected_version=version))

    # ------------------------------------------------------------ invariants
    @invariant()
    def journal_matches_model(self):
        for aid, m in self.model.approvals.items():
            stored = self.agent.approvals.get(aid)
            assert (stored.status, stored.version, stored.consumed_effect_key) == \
                (m.status, m.version, m.consumed_key), aid
            decisions = self.agent.approvals.decisions(aid)
            assert len(decisions) == (0 if m.status in ("pending", "cancelled") else 1)
            if m.consumed_key is not None:
                assert m.status == "approved"
        stored_effects = {e.key: e for e in self.agent.effects.list(limit=10).items}
        assert set(stored_effects) == set(self.model.effects)
        for key, m in self.model.effects.items():
            e = stored_effects[key]
            assert (e.status, e.attempt, e.lease_owner, e.lease_expires_at, e.approval_id) == \
                (m.status, m.attempt, m.owner, m.lease_until, m.approval_id), key

    @invariant()
    def run_waits_exactly_while_something_is_pending(self):
        run = self.agent.runs.get(self.run_id)
        waiting = any(m.status == "pending" for m in self.model.approvals.values())
        assert run.status == ("waiting_for_user" if waiting else "running")
        assert run.version == run.last_sequence


def test_approvals_and_effects_follow_the_model(template_journal, tmp_path):
    names = itertools.count()

    def machine():
        path = tmp_path / f"model-{next(names)}.db"
        shutil.copy2(template_journal, path)
        return ApprovalEffectMachine(path)

    run_state_machine_as_test(machine, settings=settings(
        max_examples=30, stateful_step_count=25, deadline=None, derandomize=True,
        suppress_health_check=[HealthCheck.too_slow]))
