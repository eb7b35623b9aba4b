"""The store reads and writes the Memory and Effects pages stand on (proctor.core
memory_views / effect_views, memory.reveal, memory.resolve_seen), on real journal files."""

from __future__ import annotations

import pytest

from proctor.core import Actor, Journal, errors
from proctor.core.effects.views import EffectQuery
from proctor.core.memory.views import MemoryQuery, estimate_tokens
from proctor.core.models import EffectStatus, MemoryScope, Trust


def make_filled(path):
    ids: dict[str, str] = {}
    with Journal.open(path, actor=Actor.agent("coder")) as a:
        run = a.runs.start("shop", "memory run", agent="coder")
        ids["run"] = run.id
        for n in range(9):
            e = a.memory.add(
                "project",
                "shop",
                f"fact {n}",
                "x" * (40 * n + 4),
                kind="lesson" if n % 3 == 0 else "fact",
                priority=n % 4,
                trust=Trust.MODEL_INFERRED if n % 2 else Trust.AGENT_OBSERVED,
                sensitivity="personal" if n == 5 else "normal",
                run_id=run.id,
            )
            ids[f"e{n}"] = e.id
        a.memory.add("user", "bob", "Bob likes tea", "tea, no sugar")
        a.memory.add("space", "ops", "On-call", "rota in the wiki")
        ids["rec"] = a.memory.record_conflict(ids["e1"], "changed", incoming_source="sync").id
    with Journal.open(path, actor=Actor.operator("alice")) as op:
        e2 = op.memory.get(ids["e2"])
        op.memory.pin(e2.id, expected_version=e2.version)
        e3 = op.memory.get(ids["e3"])
        op.memory.remove(e3.id, expected_version=e3.version, reason="obsolete")
    return path, ids


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    """One filled journal for the tests that only read it."""
    return make_filled(tmp_path_factory.mktemp("memory-views") / "j.db")


@pytest.fixture
def filled(tmp_path):
    return make_filled(tmp_path / "j.db")


def all_pages(memory, query: MemoryQuery, limit: int = 2) -> list:
    out, cursor = [], None
    while True:
        page = memory.browse(query, cursor=cursor, limit=limit)
        out += page.items
        if page.next_cursor is None:
            return out
        cursor = page.next_cursor


@pytest.mark.parametrize(
    ("sort", "descending", "key"),
    [
        ("updated", True, lambda e: (-e.updated_at, e.id)),
        ("priority", True, lambda e: (-e.priority, -e.updated_at, e.id)),
        ("title", False, lambda e: (e.title, e.id)),
        ("created", False, lambda e: (e.created_at, e.id)),
    ],
)
def test_browse_pages_through_every_entry_in_order(shared, sort, descending, key):
    path, _ = shared
    with Journal.open(path, read_only=True) as j:
        got = all_pages(j.memory, MemoryQuery(sort=sort, descending=descending, deleted=None))
        assert len(got) == 11 and len({e.id for e in got}) == 11
        if sort in ("priority", "title"):
            assert [key(e)[0] for e in got] == sorted(key(e)[0] for e in got)


def test_browse_filters(shared):
    path, _ids = shared
    with Journal.open(path, read_only=True) as j:
        m = j.memory

        def titles(**kw) -> set[str]:
            return {e.title for e in all_pages(m, MemoryQuery(**kw), limit=50)}

        assert len(titles()) == 10  # one removed
        assert titles(deleted=True) == {"fact 3"}
        assert len(titles(deleted=None)) == 11
        assert titles(pinned=True) == {"fact 2"}
        assert titles(kind="lesson") == {"fact 0", "fact 6"}
        assert titles(trust=Trust.MODEL_INFERRED) == {"fact 1", "fact 5", "fact 7"}
        assert titles(sensitivity="personal") == {"fact 5"}
        assert titles(scope=MemoryScope.USER) == {"Bob likes tea"}
        assert titles(scope=MemoryScope.PROJECT, scope_key="shop", confirmed=False) == {
            f"fact {n}" for n in range(9) if n != 3
        }
        assert titles(text="NO SUGAR") == {"Bob likes tea"}
        assert titles(text="rota") == {"On-call"}
        assert titles(text="100%_") == set()  # LIKE wildcards are literal
        assert m.facets() == {"kind": ["fact", "lesson"], "sensitivity": ["normal", "personal"]}


