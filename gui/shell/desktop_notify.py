"""Freedesktop desktop notifications (org.freedesktop.Notifications) over the session D-Bus,
for Linux desktops without a system tray (stock GNOME).

Every D-Bus call runs on one worker thread of its own: the GUI thread only puts requests on a
queue, so a slow, missing or hung bus never blocks the event loop. The first failure (no
session bus, no notification service, an error reply) is logged once and the channel goes
quiet: the desk falls back to ``QApplication.alert`` and its in-window banner.

Qt's own D-Bus module is not used: PySide6's QtDBus cannot send ``Notify``'s ``u``
(uint32 ``replaces_id``) argument. ``jeepney`` is pure Python."""

from __future__ import annotations

import logging
import queue
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

log = logging.getLogger(__name__)

SERVICE = "org.freedesktop.Notifications"
PATH = "/org/freedesktop/Notifications"
INTERFACE = "org.freedesktop.Notifications"
NOTIFY_SIGNATURE = "susssasa{sv}i"
APP_NAME = "Proctor Desk"
APP_ICON = "dev.proctor.Desk"
DESKTOP_ENTRY = "dev.proctor.Desk"
CALL_TIMEOUT_S = 5.0
REMEMBERED = 64  # notifications whose click still opens their item


class BusLost:
    """A job for the worker: the bus connection broke under jeepney's reader."""

    def __init__(self, reason: str) -> None:
        self.reason = reason


@dataclass(frozen=True)
class Notice:
    """One notification to send; ``payload`` comes back to ``on_invoked`` with the action
    chosen ("default": a click; else one of ``actions``), and ``on_sent`` is given the
    notice once the server took it."""

    summary: str
    body: str
    payload: Any
    text: str = ""  # what the desk says it told (its own words, for its notified signal)
    actions: tuple[tuple[str, str], ...] = ()  # (key, label) buttons besides the click


def available() -> bool:
    """Whether this platform could have freedesktop notifications at all."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import jeepney  # noqa: F401
    except ImportError:
        return False
    return True


def action_list(notice: Notice) -> list[str]:
    """Notify's ``actions``: key, label, key, label… (the click first)."""
    pairs = (("default", "Open"), *notice.actions)
    return [text for pair in pairs for text in pair]


