"""A Hypothesis state machine drives approvals and effects through the public API and checks
the journal against a plain-Python model after every step (DESIGN §2 invariants 3-6, 9).
Issue 15's transitions are in it: an approved approval lapses unused past its deadline (the
expiry written, then refused), a late call after a lapsed lease is always EffectAmbiguous,
the lease holder never resolves its effect, an interrupted run asks nothing new, and a new
attempt passes the resume gate only when nothing blocks it."""

from __future__ import annotations

import itertools
import shutil
from collections import Counter
from dataclasses import dataclass, field

from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    initialize,
    invariant,
    multiple,
    precondition,
    rule,
    run_state_machine_as_test,
)
from sqlalchemy import select

from proctor.core import Actor, Journal, digest_of, errors
from proctor.core.audit.verify import verify
from proctor.core.storage import schema

from .helpers import FakeClock

KEYS = st.sampled_from(["k0", "k1"])
OWNERS = st.sampled_from(["w1", "w2"])
STEPS = ("begin", "commit", "fail", "mark_ambiguous")
LIVE = ("reserved", "executing")
CONSUME_LEASE = 20.0
CONSUME_WINDOW = 3600.0


@dataclass
class ModelApproval:
    digest: str
    expires_at: float | None
    on_expiry: str
    status: str = "pending"
    version: int = 1
    consumed_key: str | None = None
    decided_at: float | None = None

    def consume_by(self) -> float:
        """Model of approvals.consume_deadline."""
        if self.expires_at is not None and self.decided_at < self.expires_at:
            return self.expires_at
        return self.decided_at + CONSUME_WINDOW


@dataclass
class ModelEffect:
    status: str
    owner: str
    lease_seconds: float
    lease_until: float | None
    attempt: int = 1
    approval_id: str | None = None
    resolved: bool = False  # a person resolved it once (resolved_by stays set)


@dataclass
class Model:
    approvals: dict[str, ModelApproval] = field(default_factory=dict)
    effects: dict[str, ModelEffect] = field(default_factory=dict)
    interrupted: bool = False
    attempt: int = 1


