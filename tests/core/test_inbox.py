"""The cross-run inbox: everything waiting for a person, filtered and keyset-paged; snooze
hides an item without deciding it (issue 2, operator side)."""

from __future__ import annotations

import pytest

from proctor.core import Actor, InboxFilter, InboxKind, errors

from .helpers import ACTION, delta, row_counts, snapshot


@pytest.fixture
def waiting(agent, open_journal, start_run, clock):
    """One item of each kind, a second later each; returns kind -> id."""
    other = open_journal(Actor.agent("agent-2"))
    run_a = start_run("alpha")
    run_b = other.runs.start("beta", "other agent's run")
    items = {}
    clock.advance(1)
    items["approval"] = agent.approvals.request(
        run_a.id, ACTION, reason="tidy up", safety_class="destructive"
    ).id
    clock.advance(1)
    items["question"] = other.questions.ask(run_b.id, "question", "which region?").id
    clock.advance(1)
    entry = agent.memory.add("project", "alpha", "region", "eu-west")
    items["memory"] = agent.memory.record_conflict(
        entry.id, "us-east", incoming_source="sync", run_id=run_a.id
    ).id
    clock.advance(1)
    agent.effects.reserve("charge-1", tool="payments.charge", run_id=run_a.id, owner="w")
    agent.effects.mark_ambiguous("charge-1", "gateway timeout", owner="w")
    items["effect"] = "charge-1"
    return items


def test_every_kind_of_waiting_item_is_listed_newest_first(operator, waiting):
    page = operator.inbox.list()
    assert [(i.kind.value, i.id) for i in page.items] == [
        ("effect", waiting["effect"]),
        ("conflict", waiting["memory"]),
        ("question", waiting["question"]),
        ("approval", waiting["approval"]),
    ]
    oldest = operator.inbox.list(InboxFilter(newest_first=False))
    assert [i.id for i in oldest.items] == [i.id for i in reversed(page.items)]
    assert operator.inbox.counts() == {k: 1 for k in InboxKind}
    assert operator.inbox.count() == 4


def test_item_versions_are_the_ones_to_decide_with(operator, waiting):
    by_kind = {i.kind.value: i for i in operator.inbox.list().items}
    operator.approvals.decide(
        waiting["approval"], True, expected_version=by_kind["approval"].version
    )
    operator.questions.answer(
        waiting["question"], {"text": "eu"}, expected_version=by_kind["question"].version
    )
    operator.memory.resolve(
        waiting["memory"],
        "dismissed",
        expected_version=by_kind["conflict"].version,
        reason="checked",
    )
    operator.effects.resolve(
        "charge-1",
        "failed",
        reason="no charge on statement",
        expected_version=by_kind["effect"].version,
    )
    assert operator.inbox.list().items == [] and operator.inbox.count() == 0


def test_filters(operator, waiting):
    def ids(**kw):
        return {i.id for i in operator.inbox.list(InboxFilter(**kw)).items}

    assert ids(kinds=frozenset({InboxKind.QUESTION})) == {waiting["question"]}
    assert ids(agent="agent-2") == {waiting["question"]}
    assert ids(project="alpha") == {waiting["approval"], waiting["memory"], waiting["effect"]}
    assert ids(safety_class="destructive") == {waiting["approval"]}
    assert ids(text="gateway") == {waiting["effect"]}
    assert ids(text="region") == {waiting["question"], waiting["memory"]}
    assert ids(text="100%") == set()
    facets = operator.inbox.facets()
    assert facets["agent"] == ["agent-1", "agent-2"]
    assert facets["project"] == ["alpha", "beta"]


def test_keyset_paging_is_exact_even_with_equal_timestamps(agent, operator, run, clock):
    made = set()
    for i in range(9):
        if i % 3 == 0:
            clock.advance(1)  # three items share each timestamp
        made.add(agent.approvals.request(run.id, {"tool": f"t{i}"}, reason="r").id)
    for newest_first in (True, False):
        seen, cursor, pages = [], None, 0
        while True:
            page = operator.inbox.list(
                InboxFilter(newest_first=newest_first), cursor=cursor, limit=2
            )
            seen += page.items
            pages += 1
            if page.next_cursor is None:
                break
            cursor = page.next_cursor
        assert [i.id for i in seen] != [] and {i.id for i in seen} == made
        assert len(seen) == 9 and pages == 5
        keys = [(i.created_at, i.id) for i in seen]
        assert keys == sorted(keys, reverse=newest_first)


def test_snooze_hides_without_deciding(operator, waiting, clock, journal_path):
    approval = operator.approvals.get(waiting["approval"])
    before = row_counts(journal_path)
    operator.inbox.snooze(
        "approval",
        approval.id,
        clock() + 3600,
        expected_version=approval.version,
        request_id="sn-1",
    )
    changed = delta(before, row_counts(journal_path))
    assert changed.get("decisions", 0) == 0 and changed["audit"] == 1
    snoozed = operator.approvals.get(approval.id)
    assert snoozed.status == "pending" and snoozed.version == approval.version + 1
    assert waiting["approval"] not in {i.id for i in operator.inbox.list().items}
    assert operator.inbox.counts()[InboxKind.APPROVAL] == 0
    assert [i.id for i in operator.inbox.list(InboxFilter(snoozed=True)).items] == [approval.id]
    assert [a.action for a in operator.audit.for_entity(approval.id)] == ["inbox.snoozed"]
    replay = snapshot(journal_path)
    operator.inbox.snooze(
        "approval",
        approval.id,
        clock() + 3600,
        expected_version=approval.version,
        request_id="sn-1",
    )
    assert snapshot(journal_path) == replay
    clock.advance(3601)
    assert waiting["approval"] in {i.id for i in operator.inbox.list().items}


