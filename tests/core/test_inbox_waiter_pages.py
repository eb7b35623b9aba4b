"""Issue 37: paging the inbox sorted by waiter is stable. The key's first part is live (is
an agent waiting now?), so a row whose agent starts or stops waiting between two pages
moved across the cursor: skipped, or listed twice. Every page of one listing ranks at the
first page's time (its cursor carries it). On both stores; the waits are the agent's own
stamps, written by raw SQL as its ``wait`` writes them."""

from __future__ import annotations

import pytest

from proctor.core import Actor, InboxFilter

from .helpers import raw

NAMES = "abcdef"


@pytest.fixture
def filed(open_journal, clock) -> dict[str, str]:
    agent = open_journal(Actor.agent("bot"))
    run = agent.runs.start("shop", "sorted")
    ids = {}
    for name in NAMES:
        ids[name] = agent.approvals.request(run.id, {"tool": name}, reason=name).id
        clock.advance(1)  # distinct ages
    return ids


def stamp(journal_path, approval_id: str, at: float) -> None:
    with raw(journal_path) as conn:
        conn.execute("UPDATE approvals SET waiter_seen_at = ? WHERE id = ?", (at, approval_id))


def pages(j, f: InboxFilter, limit: int, between) -> list[str]:
    """Every page's ids in order, calling ``between(n)`` after page n (from 1)."""
    out, cursor, n = [], None, 0
    while True:
        page = j.inbox.list(f, cursor=cursor, limit=limit)
        out += [i.id for i in page.items]
        if page.next_cursor is None:
            return out
        n += 1
        between(n)
        cursor = page.next_cursor


@pytest.mark.parametrize("newest_first", [True, False])
def test_a_waiter_that_starts_between_pages_is_neither_skipped_nor_repeated(
    open_journal, filed, clock, journal_path, newest_first
):
    operator = open_journal(Actor.operator("alice"))
    f = InboxFilter(sort="waiter", newest_first=newest_first)
    first = operator.inbox.list(f, limit=2).items
    later = [i for n, i in filed.items() if i not in {x.id for x in first}]

    def starts(n: int) -> None:
        if n == 1:  # the agent of a row not shown yet starts waiting
            clock.advance(1)
            stamp(journal_path, later[-1], clock.t)

    got = pages(operator, f, 2, starts)
    assert sorted(got) == sorted(filed.values()) and len(got) == len(set(got))


@pytest.mark.parametrize("newest_first", [True, False])
def test_a_waiter_that_stops_between_pages_is_neither_skipped_nor_repeated(
    open_journal, filed, clock, journal_path, newest_first
):
    for name in "bd":
        stamp(journal_path, filed[name], clock.t)
    operator = open_journal(Actor.operator("alice"))
    f = InboxFilter(sort="waiter", newest_first=newest_first)

    def stops(n: int) -> None:
        if n == 1:  # both agents stopped: their stamps grow old
            clock.advance(3600)

    got = pages(operator, f, 1, stops)
    assert sorted(got) == sorted(filed.values()) and len(got) == len(set(got))
    assert set(got[:2]) == {filed["b"], filed["d"]}  # ranked as at the first page


def test_a_cursor_of_another_list_is_refused(open_journal, filed):
    from proctor.core import errors

    operator = open_journal(Actor.operator("alice"))
    by_age = operator.inbox.list(InboxFilter(), limit=2).next_cursor
    with pytest.raises(errors.ValidationError, match="cursor"):
        operator.inbox.list(InboxFilter(sort="waiter"), cursor=by_age, limit=2)