class ApprovalEffectMachine(RuleBasedStateMachine):
    """Blind rules pick ids, keys and owners at random (mostly refusals); targeted rules pick
    from what the model says exists, so success paths and their follow-ups are reached too."""

    approvals = Bundle("approvals")

    def __init__(self, path):
        super().__init__()
        self.clock = FakeClock()
        self.agent = Journal.open(path, actor=Actor.agent("bot"), clock=self.clock)
        self.operator = Journal.open(path, actor=Actor.operator("ops"), clock=self.clock)
        # operators who share a worker's name: the requester rule refuses them
        self.holders = {
            o: Journal.open(path, actor=Actor.operator(o), clock=self.clock) for o in ("w1", "w2")
        }
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
            for journal in self.holders.values():
                journal.close()

    # ------------------------------------------------------------ model helpers
    def now(self) -> float:
        return self.clock()

    @staticmethod
    def expect(error, call) -> None:
        """Run ``call``: it must raise exactly ``error``, or succeed when ``error`` is None."""
        try:
            call()
        except errors.ProctorError as err:
            assert type(err) is error, f"expected {error}, got {type(err).__name__}: {err}"  # noqa: PT017 - a Hypothesis rule checks the error it got
            return
        assert error is None, f"expected {error.__name__}, the call succeeded"

    def lapsed(self, m: ModelApproval) -> bool:
        return (
            m.status == "pending"
            and m.on_expiry == "deny"
            and m.expires_at is not None
            and self.now() >= m.expires_at
        )

    @staticmethod
    def expire(m: ModelApproval) -> None:
        m.status, m.version = "expired", m.version + 1

    # creation order, never id order: ids are random, draws must replay identically
    def approvals_in(self, *states: str) -> list[str]:
        return [a for a, m in self.model.approvals.items() if m.status in states]

    def effects_in(self, *states: str) -> list[str]:
        return sorted(k for k, m in self.model.effects.items() if m.status in states)

    def reservation(self, key: str, owner: str, lease: float, approval_id: str | None):
        """Model of Effects.reserve_in; returns the expected error (None: reserved)."""
        effect = self.model.effects.get(key)
        if effect is None:
            self.model.effects[key] = ModelEffect(
                "reserved", owner, lease, self.now() + lease, approval_id=approval_id
            )
            return None
        if effect.status == "committed":
            return errors.EffectCommitted
        if effect.status == "ambiguous":
            return errors.EffectAmbiguous
        if effect.status in LIVE:
            if effect.lease_until > self.now():
                return errors.EffectBusy
            effect.status, effect.lease_until = "ambiguous", None  # survives the refusal
            return errors.EffectAmbiguous
        effect.status, effect.owner, effect.attempt = "reserved", owner, effect.attempt + 1
        effect.lease_seconds, effect.lease_until = lease, self.now() + lease
        effect.approval_id = approval_id
        return None

    def agent_reservation(self, key: str, owner: str, lease: float):
        """Model of Effects.reserve: the agents' own sweep (every other lapsed lease turns
        ambiguous), kept unless the reservation is refused without writing (rolled back)."""
        effect = self.model.effects.get(key)
        refused_unwritten = effect is not None and (
            effect.status in ("committed", "ambiguous")
            or (effect.status in LIVE and effect.lease_until > self.now())
        )
        if not refused_unwritten:
            for other_key, other in self.model.effects.items():
                if other_key != key and other.status in LIVE and other.lease_until <= self.now():
                    other.status, other.lease_until = "ambiguous", None
        return self.reservation(key, owner, lease, None)

    def owned(self, key: str, owner: str, allowed: tuple[str, ...]):
        """Model of Effects._owned: (expected error, the effect when the caller may go on)."""
        effect = self.model.effects.get(key)
        if effect is None:
            return errors.NotFound, None
        if effect.status == "ambiguous":
            return errors.EffectAmbiguous, None  # a sweep or a reserve got there first
        if effect.resolved and effect.owner == owner and effect.status in ("committed", "failed"):
            return errors.EffectAmbiguous, None  # a person resolved it after the lapse
        if effect.status not in allowed:
            return errors.InvalidTransition, None
        if effect.owner != owner:
            return errors.EffectBusy, None
        if effect.lease_until is not None and effect.lease_until <= self.now():
            effect.status, effect.lease_until = "ambiguous", None
            return errors.EffectAmbiguous, None
        return None, effect

    def new_approval(self, expires_in: float | None, on_expiry: str) -> str:
        action = {"tool": "deploy", "n": next(self.actions)}
        approval = self.agent.approvals.request(
            self.run_id, action, reason="ship it", expires_in=expires_in, on_expiry=on_expiry
        )
        self.model.approvals[approval.id] = ModelApproval(
            digest_of(action), None if expires_in is None else self.now() + expires_in, on_expiry
        )
        return approval.id

    # ------------------------------------------------------------ actions
    def do_decide(self, approval_id: str, approve: bool, stale: bool) -> None:
        m = self.model.approvals[approval_id]
        version = m.version - 1 if stale else m.version
        if m.status == "expired":
            error = errors.Expired
        elif m.status != "pending":
            error = errors.AlreadyDecided
        elif self.lapsed(m):
            error = errors.Expired
            self.expire(m)  # the expiry is written even though the call is refused
        elif stale:
            error = errors.StaleVersion
        else:
            error = None
            m.status, m.version = ("approved" if approve else "denied"), m.version + 1
            m.decided_at = self.now()
        self.expect(
            error,
            lambda: self.operator.approvals.decide(
                approval_id, approve, expected_version=version, reason="because"
            ),
        )

    def do_consume(self, approval_id: str, key: str, owner: str, exact: bool) -> None:
        m = self.model.approvals[approval_id]
        digest = m.digest if exact else digest_of({"tool": "deploy", "edited": True})
        if m.status != "approved" or m.consumed_key is not None:
            error = errors.NotConsumable
        elif not exact:
            error = errors.DigestMismatch
        elif self.now() >= m.consume_by():
            error = errors.ApprovalLapsed
            m.status, m.version = "expired", m.version + 1  # written, then refused
        else:
            error = self.reservation(key, owner, CONSUME_LEASE, approval_id)
            if error is None:
                m.consumed_key, m.version = key, m.version + 1
        self.expect(
            error,
            lambda: self.agent.approvals.consume_and_reserve(
                approval_id, digest, key, owner=owner, lease_seconds=CONSUME_LEASE
            ),
        )

    def do_step(self, key: str, owner: str, step: str) -> None:
        allowed = {"begin": ("reserved",), "commit": ("executing",)}.get(step, LIVE)
        error, effect = self.owned(key, owner, allowed)
        if effect is not None:
            effect.status = {
                "begin": "executing",
                "commit": "committed",
                "fail": "failed",
                "mark_ambiguous": "ambiguous",
            }[step]
            effect.lease_until = self.now() + effect.lease_seconds if step == "begin" else None
        call = {
            "begin": lambda: self.agent.effects.begin(key, owner=owner),
            "commit": lambda: self.agent.effects.commit(key, {"ok": 1}, owner=owner),
            "fail": lambda: self.agent.effects.fail(key, "HTTP 500", owner=owner),
            "mark_ambiguous": lambda: self.agent.effects.mark_ambiguous(
                key, "timeout", owner=owner
            ),
        }[step]
        self.expect(error, call)

    def do_resolve(self, key: str, outcome: str, as_holder: bool = False) -> None:
        effect = self.model.effects.get(key)
        if effect is None:
            error = errors.NotFound
        elif effect.status != "ambiguous":
            error = errors.AlreadyDecided
        elif as_holder:
            error = errors.NotAllowed  # the worker that held the lease never resolves it
        else:
            error, effect.status, effect.resolved = None, outcome, True
        version = self.agent.effects.get(key).version if effect else 1
        who = self.holders[effect.owner] if as_holder and effect else self.operator
        self.expect(
            error,
            lambda: who.effects.resolve(
                key, outcome, reason="checked by hand", expected_version=version
            ),
        )

    # ------------------------------------------------------------ rules
    @initialize(target=approvals)
    def start_with_some_state(self):
        """Every example starts with an approved approval and a short lease on k0."""
        approved = self.new_approval(None, "deny")
        self.do_decide(approved, approve=True, stale=False)
        self.expect(
            self.agent_reservation("k0", "w1", 5.0),
            lambda: self.agent.effects.reserve(
                "k0", tool="deploy", run_id=self.run_id, owner="w1", lease_seconds=5.0
            ),
        )
        return approved

    @initialize(target=approvals)
    def start_with_an_expiring_approval(self):
        return self.new_approval(5.0, "deny")

    @rule(
        target=approvals,
        expires_in=st.sampled_from([None, 5.0, 50.0]),
        on_expiry=st.sampled_from(["deny", "keep_pending"]),
    )
    def request(self, expires_in, on_expiry):
        if self.model.interrupted:  # nothing new until a new attempt starts
            self.expect(
                errors.RunInterrupted,
                lambda: self.agent.approvals.request(
                    self.run_id, {"tool": "deploy", "late": True}, reason="r"
                ),
            )
            return multiple()
        return self.new_approval(expires_in, on_expiry)

    @rule()
    def interrupt(self):
        self.model.interrupted = True
        self.agent.runs.interrupt(self.run_id, "the worker stopped")

    @rule()
    def new_attempt(self):
        """The resume gate: refused, naming each blocker, while an approval is pending or an
        effect of the run is ambiguous; else attempt n+1 starts and the run runs again."""
        blockers = sorted(
            [("approval", a) for a in self.approvals_in("pending")]
            + [("effect", k) for k in self.effects_in("ambiguous")]
        )
        try:
            self.agent.runs.start_attempt(self.run_id, "resume")
        except errors.ResumeBlocked as err:
            assert blockers and sorted(err.blockers) == blockers, (err.blockers, blockers)  # noqa: PT017 - a Hypothesis rule checks the error it got
            return
        assert not blockers, f"a new attempt started past {blockers}"
        self.model.interrupted, self.model.attempt = False, self.model.attempt + 1

    @rule(approval_id=approvals, approve=st.booleans(), stale=st.booleans())
    def decide(self, approval_id, approve, stale):
        self.do_decide(approval_id, approve, stale)

    @precondition(lambda self: self.approvals_in("pending"))
    @rule(data=st.data(), wait=st.sampled_from([0.0, 0.0, 6.0]))
    def approve_pending(self, data, wait):
        approval_id = data.draw(st.sampled_from(self.approvals_in("pending")))
        self.clock.advance(wait)  # sometimes the person is too late
        self.do_decide(approval_id, True, False)

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

    @rule(seconds=st.sampled_from([1.0, 10.0, 40.0, 40.0, 3700.0]))
    def advance(self, seconds):
        self.clock.advance(seconds)

    @rule(approval_id=approvals, key=KEYS, owner=OWNERS, exact=st.booleans())
    def consume(self, approval_id, key, owner, exact):
        self.do_consume(approval_id, key, owner, exact)

    @precondition(lambda self: self.approvals_in("approved"))
    @rule(data=st.data(), key=KEYS)
    def consume_approved(self, data, key):
        self.do_consume(
            data.draw(st.sampled_from(self.approvals_in("approved"))), key, "w1", exact=True
        )

    @rule(key=KEYS, owner=OWNERS, lease=st.sampled_from([5.0, 20.0]))
    def reserve(self, key, owner, lease):
        error = self.agent_reservation(key, owner, lease)
        self.expect(
            error,
            lambda: self.agent.effects.reserve(
                key, tool="deploy", run_id=self.run_id, owner=owner, lease_seconds=lease
            ),
        )

    @precondition(lambda self: self.effects_in(*LIVE))
    @rule(data=st.data(), wait=st.sampled_from([0.0, 6.0, 30.0]))
    def take_over(self, data, wait):
        """Another worker wants a leased key: busy while the lease lives, ambiguous after."""
        key = data.draw(st.sampled_from(self.effects_in(*LIVE)))
        self.clock.advance(wait)
        self.reserve(key, "w2" if self.model.effects[key].owner == "w1" else "w1", 20.0)

    @precondition(lambda self: self.effects_in("failed", "committed"))
    @rule(data=st.data(), owner=OWNERS)
    def retry_finished(self, data, owner):
        self.reserve(
            data.draw(st.sampled_from(self.effects_in("failed", "committed"))), owner, 20.0
        )

    @rule(key=KEYS, owner=OWNERS, step=st.sampled_from(STEPS))
    def blind_step(self, key, owner, step):
        self.do_step(key, owner, step)

    @precondition(lambda self: self.effects_in(*LIVE))
    @rule(data=st.data(), wait=st.sampled_from([0.0, 0.0, 6.0]))
    def owner_moves_on(self, data, wait):
        key = data.draw(st.sampled_from(self.effects_in(*LIVE)))
        self.clock.advance(wait)  # sometimes the worker stalls past its lease
        effect = self.model.effects[key]
        steps = (
            ["begin", "begin", "fail", "mark_ambiguous"]
            if effect.status == "reserved"
            else ["commit", "commit", "fail", "mark_ambiguous"]
        )
        self.do_step(key, effect.owner, data.draw(st.sampled_from(steps)))

    @rule()
    def sweep(self):
        due = [
            e
            for e in self.model.effects.values()
            if e.status in LIVE and e.lease_until <= self.now()
        ]
        for effect in due:
            effect.status, effect.lease_until = "ambiguous", None
        assert self.agent.effects.sweep_expired() == len(due)

    @rule(key=KEYS, outcome=st.sampled_from(["committed", "failed"]))
    def resolve(self, key, outcome):
        self.do_resolve(key, outcome)

    @precondition(lambda self: self.effects_in("ambiguous"))
    @rule(data=st.data(), outcome=st.sampled_from(["committed", "failed"]))
    def resolve_ambiguous(self, data, outcome):
        self.do_resolve(data.draw(st.sampled_from(self.effects_in("ambiguous"))), outcome)

    @precondition(lambda self: self.effects_in("ambiguous"))
    @rule(data=st.data())
    def lease_holder_resolves(self, data):
        self.do_resolve(
            data.draw(st.sampled_from(self.effects_in("ambiguous"))), "committed", as_holder=True
        )

    # ------------------------------------------------------------ invariants
    @invariant()
    def journal_matches_model(self):
        stored = {a.id: a for a in self.agent.approvals.for_run(self.run_id)}
        assert set(stored) == set(self.model.approvals)
        decisions = Counter(
            self.agent.read(
                lambda c: (
                    c.execute(
                        select(schema.decisions.c.target_id).where(
                            schema.decisions.c.target_kind == "approval"
                        )
                    )
                    .scalars()
                    .all()
                )
            )
        )
        for aid, m in self.model.approvals.items():
            a = stored[aid]
            assert (a.status, a.version, a.consumed_effect_key) == (
                m.status,
                m.version,
                m.consumed_key,
            ), aid
            assert decisions[aid] == (0 if m.status in ("pending", "cancelled") else 1), aid
        effects = {e.key: e for e in self.agent.effects.list(limit=10).items}
        assert set(effects) == set(self.model.effects)
        for key, m in self.model.effects.items():
            e = effects[key]
            assert (e.status, e.attempt, e.lease_owner, e.lease_expires_at, e.approval_id) == (
                m.status,
                m.attempt,
                m.owner,
                m.lease_until,
                m.approval_id,
            ), key

    @invariant()
    def run_waits_exactly_while_something_is_pending(self):
        run = self.agent.runs.get(self.run_id)
        waiting = any(m.status == "pending" for m in self.model.approvals.values())
        if self.model.interrupted:
            assert run.status == "interrupted"
        else:
            assert run.status == ("waiting_for_user" if waiting else "running")
        assert run.version == run.last_sequence
        assert run.current_attempt == self.model.attempt


def test_approvals_and_effects_follow_the_model(template_journal, tmp_path):
    names = itertools.count()

    def machine():
        path = tmp_path / f"model-{next(names)}.db"
        shutil.copy2(template_journal, path)
        return ApprovalEffectMachine(path)

    run_state_machine_as_test(
        machine,
        settings=settings(
            max_examples=30,
            stateful_step_count=30,
            deadline=None,
            derandomize=True,
            phases=[Phase.explicit, Phase.reuse, Phase.generate],  # no shrinking: keep CI fast
            suppress_health_check=[HealthCheck.too_slow],
        ),
    )