class DesktopNotifications:
    """A freedesktop notification client on its own thread.

    ``on_invoked(payload, action)``, ``on_sent(notice)``, ``on_failed(reason)`` and
    ``on_dropped(notification_id, action)`` (an action the server reported that is not taken:
    a notification this client does not know or no longer offers it on, e.g. a decision's
    button pressed again) are called on the worker thread: the caller hands them on to its
    own thread (e.g. by emitting a Qt signal)."""

    def __init__(
        self,
        on_invoked: Callable[[Any, str], None],
        on_sent: Callable[[Notice], None] | None = None,
        on_failed: Callable[[str], None] | None = None,
        bus: str = "SESSION",
        on_dropped: Callable[[int, str], None] | None = None,
    ) -> None:
        self._on_invoked = on_invoked
        self._on_sent = on_sent
        self._on_failed = on_failed
        self._on_dropped = on_dropped
        self._bus = bus
        self._jobs: queue.Queue[Any] = queue.Queue()
        self._thread: threading.Thread | None = None
        self.failed = False  # read on the GUI thread: once set, nothing more is sent
        self._sent: OrderedDict[int, Notice] = OrderedDict()
        self._server: str | None = None  # the unique bus name that answered Notify

    # ------------------------------------------------------------ the GUI thread's side
    def send(self, notice: Notice) -> bool:
        """Queue ``notice``; False when this channel already failed (the caller falls back)."""
        if self.failed:
            return False
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._run, name="desktop-notifications", daemon=True
            )
            self._thread.start()
        self._jobs.put(notice)
        return True

    def stop(self) -> None:
        if self._thread is not None:
            self._jobs.put(None)

    # ------------------------------------------------------------ the worker thread
    def _run(self) -> None:
        try:
            from jeepney import MatchRule, message_bus
            from jeepney.io.threading import DBusRouter, Proxy, open_dbus_connection

            conn = open_dbus_connection(bus=self._bus)
            self._guard_receive(conn)
        except Exception as exc:  # noqa: BLE001 - no bus address, no socket, refused: the same to us
            self._fail(f"no session bus ({exc.__class__.__name__}: {exc})")
            return
        try:
            with DBusRouter(conn) as router:
                rule = MatchRule(type="signal", interface=INTERFACE, path=PATH)
                Proxy(message_bus, router, timeout=CALL_TIMEOUT_S).AddMatch(rule)
                with router.filter(rule, queue=self._jobs):
                    self._serve(router)
        except Exception as exc:  # noqa: BLE001 - a boundary: any failure here is reported, never raised into Qt
            self._fail(f"{exc.__class__.__name__}: {exc}")
        finally:
            conn.close()

    def _guard_receive(self, conn: Any) -> None:
        """jeepney's router reads in a thread of its own through ``conn.receive``: the bus
        going away there (ECONNRESET, EOF) becomes this channel's failure, said at once,
        not an unhandled exception in that thread and a channel that waits forever."""
        from jeepney.io.threading import ReceiveStopped

        receive = conn.receive

        def guarded(*args: Any, **kwargs: Any) -> Any:
            try:
                return receive(*args, **kwargs)
            except OSError as exc:
                self._jobs.put(BusLost(f"the session bus went away ({exc.__class__.__name__})"))
                raise ReceiveStopped(str(exc)) from exc

        conn.receive = guarded

    def _serve(self, router: Any) -> None:
        from jeepney import Message

        while True:
            job = self._jobs.get()
            if job is None:
                return
            if isinstance(job, BusLost):
                self._fail(job.reason)
                return
            if isinstance(job, Message):
                self._on_signal(job)
            elif not self.failed:
                self._notify(router, job)

    def _notify(self, router: Any, notice: Notice) -> None:
        from jeepney import DBusAddress, HeaderFields, MessageType, new_method_call

        address = DBusAddress(PATH, bus_name=SERVICE, interface=INTERFACE)
        hints = {"desktop-entry": ("s", DESKTOP_ENTRY), "category": ("s", "im.received")}
        msg = new_method_call(
            address,
            "Notify",
            NOTIFY_SIGNATURE,
            (APP_NAME, 0, APP_ICON, notice.summary, notice.body, action_list(notice), hints, -1),
        )
        reply = router.send_and_get_reply(msg, timeout=CALL_TIMEOUT_S)
        if reply.header.message_type is MessageType.error:
            self._fail(f"{SERVICE} answered {reply.header.fields.get(HeaderFields.error_name)}")
            return
        (notification_id,) = reply.body
        self._server = reply.header.fields.get(HeaderFields.sender)
        self._sent[int(notification_id)] = notice
        while len(self._sent) > REMEMBERED:
            self._sent.popitem(last=False)
        if self._on_sent is not None:
            self._on_sent(notice)

    def _on_signal(self, msg: Any) -> None:
        from jeepney import HeaderFields

        fields = msg.header.fields
        if self._server is None or fields.get(HeaderFields.sender) != self._server:
            return  # only the server that took our notifications speaks for them
        member = fields.get(HeaderFields.member)
        if member == "ActionInvoked" and len(msg.body) == 2:
            notification_id, action = msg.body
            notice = self._sent.get(notification_id)
            if notice is None or action not in ("default", *(k for k, _ in notice.actions)):
                if self._on_dropped is not None:
                    self._on_dropped(int(notification_id), str(action))
                return
            if action != "default":  # a decision is taken once: its buttons go
                self._sent.pop(notification_id)
            self._on_invoked(notice.payload, action)
        elif member == "NotificationClosed" and msg.body:
            self._sent.pop(msg.body[0], None)

    def _fail(self, reason: str) -> None:
        if not self.failed:
            self.failed = True
            log.info("desktop notifications are off: %s", reason)
            if self._on_failed is not None:
                self._on_failed(reason)