def test_unsnooze_and_stale_snooze(operator, waiting, clock, journal_path):
    effect = operator.effects.get("charge-1")
    operator.inbox.snooze("effect", "charge-1", clock() + 60, expected_version=effect.version)
    before = snapshot(journal_path)
    with pytest.raises(errors.StaleVersion):
        operator.inbox.snooze("effect", "charge-1", None, expected_version=effect.version)
    with pytest.raises(errors.NotFound):
        operator.inbox.snooze("question", "int_missing", None, expected_version=1)
    assert snapshot(journal_path) == before
    operator.inbox.snooze("effect", "charge-1", None, expected_version=effect.version + 1)
    assert "charge-1" in {i.id for i in operator.inbox.list().items}
    assert [a.action for a in operator.audit.for_entity("charge-1")][-2:] == [
        "inbox.snoozed",
        "inbox.unsnoozed",
    ]


def test_summary_of_long_agent_text_is_bounded(agent, operator, run):
    agent.approvals.request(run.id, ACTION, reason="very long reason " * 100)
    [item] = operator.inbox.list().items
    assert len(item.summary) <= 240 and item.summary.endswith("…")


def test_items_without_a_run_are_listed_with_their_own_context(agent, operator):
    entry = agent.memory.add("user", "ada", "editor", "vim")
    conflict = agent.memory.record_conflict(entry.id, "emacs", incoming_source="laptop-sync")
    agent.effects.reserve("mail-1", tool="smtp.send", owner="mailer@42")
    agent.effects.mark_ambiguous("mail-1", "connection reset", owner="mailer@42")
    items = {i.id: i for i in operator.inbox.list().items}
    memory, effect = items[conflict.id], items["mail-1"]
    assert (memory.run_id, memory.agent, memory.project) == (None, "laptop-sync", "ada")
    assert (effect.run_id, effect.agent) == (None, "mailer@42")
    assert "connection reset" in effect.summary and "editor" in memory.summary


def test_pick_rereads_just_the_named_items_under_a_filter(operator, waiting):
    picked = operator.inbox.pick(None, [waiting["approval"], waiting["effect"], "apr_gone"])
    assert {(i.kind.value, i.id) for i in picked} == {
        ("approval", waiting["approval"]),
        ("effect", waiting["effect"]),
    }
    only_questions = InboxFilter(kinds=frozenset({InboxKind.QUESTION}))
    assert operator.inbox.pick(only_questions, [waiting["approval"]]) == []
    operator.approvals.decide(waiting["approval"], False, expected_version=1, reason="no")
    assert operator.inbox.pick(None, [waiting["approval"]]) == []
    assert operator.inbox.pick(None, []) == []


@pytest.mark.parametrize("newest_first", [True, False])
def test_small_pages_of_mixed_kinds_list_every_item_once_in_order(
    agent, operator, start_run, clock, newest_first
):
    """Each kind is cut to a page before the kinds are merged: paging must still interleave
    them exactly as one sorted list would, ties on created_at broken by id."""
    run = start_run("mixed")
    for n in range(9):
        if n % 3 != 2:
            clock.advance(1)  # some items share a created_at
        agent.approvals.request(run.id, {"tool": f"t{n}"}, reason=f"deploy {n}")
        agent.questions.ask(run.id, "question", f"deploy where {n}?")
        if n % 4 == 0:
            agent.effects.reserve(f"fx-{n}", tool="deploy", run_id=run.id, owner="w")
            agent.effects.mark_ambiguous(f"fx-{n}", "timeout", owner="w")
    for f in (
        InboxFilter(newest_first=newest_first),
        InboxFilter(newest_first=newest_first, text="deploy 1"),
    ):
        seen, cursor = [], None
        while True:
            page = operator.inbox.list(f, cursor=cursor, limit=4)
            seen += page.items
            cursor = page.next_cursor
            if cursor is None:
                break
        keys = [(i.created_at, i.id) for i in seen]
        assert keys == sorted(keys, reverse=newest_first)
        assert len(set(keys)) == len(keys) == operator.inbox.count(f)
        assert {i.kind.value for i in seen} == (
            {"approval", "question", "effect"} if f.text is None else {"approval"}
        )


def test_any_part_of_what_a_row_says_finds_it(operator, waiting):
    """The search box matches a row's summary as the list shows it, its fixed words too:
    "outcome unknown" finds the ambiguous effect (on proctor demo it found nothing while
    the rows said "shell.exec: outcome unknown (…)"); so does every piece of every row."""
    rows = operator.inbox.list().items
    for item in rows:
        text = item.summary
        for size in (6, 15):
            for start in range(0, max(len(text) - size, 0) + 1, 3):
                piece = text[start : start + size]
                found = {i.id for i in operator.inbox.list(InboxFilter(text=piece)).items}
                assert item.id in found, (piece, text)
    words = {"outcome unknown": "effect", "conflict in": "memory", "[question]": "question"}
    for piece, kind in words.items():
        found = {i.id for i in operator.inbox.list(InboxFilter(text=piece)).items}
        assert found == {waiting[kind]}, piece
