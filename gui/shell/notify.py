"""Tell the operator about new inbox items while the window is not focused:
a tray message where a system tray exists; otherwise a freedesktop desktop notification over
the session D-Bus (Linux; see desktop_notify) and an in-app banner. The taskbar entry asks for
attention (``QApplication.alert``) either way. Clicking a desktop notification opens its item;
one about a single approval that needs no confirmation also offers Approve and Deny
(``NotifyDecide`` says whether, and commits the choice through the desk's decider).

What is new comes from the change feed (``Arrivals``), not from the inbox's table: an item
the inbox's filters hide, or one beyond its loaded page, is still news. A request under an
approval policy is news only to the operators it waits for (docs/policies.md)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace
from typing import ClassVar

from PySide6.QtCore import QObject, QTimer, Signal, Slot
from PySide6.QtWidgets import QApplication, QSystemTrayIcon, QWidget

from proctor.core import Journal
from proctor.core.models import ActorKind, ChangeSet, InboxFilter, InboxItem

from ..decide.kinds import INBOX_CHANGE_KINDS
from ..infra.i18n import tr
from ..infra.tasks import TaskRunner
from ..widgets import fmt
from ..widgets.icons import icon
from ..widgets.message_bar import Level, MessageBar
from . import desktop_notify
from .desktop_notify import DesktopNotifications, Notice

log = logging.getLogger(__name__)
TRAY_MS = 8000
# Desktop notification servers may render markup in the body (freedesktop "body-markup":
# <b>, <a href>, <img>), so tray text carries look-alikes instead of the markup characters.
TRAY_SAFE = str.maketrans({"<": "‹", ">": "›", "&": "＆"})
DECIDE_ACTIONS = (("approve", "Approve"), ("deny", "Deny"))
Offer = Callable[[InboxItem, Callable[[bool], None]], None]  # item, then tell(decidable)


def tray_safe(text: str) -> str:
    """``text`` for a tray notification: readable, never markup."""
    return fmt.visible(text).translate(TRAY_SAFE)


def notice_text(items: list[InboxItem]) -> tuple[str, str]:
    """(title, body) of a notification about ``items``."""
    n = len(items)
    title = "New request waiting" if n == 1 else f"{n} new requests waiting"
    first = items[0]
    body = f"{first.agent}: {fmt.bounded(first.summary, 140)}"
    if n > 1:
        body += f"  (+{n - 1} more)"
    return title, body


class Notifier(QObject):
    """Signals:
    notified(str, str): channel ("tray", "desktop" or "banner") and the text shown
        ("desktop" once the notification server took it).
    show_requested(): the operator clicked the tray notification or the banner's Show.
    item_requested(object): the operator clicked the desktop notification about this
        InboxItem (the first of its batch).
    decision_requested(object, str): the operator chose "approve" or "deny" on the desktop
        notification about this InboxItem (as it was when notified).
    desktop_dropped(int, str): the notification server reported an action that was not
        taken (notification id, action): a decision's button pressed again, an unknown id.
    """

    notified = Signal(str, str)
    show_requested = Signal()
    item_requested = Signal(object)
    decision_requested = Signal(object, str)
    desktop_dropped = Signal(int, str)
    # emitted on the D-Bus worker thread: queued to this object's thread
    _desktop_invoked = Signal(object, str)
    _desktop_sent = Signal(object)
    _desktop_dropped = Signal(int, str)

    def __init__(self, window: QWidget, banner: MessageBar, enabled: bool = True) -> None:
        super().__init__(window)
        self._window = window
        self._banner = banner
        self.enabled = enabled
        self._tray: QSystemTrayIcon | None = None
        self._banner_ids: set[str] = set()  # the items the banner names, while it shows
        self.desktop: DesktopNotifications | None = None
        self.offer: Offer | None = None  # may a notification about one item decide it?
        if QSystemTrayIcon.isSystemTrayAvailable():
            self._tray = QSystemTrayIcon(icon("proctor"), self)
            self._tray.setToolTip(tr("Proctor Desk"))
            self._tray.messageClicked.connect(self.show_requested)
            self._tray.activated.connect(self.show_requested)
            self._tray.show()
        elif desktop_notify.available():
            self.use_desktop(
                DesktopNotifications(
                    self._desktop_invoked.emit,
                    self._desktop_sent.emit,
                    on_dropped=self._desktop_dropped.emit,
                )
            )
        self._desktop_invoked.connect(self._on_desktop_invoked)
        self._desktop_sent.connect(self._on_desktop_sent)
        self._desktop_dropped.connect(self.desktop_dropped)  # (queued to this thread)

    def use_desktop(self, desktop: DesktopNotifications | None) -> None:
        """Send desktop notifications through ``desktop`` (None: none)."""
        if self.desktop is not None:
            self.desktop.stop()
        self.desktop = desktop

    @Slot(object, str)
    def _on_desktop_invoked(self, item: InboxItem, action: str) -> None:
        if action == "default":
            self.item_requested.emit(item)
        else:
            self.decision_requested.emit(item, action)

    @Slot(object)
    def _on_desktop_sent(self, notice: Notice) -> None:
        self.notified.emit("desktop", notice.text)

    def notify(self, items: list[InboxItem]) -> None:
        if not items or not self.enabled or self._window.isActiveWindow():
            return
        title, body = notice_text(items)
        QApplication.alert(self._window)  # the taskbar entry asks for attention too
        if self._tray is not None and self._tray.supportsMessages():
            self._tray.showMessage(
                title, tray_safe(body), QSystemTrayIcon.MessageIcon.Information, TRAY_MS
            )
            self.notified.emit("tray", f"{title}: {body}")
            return
        if self.desktop is not None:
            notice = Notice(tray_safe(title), tray_safe(body), items[0], f"{title}: {body}")
            if len(items) == 1 and self.offer is not None:
                self.offer(items[0], lambda decidable: self._send(notice, decidable))
            else:
                self.desktop.send(notice)
        self._banner.show_message(
            f"{title} — {body}", Level.INFO, action="Show", on_action=self.show_requested.emit
        )
        self._banner_ids = {i.id for i in items}
        self.notified.emit("banner", f"{title}: {body}")

    def _send(self, notice: Notice, decidable: bool) -> None:
        if self.desktop is not None:
            self.desktop.send(replace(notice, actions=DECIDE_ACTIONS) if decidable else notice)

    def tell(self, item: InboxItem, text: str, level: Level = Level.INFO) -> None:
        """What became of a decision taken on a notification: in the window's banner, and
        as a desktop notification (the operator is not looking at the window)."""
        self._banner.show_message(text, level)
        if self.desktop is not None and not self._window.isActiveWindow():
            self.desktop.send(Notice(tray_safe(tr("Proctor")), tray_safe(text), item, text))

    def on_left(self, ids: set[str]) -> None:
        """Items that no longer wait (decided, answered, withdrawn, expired): a banner that
        names only such items goes (it would announce what nobody waits for any more)."""
        if not self._banner_ids:
            return
        self._banner_ids -= ids
        if not self._banner_ids:
            self._banner.clear()

    def hide_tray(self) -> None:
        """The window closes: the tray icon goes and the D-Bus worker stops."""
        if self._tray is not None:
            self._tray.hide()
        self.use_desktop(None)


class Arrivals(QObject):
    """Items that started waiting for a person while the desk is open, whatever the inbox
    shows: the inbox entities a change set touched are re-read unfiltered (off the GUI
    thread); those created since ``since`` that were not told yet are new.

    Signals:
        arrived(list): the new InboxItems, oldest first.
        left(set): the ids of touched items that no longer wait for a person.
    """

    arrived = Signal(list)
    left = Signal(set)
    # a request escalates when time passes, with no write to hear: how often it is looked for
    escalation_tick_ms: ClassVar[int] = 30_000

    def __init__(self, journal: Journal, runner: TaskRunner, parent: QObject, since: float) -> None:
        super().__init__(parent)
        self.journal = journal
        self.runner = runner
        self.since = since
        self._told: set[str] = set()
        self._waiting: set[str] | None = None  # what waited for me at the last look
        self._tick = QTimer(self)
        self._tick.timeout.connect(self.look_for_escalations)
        if getattr(journal.actor, "kind", None) == ActorKind.OPERATOR:
            self._tick.start(self.escalation_tick_ms)
            self.look_for_escalations()  # what waits already is not news: the first look

    @Slot()
    def look_for_escalations(self) -> None:
        """Requests that came to wait for me by time alone (an escalation to my group fell
        due) are news as a new request is; those waiting when the desk opened are not."""
        policies, inbox = self.journal.policies, self.journal.inbox

        def read() -> tuple[set[str], list[InboxItem]]:
            waiting = policies.waiting_for_me()
            new = sorted(waiting - self._waiting) if self._waiting is not None else []
            return waiting, inbox.pick(None, new) if new else []

        self.runner.latest(
            "escalations", read, on_done=self._on_escalations, on_error=self._on_failed, owner=self
        )

    def _on_escalations(self, read: tuple[set[str], list[InboxItem]]) -> None:
        waiting, items = read
        first = self._waiting is None
        self._waiting = waiting
        if not first:
            self._on_picked(items, waiting)

    def on_changes(self, cs: ChangeSet) -> None:
        ids = sorted({c.entity_id for c in cs.changes if c.entity_kind in INBOX_CHANGE_KINDS})
        if ids:
            inbox, mine = self.journal.inbox, InboxFilter(waiting_for=self.journal.actor.name)

            def read() -> tuple[list[str], list[InboxItem], set[str]]:
                items = inbox.pick(None, ids)
                governed = [i.id for i in items if i.progress is not None]
                return ids, items, {i.id for i in inbox.pick(mine, governed)} if governed else set()

            self.runner.run(
                read,
                on_done=self._on_read,
                on_error=self._on_failed,
                owner=self,
            )

    def _on_read(self, read: tuple[list[str], list[InboxItem], set[str]]) -> None:
        ids, items, waits_for_me = read
        gone = set(ids) - {i.id for i in items}
        if gone:
            self.left.emit(gone)
        self._on_picked(items, waits_for_me)

    def _on_picked(self, items: list[InboxItem], waits_for_me: set[str]) -> None:
        """A request under a policy is news only to the operators it waits for: when it
        starts waiting for this one (filed, or its stage moved to them), once."""
        new = sorted(
            (
                i
                for i in items
                if (i.id in waits_for_me if i.progress is not None else i.created_at >= self.since)
                and f"{i.kind.value}:{i.id}" not in self._told
            ),
            key=lambda i: (i.created_at, i.id),
        )
        self._told.update(f"{i.kind.value}:{i.id}" for i in new)
        if new:
            self.arrived.emit(new)

    @staticmethod
    def _on_failed(exc: BaseException) -> None:
        log.info("new items not read for a notification: %s", exc)
