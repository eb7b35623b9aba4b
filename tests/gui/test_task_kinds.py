"""The task runner's keyed reads: latest-wins and coalesce, on real worker threads."""

from __future__ import annotations

import threading

from PySide6.QtCore import QObject

WAIT = 10_000


def gated(value, gate: threading.Event, started: list | None = None):
    """A read that returns ``value`` once ``gate`` opens (and notes when it started)."""

    def fn():
        if started is not None:
            started.append(value)
        assert gate.wait(10)
        return value

    return fn


def test_latest_drops_the_older_result_even_when_it_arrives_last(qtbot, runner):
    owner, got, slow, fast = QObject(), [], threading.Event(), threading.Event()
    runner.latest("detail", gated("old", slow), on_done=got.append, owner=owner)
    runner.latest("detail", gated("new", fast), on_done=got.append, owner=owner)
    fast.set()
    qtbot.waitUntil(lambda: got == ["new"], timeout=WAIT)
    slow.set()  # the older read finishes after the newer one was shown
    qtbot.waitUntil(lambda: runner.pending() == 0, timeout=WAIT)
    assert got == ["new"]


def test_latest_drops_the_older_error_too(qtbot, runner):
    owner, got, errors, gate = QObject(), [], [], threading.Event()

    def fails():
        assert gate.wait(10)
        raise RuntimeError("stale")

    runner.latest("detail", fails, on_done=got.append, on_error=errors.append, owner=owner)
    runner.latest("detail", lambda: "new", on_done=got.append, on_error=errors.append, owner=owner)
    qtbot.waitUntil(lambda: got == ["new"], timeout=WAIT)
    gate.set()
    qtbot.waitUntil(lambda: runner.pending() == 0, timeout=WAIT)
    assert errors == []


def test_latest_keys_are_per_key_and_per_owner(qtbot, runner):
    first, second, got = QObject(), QObject(), []
    with qtbot.waitSignal(runner.idle, timeout=WAIT):
        runner.latest("detail", lambda: "a", on_done=got.append, owner=first)
        runner.latest("detail", lambda: "b", on_done=got.append, owner=second)
        runner.latest("header", lambda: "c", on_done=got.append, owner=first)
    qtbot.waitUntil(lambda: runner.pending() == 0, timeout=WAIT)
    assert sorted(got) == ["a", "b", "c"]


def test_drop_forgets_the_read_in_flight(qtbot, runner):
    owner, got, gate = QObject(), [], threading.Event()
    runner.latest("detail", gated("old", gate), on_done=got.append, owner=owner)
    runner.drop("detail", owner)
    gate.set()
    with qtbot.waitSignal(runner.idle, timeout=WAIT):
        pass
    assert got == []


def test_coalesce_runs_one_read_per_key_and_the_last_request_after_it(qtbot, runner):
    owner, got, started = QObject(), [], []
    gates = {name: threading.Event() for name in ("first", "second", "third")}
    for name in ("first", "second", "third"):
        runner.coalesce("facts", gated(name, gates[name], started), on_done=got.append, owner=owner)
    qtbot.waitUntil(lambda: started == ["first"], timeout=WAIT)
    assert runner.pending() == 2  # one in flight, one waiting (the second was replaced)
    gates["first"].set()
    qtbot.waitUntil(lambda: got == ["first"], timeout=WAIT)
    qtbot.waitUntil(lambda: started == ["first", "third"], timeout=WAIT)
    assert got == ["first"]  # the follow-up starts only after the first was delivered
    gates["third"].set()
    with qtbot.waitSignal(runner.idle, timeout=WAIT):
        pass
    assert got == ["first", "third"] and started == ["first", "third"]


def test_coalesce_follows_up_after_an_error(qtbot, runner):
    owner, got, errors, gate = QObject(), [], [], threading.Event()

    def fails():
        assert gate.wait(10)
        raise RuntimeError("store busy")

    runner.coalesce("facts", fails, on_done=got.append, on_error=errors.append, owner=owner)
    runner.coalesce(
        "facts", lambda: "again", on_done=got.append, on_error=errors.append, owner=owner
    )
    gate.set()
    qtbot.waitUntil(lambda: got == ["again"], timeout=WAIT)
    assert len(errors) == 1


def test_idle_waits_for_the_coalesced_follow_up(qtbot, runner):
    owner, got, gate = QObject(), [], threading.Event()
    runner.coalesce("facts", gated("first", gate), on_done=got.append, owner=owner)
    runner.coalesce("facts", lambda: "second", on_done=got.append, owner=owner)
    gate.set()
    with qtbot.waitSignal(runner.idle, timeout=WAIT):
        pass
    assert got == ["first", "second"]


def test_a_dead_owner_gets_nothing_and_its_follow_up_never_runs(qtbot, runner):
    owner, got, started, gate = QObject(), [], [], threading.Event()
    runner.coalesce("facts", gated("first", gate, started), on_done=got.append, owner=owner)
    runner.coalesce(
        "facts", gated("second", threading.Event(), started), on_done=got.append, owner=owner
    )
    qtbot.waitUntil(lambda: started == ["first"], timeout=WAIT)
    owner.deleteLater()
    qtbot.waitUntil(lambda: not __import__("shiboken6").isValid(owner), timeout=WAIT)
    gate.set()
    with qtbot.waitSignal(runner.idle, timeout=WAIT):
        pass
    assert got == [] and started == ["first"]


def test_a_request_made_while_the_read_is_delivered_is_the_follow_up(qtbot, runner):
    """The follow-up starts after the delivery, so a request made from the delivered read's
    own ``on_done`` (the watcher asking again from where it now stands) replaces the one
    waiting: it is the last request, and reads what the delivery left."""
    owner, got, started, gate = QObject(), [], [], threading.Event()
    opened = threading.Event()
    opened.set()

    def first_done(value) -> None:
        got.append(value)
        runner.coalesce(
            "feed", gated("after delivery", opened, started), on_done=got.append, owner=owner
        )

    runner.coalesce("feed", gated("first", gate, started), on_done=first_done, owner=owner)
    runner.coalesce(
        "feed", gated("before delivery", opened, started), on_done=got.append, owner=owner
    )
    qtbot.waitUntil(lambda: started == ["first"], timeout=WAIT)
    gate.set()
    qtbot.waitUntil(lambda: len(got) == 2 and runner.pending() == 0, timeout=WAIT)
    assert got == ["first", "after delivery"]
    assert started == ["first", "after delivery"]