def test_scope_usage_counts_and_tokens(shared):
    path, _ = shared
    with Journal.open(path, read_only=True) as j:
        usage = {(u.scope, u.scope_key): u for u in j.memory.scopes()}
    shop = usage[(MemoryScope.PROJECT, "shop")]
    assert (shop.entries, shop.removed, shop.pinned, shop.conflicts) == (8, 1, 1, 1)
    live_chars = sum(40 * n + 4 for n in range(9) if n != 3)
    assert shop.chars == live_chars and shop.tokens == estimate_tokens(live_chars)
    assert estimate_tokens(4) == 1 and estimate_tokens(5) == 2 and estimate_tokens(0) == 0
    assert usage[(MemoryScope.USER, "bob")].entries == 1
    assert next(iter(usage))[0] == MemoryScope.PROJECT  # project, space, user


def test_reveal_is_audited_and_for_operators_only(filled):
    path, ids = filled
    with Journal.open(path, actor=Actor.agent("coder")) as a, pytest.raises(errors.NotAllowed):
        a.memory.reveal(ids["e5"])
    with Journal.open(path, actor=Actor.operator("alice")) as op:
        before = op.audit.count()
        entry = op.memory.reveal(ids["e5"], reason="checking the address")
        assert entry.content == "x" * 204
        rows = [a for a in op.audit.for_entity(ids["e5"]) if a.action == "memory.reveal"]
        assert op.audit.count() == before + 1
        assert len(rows) == 1 and rows[0].actor == "operator:alice"
        assert rows[0].before == {"version": 1, "sensitivity": "personal"}
        assert op.memory.get(ids["e5"]).version == 1  # a look changes nothing
        with pytest.raises(errors.NotFound):
            op.memory.reveal("mem_nope")


def test_resolve_seen_refuses_when_the_entry_moved_on(filled):
    path, ids = filled
    with Journal.open(path, actor=Actor.agent("coder")) as a:
        e1 = a.memory.get(ids["e1"])
        a.memory.replace(e1.id, "moved on", expected_version=e1.version)
    with Journal.open(path, actor=Actor.operator("alice")) as op:
        audit = op.audit.count()
        with pytest.raises(errors.StaleVersion) as err:
            op.memory.resolve_seen(
                ids["rec"],
                "accepted_incoming",
                expected_version=1,
                entry_version=e1.version,
                reason="take it",
            )
        assert err.value.details["entry_version"] == e1.version + 1
        assert op.audit.count() == audit
        assert op.memory.conflict(ids["rec"]).status.value == "pending"
        done = op.memory.resolve_seen(
            ids["rec"],
            "accepted_incoming",
            expected_version=1,
            entry_version=e1.version + 1,
            reason="take it",
        )
        assert done.status.value == "accepted_incoming"
        assert op.memory.get(ids["e1"]).content == "changed"


def test_effect_browse_and_context(tmp_path):
    path = tmp_path / "e.db"
    clock = [1000.0]
    with Journal.open(path, actor=Actor.agent("payer"), clock=lambda: clock[0]) as a:
        run = a.runs.start("shop", "pay", agent="payer")
        call = a.runs.record_tool_call(
            run.id, "pay", {"amount": 12}, safety_class="financial", idempotency_key="idem-1"
        )
        a.effects.reserve(
            "pay:1",
            tool="pay",
            run_id=run.id,
            action={"amount": 12},
            safety_class="financial",
            idempotency_key="idem-1",
            lease_seconds=5,
            owner="w1",
        )
        a.effects.begin("pay:1", owner="w1")
        a.effects.reserve("mail:1", tool="mail", run_id=run.id, lease_seconds=60, owner="w1")
        clock[0] += 10  # pay:1's lease lapsed, mail:1's is live
        q = a.effects.browse(EffectQuery(lapsed=True))
        assert [e.key for e in q.items] == ["pay:1"]
        live = a.effects.browse(
            EffectQuery(statuses=frozenset({EffectStatus.RESERVED, EffectStatus.EXECUTING}))
        )
        assert {e.key for e in live.items} == {"pay:1", "mail:1"}
        assert [e.key for e in a.effects.browse(EffectQuery(text="MAIL")).items] == ["mail:1"]
        ctx = a.effects.context("pay:1")
        assert ctx.run.id == run.id and ctx.tool_call.id == call.id and ctx.receipts == []
        assert a.effects.get("mail:1").status == EffectStatus.RESERVED  # reads change nothing
        assert a.effects.sweep_expired() == 1
        assert a.effects.get("mail:1").status == EffectStatus.RESERVED  # never a live lease
        assert a.effects.browse(EffectQuery(lapsed=True)).items == []
        with pytest.raises(errors.NotFound):
            a.effects.context("nope")
