"""Desktop notifications without a tray (issue 23): the desk sends freedesktop notifications
over the session D-Bus, and a click on one opens its item.

Against a REAL private bus (``dbus-daemon``, a config of its own: no service activation) with
a small notification server on it that records Notify calls and emits ActionInvoked."""

from __future__ import annotations

import logging
import queue
import shutil
import sqlite3
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jeepney import DBusAddress, MatchRule, message_bus, new_method_return, new_signal
from jeepney.io.threading import DBusRouter, Proxy, open_dbus_connection
from PySide6.QtWidgets import QSystemTrayIcon

from proctor.core import Actor, InboxKind, Journal
from proctor.gui.inbox.model import item_key
from proctor.gui.shell import desktop_notify

from .conftest import WAIT_MS

pytestmark = pytest.mark.skipif(
    shutil.which("dbus-daemon") is None, reason="dbus-daemon is not installed (.ci/run installs it)"
)
NO_RAISE = pytest.mark.qt_log_ignore("This plugin does not support raise")  # offscreen: no WM

HOSTILE = '<b>bold</b> <a href="https://evil.example">click</a> & <img src=x onerror=alert(1)>'
BUS_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:dir={dir}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
"""


@pytest.fixture
def bus_daemon(tmp_path: Path) -> Iterator[tuple[str, subprocess.Popen]]:
    """A session bus of this test's own: its address and its dbus-daemon process."""
    sock_dir = tmp_path / "bus"
    sock_dir.mkdir()
    config = tmp_path / "bus.conf"
    config.write_text(BUS_CONFIG.format(dir=sock_dir))
    proc = subprocess.Popen(
        ["dbus-daemon", f"--config-file={config}", "--print-address", "--nofork"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        address = proc.stdout.readline().strip()
        assert address.startswith("unix:"), address
        yield address, proc
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.fixture
def private_bus(bus_daemon: tuple[str, subprocess.Popen]) -> str:
    """The address of a session bus of this test's own."""
    return bus_daemon[0]


class NotificationServer:
    """org.freedesktop.Notifications on ``address``: records every Notify call's arguments
    and answers with a fresh id; ``invoke(id)`` emits ActionInvoked(id, "default")."""

    def __init__(self, address: str) -> None:
        self.conn = open_dbus_connection(bus=address)
        self.router = DBusRouter(self.conn)
        reply = Proxy(message_bus, self.router, timeout=5).RequestName(
            desktop_notify.SERVICE, 4
        )  # DO_NOT_QUEUE
        assert reply == (1,)  # the primary owner
        self.calls: list[tuple[Any, ...]] = []
        self._incoming: queue.Queue[Any] = queue.Queue()
        self._filter = self.router.filter(
            MatchRule(type="method_call", interface=desktop_notify.INTERFACE), queue=self._incoming
        )
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while (msg := self._incoming.get()) is not None:
            member = msg.header.fields.get(3)  # HeaderFields.member
            if member == "Notify":
                self.calls.append(msg.body)
                self.router.send(new_method_return(msg, "u", (len(self.calls) + 40,)))
            elif member == "GetCapabilities":
                self.router.send(new_method_return(msg, "as", (["actions", "body"],)))

    def invoke(self, notification_id: int, action: str = "default") -> None:
        emitter = DBusAddress(desktop_notify.PATH, interface=desktop_notify.INTERFACE)
        self.router.send(new_signal(emitter, "ActionInvoked", "us", (notification_id, action)))

    def close(self) -> None:
        self._incoming.put(None)
        self._thread.join(10)
        self._filter.close()
        self.router.close()
        self.conn.close()


@pytest.fixture
def server(private_bus: str) -> Iterator[NotificationServer]:
    s = NotificationServer(private_bus)
    yield s
    s.close()


def request_late(path: Path, run_id: str, reason: str) -> str:
    with Journal.open(path, actor=Actor.agent("late")) as a:
        return a.approvals.request(run_id, {"tool": "deploy", "args": {}}, reason=reason).id


def background_desk(open_desk, path: Path, monkeypatch: pytest.MonkeyPatch):
    """A desk behind other windows, the operator elsewhere: its list is not under the pointer
    (the offscreen cursor sits where an earlier test of this process left it, and over the
    list arrivals are held behind the "N new" bar) and no key was just pressed."""
    window = open_desk(path)
    monkeypatch.setattr(window, "isActiveWindow", lambda: False)  # the desk is behind
    monkeypatch.setattr(window.inbox, "pointer_on_list", lambda: False)
    monkeypatch.setattr(window.inbox.watch, "typing", lambda: False)
    return window


@NO_RAISE
def test_a_new_request_sends_one_desktop_notification_and_its_click_opens_it(
    qtbot, populated, open_desk, monkeypatch, private_bus, server
):
    assert not QSystemTrayIcon.isSystemTrayAvailable()  # offscreen: no tray, like stock GNOME
    path, ids = populated
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", private_bus)
    window = background_desk(open_desk, path, monkeypatch)
    shown: list[tuple[str, str]] = []
    window.notifier.notified.connect(lambda channel, text: shown.append((channel, text)))
    approval = request_late(path, ids["run"], HOSTILE)
    qtbot.waitUntil(lambda: {"banner", "desktop"} <= set(dict(shown)), timeout=WAIT_MS)
    with Journal.open(path) as j:
        [item] = j.inbox.pick(None, [approval])
    # a second change that is no new request: no second notification
    with Journal.open(path, actor=Actor.agent("late")) as a:
        a.runs.append_events(ids["run"], [("step", {"n": 99})])
    qtbot.waitUntil(lambda: window.inbox.model.row_of(item_key(item)) >= 0, timeout=WAIT_MS)
    assert len(server.calls) == 1
    app_name, replaces_id, _icon, summary, body, actions, hints, _timeout = server.calls[0]
    assert app_name == "Proctor Desk" and replaces_id == 0
    assert summary == "New request waiting"
    assert "default" in actions[::2]
    assert hints["desktop-entry"] == ("s", "dev.proctor.Desk")
    # agent text is hostile: the words arrive, the markup does not
    assert "<" not in body and ">" not in body and "&" not in body
    assert "bold" in body and "img src=x onerror=alert(1)" in body
    assert item.agent in body
    assert dict(shown)["desktop"] == dict(shown)["banner"]

    window.go("runs")  # the operator is elsewhere
    server.invoke(41)
    qtbot.waitUntil(
        lambda: (
            window.current_page_id() == "inbox"
            and window.inbox.detail.current_item() is not None
            and item_key(window.inbox.detail.current_item()) == item_key(item)
        ),
        timeout=WAIT_MS,
    )
    assert window.inbox.detail.current_item().kind is InboxKind.APPROVAL


@NO_RAISE
def test_the_bus_going_away_turns_the_channel_off_at_once_and_raises_in_no_thread(
    qtbot, populated, open_desk, monkeypatch, bus_daemon
):
    address, daemon = bus_daemon
    server = NotificationServer(address)
    path, ids = populated
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", address)
    unhandled: list[BaseException | None] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: unhandled.append(args.exc_value))
    window = background_desk(open_desk, path, monkeypatch)
    shown: list[str] = []
    window.notifier.notified.connect(lambda channel, _text: shown.append(channel))
    request_late(path, ids["run"], "first")
    qtbot.waitUntil(lambda: "desktop" in shown, timeout=WAIT_MS)
    server.close()  # the test's own server leaves first: only the desk's reader is left
    daemon.kill()  # the session ends under the desk
    daemon.wait(10)
    qtbot.waitUntil(lambda: window.notifier.desktop.failed, timeout=WAIT_MS)  # no send needed
    request_late(path, ids["run"], "second")
    qtbot.waitUntil(lambda: shown.count("banner") == 2, timeout=WAIT_MS)
    assert shown.count("desktop") == 1
    assert unhandled == []


@NO_RAISE
def test_a_click_on_an_unknown_or_other_action_opens_nothing(
    qtbot, populated, open_desk, monkeypatch, private_bus, server
):
    path, ids = populated
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", private_bus)
    window = background_desk(open_desk, path, monkeypatch)
    opened: list[Any] = []
    window.notifier.item_requested.connect(opened.append)
    dropped: list[tuple[int, str]] = []
    window.notifier.desktop_dropped.connect(lambda n, action: dropped.append((n, action)))
    request_late(path, ids["run"], "first")
    qtbot.waitUntil(lambda: len(server.calls) == 1, timeout=WAIT_MS)
    server.invoke(41, "dismiss")  # not the default action
    server.invoke(7)  # never ours
    server.invoke(41)  # ours: the only one that opens
    qtbot.waitUntil(lambda: bool(opened), timeout=WAIT_MS)
    qtbot.waitUntil(lambda: window.current_page_id() == "inbox", timeout=WAIT_MS)
    assert len(opened) == 1
    assert dropped == [(41, "dismiss"), (7, "default")]  # in order, before the click opened


def test_a_bus_without_a_notification_service_falls_back_to_the_banner_logged_once(
    qtbot, populated, open_desk, monkeypatch, private_bus, caplog
):
    path, ids = populated
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", private_bus)  # a bus, but no server on it
    window = background_desk(open_desk, path, monkeypatch)
    shown: list[tuple[str, str]] = []
    window.notifier.notified.connect(lambda channel, text: shown.append((channel, text)))
    caplog.set_level(logging.INFO, logger="proctor.gui.shell.desktop_notify")
    request_late(path, ids["run"], "first")
    qtbot.waitUntil(lambda: window.notifier.desktop.failed, timeout=WAIT_MS)
    request_late(path, ids["run"], "second")
    qtbot.waitUntil(lambda: [c for c, _ in shown].count("banner") == 2, timeout=WAIT_MS)
    assert [c for c, _ in shown] == ["banner", "banner"]  # nothing said it was sent
    off = [r for r in caplog.records if "desktop notifications are off" in r.getMessage()]
    assert len(off) == 1


def test_no_session_bus_at_all_falls_back_to_the_banner(qtbot, populated, open_desk, monkeypatch):
    path, ids = populated  # the autouse fixture took DBUS_SESSION_BUS_ADDRESS away
    window = background_desk(open_desk, path, monkeypatch)
    shown: list[str] = []
    window.notifier.notified.connect(lambda channel, _text: shown.append(channel))
    request_late(path, ids["run"], "first")
    qtbot.waitUntil(lambda: "banner" in shown, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: window.notifier.desktop.failed, timeout=WAIT_MS)


# ---------------------------------------------------------------- deciding from the notification
SAFE = {"tool": "fs.write", "args": {"path": "notes/today.md"}}
RISKY = {"tool": "payments.refund", "args": {"amount": 120, "to": "cus_42"}}


def request_action(path: Path, run_id: str, action: dict, safety: str) -> str:
    with Journal.open(path, actor=Actor.agent("late")) as a:
        return a.approvals.request(run_id, action, reason="please", safety_class=safety).id


def decision_of(path: Path, approval_id: str) -> tuple[str, str | None, str | None]:
    with sqlite3.connect(path) as db:  # the store itself, not the desk's reading of it
        return db.execute(
            "SELECT status, decided_by, decision_reason FROM approvals WHERE id = ?", (approval_id,)
        ).fetchone()


def notified_actions(server: NotificationServer, n: int = 0) -> list[str]:
    return list(server.calls[n][5][::2])


@NO_RAISE
def test_a_safe_approval_is_approved_from_its_notification(
    qtbot, populated, open_desk, monkeypatch, private_bus, server
):
    path, ids = populated
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", private_bus)
    window = background_desk(open_desk, path, monkeypatch)
    told: list[str] = []
    window.notify_decide.told.connect(told.append)
    approval = request_action(path, ids["run"], SAFE, "idempotent_write")
    qtbot.waitUntil(lambda: len(server.calls) == 1, timeout=WAIT_MS)
    assert notified_actions(server) == ["default", "approve", "deny"]
    assert server.calls[0][5][1::2] == ["Open", "Approve", "Deny"]
    server.invoke(41, "approve")
    qtbot.waitUntil(lambda: bool(told), timeout=WAIT_MS)
    status, by, _reason = decision_of(path, approval)
    assert status == "approved" and by == "operator:alice"
    assert told[0].startswith("Approved")
    qtbot.waitUntil(lambda: len(server.calls) == 2, timeout=WAIT_MS)  # the outcome, told
    assert notified_actions(server, 1) == ["default"]
    # the same button again: the D-Bus thread drops it (says so), nothing more is done
    with qtbot.waitSignal(window.notifier.desktop_dropped, timeout=WAIT_MS) as dropped:
        server.invoke(41, "approve")
    assert dropped.args == [41, "approve"]
    assert told == told[:1]
    assert decision_of(path, approval)[0] == "approved"


@NO_RAISE
def test_deny_from_the_notification_records_why(
    qtbot, populated, open_desk, monkeypatch, private_bus, server
):
    path, ids = populated
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", private_bus)
    window = background_desk(open_desk, path, monkeypatch)
    told: list[str] = []
    window.notify_decide.told.connect(told.append)
    approval = request_action(path, ids["run"], SAFE, "idempotent_write")
    qtbot.waitUntil(lambda: len(server.calls) == 1, timeout=WAIT_MS)
    server.invoke(41, "deny")
    qtbot.waitUntil(lambda: bool(told), timeout=WAIT_MS)
    status, by, reason = decision_of(path, approval)
    assert (status, by) == ("denied", "operator:alice") and "notification" in reason


@NO_RAISE
def test_an_approval_that_asks_for_confirmation_only_opens(
    qtbot, populated, open_desk, monkeypatch, private_bus, server
):
    path, ids = populated
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", private_bus)
    window = background_desk(open_desk, path, monkeypatch)
    opened: list[Any] = []
    window.notifier.item_requested.connect(opened.append)
    approval = request_action(path, ids["run"], RISKY, "financial")
    qtbot.waitUntil(lambda: len(server.calls) == 1, timeout=WAIT_MS)
    assert notified_actions(server) == ["default"]
    server.invoke(41, "approve")  # a server that sends what it was not offered: ignored
    server.invoke(41)
    qtbot.waitUntil(lambda: bool(opened), timeout=WAIT_MS)
    assert decision_of(path, approval)[0] == "pending"


@NO_RAISE
def test_a_decision_made_elsewhere_meanwhile_is_said_and_nothing_is_written(
    qtbot, populated, open_desk, monkeypatch, private_bus, server
):
    path, ids = populated
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", private_bus)
    window = background_desk(open_desk, path, monkeypatch)
    told: list[str] = []
    window.notify_decide.told.connect(told.append)
    approval = request_action(path, ids["run"], SAFE, "idempotent_write")
    qtbot.waitUntil(lambda: len(server.calls) == 1, timeout=WAIT_MS)
    assert "approve" in notified_actions(server)
    with Journal.open(path, actor=Actor.operator("bob")) as bob:
        bob.approvals.decide(approval, False, expected_version=1, reason="not today")
    server.invoke(41, "approve")
    qtbot.waitUntil(lambda: bool(told), timeout=WAIT_MS)
    assert "decided elsewhere" in told[0] and "nothing was written" in told[0]
    assert decision_of(path, approval) == ("denied", "operator:bob", "not today")


@NO_RAISE
def test_a_read_only_desk_offers_no_decision(
    qtbot, populated, open_desk, monkeypatch, private_bus, server
):
    path, ids = populated
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", private_bus)
    window = open_desk(path, read_only=True)
    monkeypatch.setattr(window, "isActiveWindow", lambda: False)
    request_action(path, ids["run"], SAFE, "idempotent_write")
    qtbot.waitUntil(lambda: len(server.calls) == 1, timeout=WAIT_MS)
    assert notified_actions(server) == ["default"]


@NO_RAISE
def test_a_click_follows_the_items_link_as_proctor_open_does(
    qtbot, populated, open_desk, monkeypatch, private_bus, server
):
    """Issue 37: a notification's click opens its item through the deep-link path of
    `proctor open proctor://item/ID` (MainWindow.follow_link): the item is read again, so a
    request withdrawn since the notification is said to wait no more instead of being shown
    as it was notified."""
    from proctor.core.kernel.links import link_url

    path, ids = populated
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", private_bus)
    window = background_desk(open_desk, path, monkeypatch)
    followed: list[str] = []
    follow = window.follow_link
    monkeypatch.setattr(window, "follow_link", lambda url: (followed.append(url), follow(url)))
    approval = request_late(path, ids["run"], "withdrawn before the click")
    qtbot.waitUntil(lambda: len(server.calls) == 1, timeout=WAIT_MS)
    with Journal.open(path, actor=Actor.agent("late")) as a:
        a.approvals.withdraw(approval, "not needed any more")
    window.go("runs")  # the operator is elsewhere
    server.invoke(41)
    qtbot.waitUntil(
        lambda: "Nothing waits in the inbox as" in window.notice.text(), timeout=WAIT_MS
    )
    assert followed == [link_url("item", approval)]
    assert window.current_page_id() == "inbox"
    current = window.inbox.detail.current_item()
    assert current is None or current.id != approval
