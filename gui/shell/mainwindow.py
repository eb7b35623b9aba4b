"""The main window: sidebar with live badges, the pages, menus/toolbar from the action
registry, status bar, notification banner."""

from __future__ import annotations

import time
from functools import partial
from pathlib import Path

from PySide6.QtCore import QSize, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QAction, QCloseEvent
from PySide6.QtWidgets import (
    QHBoxLayout,
    QMainWindow,
    QMenu,
    QStackedWidget,
    QToolBar,
    QVBoxLayout,
    QWidget,
)

from proctor.core import Journal
from proctor.core.audit.witness import LostTail
from proctor.core.errors import StoreBusy
from proctor.core.kernel.links import BadLink, link_url, linkable, parse_link
from proctor.core.models import ChangeSet, InboxFilter, InboxItem

from ..audit.page import AuditPage
from ..effects.page import EffectsPage
from ..forms.credentials import keyring_status
from ..inbox.commands import InboxCommands
from ..inbox.page import InboxPage
from ..infra.actions import ActionRegistry, ActionSpec
from ..infra.context import PageContext, Services
from ..infra.errors import ErrorPresenter, is_damage
from ..infra.i18n import QT_TR_NOOP, tr
from ..infra.server_target import place_of, server_of, short_name
from ..infra.theme import ThemeMode
from ..infra.time_mode import time_mode
from ..memory.page import MemoryPage
from ..overview.page import OverviewPage
from ..rules.page import RulesPage
from ..runs import commands as runs_commands
from ..runs.page import RunsPage
from ..widgets import fmt
from ..widgets.dialogs import OpenJournalDialog
from ..widgets.icons import icon
from ..widgets.message_bar import Level, MessageBar
from ..widgets.palette import CommandPalette, ShortcutHelp
from ..widgets.sidebar import Entry, Sidebar, SidebarModel
from ..widgets.status import DeskStatusBar, StoreState, exposure_warning
from . import logging_setup
from .about import AboutDialog
from .connect import ConnectDialog
from .counts import Counts
from .drop import JournalDrop
from .notify import Arrivals, Notifier
from .notify_decide import NotifyDecide
from .preferences import PreferencesDialog, Prefs, prefs_from, save_prefs
from .single_instance import bring_to_front

PAGES = (
    ("inbox", QT_TR_NOOP("Inbox")),
    ("runs", QT_TR_NOOP("Runs")),
    ("memory", QT_TR_NOOP("Memory")),
    ("effects", QT_TR_NOOP("Effects")),
    ("audit", QT_TR_NOOP("Audit")),
    ("overview", QT_TR_NOOP("Overview")),
    ("rules", QT_TR_NOOP("Rules")),
)
# Each page's Go command, whole sentences (translated where shown, like every spec text).
GO_TEXTS = {
    "inbox": (QT_TR_NOOP("Go to Inbox"), QT_TR_NOOP("Show the Inbox page")),
    "runs": (QT_TR_NOOP("Go to Runs"), QT_TR_NOOP("Show the Runs page")),
    "memory": (QT_TR_NOOP("Go to Memory"), QT_TR_NOOP("Show the Memory page")),
    "effects": (QT_TR_NOOP("Go to Effects"), QT_TR_NOOP("Show the Effects page")),
    "audit": (QT_TR_NOOP("Go to Audit"), QT_TR_NOOP("Show the Audit page")),
    "overview": (QT_TR_NOOP("Go to Overview"), QT_TR_NOOP("Show the Overview page")),
    "rules": (QT_TR_NOOP("Go to Rules"), QT_TR_NOOP("Show the Rules page")),
}
# Menu titles carry their Alt letter: none may be a letter a page's buttons already use
# (Alt+E edits a memory entry, Alt+A marks an effect failed ...), so Effects and Audit
# have none; the palette (Ctrl+K) reaches every command. What each menu lists comes from
# the commands' own declarations (ActionSpec.menu, .section, .also).
MENUS = [
    QT_TR_NOOP("&File"),
    QT_TR_NOOP("&Inbox"),
    QT_TR_NOOP("&Runs"),
    QT_TR_NOOP("Memor&y"),
    QT_TR_NOOP("Effects"),
    QT_TR_NOOP("Audit"),
    QT_TR_NOOP("&Go"),
    QT_TR_NOOP("&View"),
    QT_TR_NOOP("&Help"),
]


def window_commands(w: MainWindow) -> list[ActionSpec]:
    """The window's own commands, each declared once."""
    return [
        ActionSpec(
            "app.open",
            QT_TR_NOOP("Open journal…"),
            QT_TR_NOOP("File"),
            QT_TR_NOOP("Open another journal"),
            handler=w.choose_journal,
            shortcut="Ctrl+O",
            icon="action-open",
        ),
        ActionSpec(
            "app.connect",
            QT_TR_NOOP("Connect to server…"),
            QT_TR_NOOP("File"),
            QT_TR_NOOP("Open a team journal on a PostgreSQL server"),
            handler=w.connect_to_server,
            icon="action-open",
        ),
        ActionSpec(
            "app.preferences",
            QT_TR_NOOP("Preferences…"),
            QT_TR_NOOP("File"),
            QT_TR_NOOP("Theme, shortcuts, notifications"),
            handler=w.edit_preferences,
            shortcut="Ctrl+,",
            icon="action-preferences",
            section=1,
        ),
        ActionSpec(
            "app.quit",
            QT_TR_NOOP("Quit"),
            QT_TR_NOOP("File"),
            QT_TR_NOOP("Close the desk"),
            handler=w.close,
            shortcut="Ctrl+Q",
            icon="action-quit",
            section=2,
        ),
        ActionSpec(
            "app.refresh",
            QT_TR_NOOP("Refresh"),
            QT_TR_NOOP("View"),
            QT_TR_NOOP("Re-read everything shown"),
            handler=w.refresh_all,
            shortcut="F5",
            icon="action-refresh",
            toolbar=1,
        ),
        ActionSpec(
            "app.palette",
            QT_TR_NOOP("Command palette…"),
            QT_TR_NOOP("View"),
            QT_TR_NOOP("Find and run any command"),
            handler=w.show_palette,
            shortcut="Ctrl+K",
            icon="action-palette",
            toolbar=3,
        ),
        ActionSpec(
            "app.absolute_times",
            QT_TR_NOOP("Absolute times"),
            QT_TR_NOOP("View"),
            QT_TR_NOOP("Show times as wall times (14:42:37) instead of relative (12m ago)"),
            handler=w.toggle_absolute_times,
            checkable=True,
            shortcut="Ctrl+Shift+T",
            no_icon="a checkable preference; the menu shows its check mark",
            section=1,
        ),
        ActionSpec(
            "app.shortcuts",
            QT_TR_NOOP("Keyboard shortcuts"),
            QT_TR_NOOP("Help"),
            QT_TR_NOOP("Every shortcut"),
            handler=w.show_shortcuts,
            shortcut="?",
            icon="action-shortcuts",
        ),
        ActionSpec(
            "app.logs",
            QT_TR_NOOP("Open log folder"),
            QT_TR_NOOP("Help"),
            QT_TR_NOOP("Show the desk's log files"),
            handler=logging_setup.open_log_folder,
            icon="action-logs",
            section=1,
        ),
        ActionSpec(
            "app.about",
            QT_TR_NOOP("About Proctor"),
            QT_TR_NOOP("Help"),
            QT_TR_NOOP("Versions of Proctor, Qt, SQLite and the journal's schema"),
            handler=w.show_about,
            icon="action-about",
            section=1,
        ),
    ] + [
        ActionSpec(
            f"go.{pid}",
            GO_TEXTS[pid][0],
            QT_TR_NOOP("Go"),
            GO_TEXTS[pid][1],
            handler=partial(w.go, pid),
            icon=f"page-{pid}",
            shortcut=f"Ctrl+{n}" if n <= 6 else "",
        )
        for n, (pid, _) in enumerate(PAGES, 1)
    ]


LOCK_CHECK_PAUSE_MS = 1000  # between two checks of a write lock another process holds
# The pages the window shows (each starts, takes the focus, follows the changes, refreshes)
Page = InboxPage | OverviewPage | RunsPage | MemoryPage | EffectsPage | AuditPage | RulesPage


def write_lock_free(journal: Journal) -> bool:
    """Whether this desk can take the journal's write lock (worker thread): an empty write
    transaction, waiting up to the journal's busy timeout. Nothing is written."""
    if journal.read_only:
        return True
    try:
        journal.write(lambda _tx: None)
    except StoreBusy:
        return False
    return True


def waiting_item(journal: Journal, ident: str) -> InboxItem | None:
    """The inbox item ``ident`` while it waits (snoozed or not); None when nothing waits as
    ``ident`` (worker thread)."""
    for f in (InboxFilter(), InboxFilter(snoozed=True)):
        found = journal.inbox.pick(f, [ident])
        if found:
            return found[0]
    return None


class MainWindow(QMainWindow):
    """Signals:
    closed(): the window closed (its watcher stopped, its journal closing).
    inbox_arrived(): the inbox's first page is there (or its first reads failed), once:
        the other pages start then, and so may the desk's checks (app.py's damage check).
    open_requested(str): the operator chose another journal to open (a file's path, or
        a server connection's label).
    connect_requested(object): the operator asked to connect to a server
        (a gui/shell/connect.py ``ConnectRequest``).
    """

    closed = Signal()
    inbox_arrived = Signal()
    open_requested = Signal(str)
    connect_requested = Signal(object)

    def __init__(self, services: Services) -> None:
        super().__init__()
        self.services = services
        self.journal = services.journal
        self.settings = services.settings
        self.setWindowIcon(icon("proctor"))
        self.setObjectName("MainWindow")
        self.registry = ActionRegistry(self, self.settings.shortcut_overrides())
        self.banner = MessageBar(self)  # "New request waiting": its room kept, nothing moves
        self.notice = MessageBar(self, reserve=False)  # the journal's state: rare, stays up
        self.presenter = ErrorPresenter(self, self.notice)
        services.runner.default_error = self.presenter.present
        ctx = PageContext(
            self.journal, services.runner, self.presenter, self.registry, self.settings
        )
        self.inbox = InboxPage(ctx, self)
        self.inbox_commands = InboxCommands(self.inbox, self.registry)
        self.runs = RunsPage(ctx, self)
        self.inbox_commands.add_undo_bar(self.runs.detail.pending.undo_bar)  # Ctrl+Z there too
        self.memory = MemoryPage(ctx, self)
        self.effects = EffectsPage(ctx, self)
        self.audit = AuditPage(ctx, self)
        self.overview = OverviewPage(ctx, self)
        self.rules = RulesPage(ctx, self)
        self.pages: dict[str, Page] = {
            "inbox": self.inbox,
            "overview": self.overview,
            "runs": self.runs,
            "memory": self.memory,
            "effects": self.effects,
            "audit": self.audit,
            "rules": self.rules,
        }
        self.sidebar_model = SidebarModel([Entry(pid, tr(title)) for pid, title in PAGES], self)
        self.sidebar = Sidebar(self.sidebar_model, self)
        self.stack = QStackedWidget(self)
        self.status = DeskStatusBar(self)
        self.counts = Counts(self.journal, services.runner, self)
        self.notifier = Notifier(self, self.banner, self.settings.notifications)
        self.notify_decide = NotifyDecide(
            self.journal, services.runner, self.settings, self.inbox.decider, self.notifier
        )
        self.journal_drop = JournalDrop(self)  # a journal file dropped on the window opens
        self.journal_drop.dropped.connect(self.open_requested)
        self.arrivals = Arrivals(self.journal, services.runner, self, since=time.time())
        self._closing = False
        self._lock_busy = False  # a store call found the write lock held; not yet seen free
        self._checking_lock = False
        self._inbox_there = False  # inbox_arrived was emitted
        self._build()
        self._register_actions()
        self._connect()
        self._restore_state()

    # ------------------------------------------------------------ building
    def _build(self) -> None:
        for page in self.pages.values():
            self.stack.addWidget(page)
        right = QWidget(self)
        column = QVBoxLayout(right)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(0)
        column.addWidget(self.banner)
        column.addWidget(self.notice)
        column.addWidget(self.stack, 1)
        central = QWidget(self)
        row = QHBoxLayout(central)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(0)
        row.addWidget(self.sidebar)
        row.addWidget(right, 1)
        self.setCentralWidget(central)
        self.setStatusBar(self.status)
        self.setWindowTitle(self._title())
        self.resize(1360, 860)
        self.setMinimumSize(QSize(900, 560))

    def _register_actions(self) -> None:
        for spec in window_commands(self):
            self.registry.register(spec)
        self.inbox_commands.register()
        runs_commands.register(self.runs, self.registry)
        self.registry.set_single_keys(self.settings.single_keys)
        self.registry.action("app.absolute_times").setChecked(self.settings.absolute_times)
        time_mode().set_absolute(self.settings.absolute_times)
        menus = self.registry.build_menus(self.menuBar(), MENUS)
        self.recent_menu = QMenu(tr("Open &recent"), self)
        self.recent_menu.aboutToShow.connect(self._fill_recent)
        menus["File"].insertMenu(menus["File"].actions()[1], self.recent_menu)
        toolbar = QToolBar("Main", self)
        toolbar.setObjectName("MainToolbar")
        toolbar.setMovable(False)
        toolbar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        self.registry.build_toolbar(toolbar)
        self.addToolBar(toolbar)

    def _connect(self) -> None:
        watcher, runner = self.services.watcher, self.services.runner
        watcher.changed.connect(self._on_changes)
        watcher.looked.connect(self.inbox.on_looked)
        watcher.seen_at.connect(self.status.set_last_change)
        runner.busy_changed.connect(self.status.set_busy)
        runner.store_failed.connect(self._on_store_failed)
        watcher.wal_lost.connect(self._on_wal_lost)
        self.presenter.damaged.connect(self._on_damaged)
        runner.store_succeeded.connect(self._on_store_ok)
        self.sidebar.page_chosen.connect(self.go)
        self.counts.counted.connect(self._on_counts)
        self.inbox.counts_stale.connect(self.counts.schedule)
        self.arrivals.arrived.connect(self.notifier.notify)
        self.arrivals.left.connect(self.notifier.on_left)
        self.inbox.open_run.connect(self.show_run)
        self.audit.open_run.connect(self.show_run)
        self.rules.open_run.connect(self.show_run)
        self.memory.open_run.connect(self.show_run)
        self.memory.open_event.connect(self.show_event)
        self.effects.open_run.connect(self.show_run)
        self.overview.open_page.connect(self.go)
        self.overview.open_inbox.connect(self.show_inbox_filtered)
        self.notifier.show_requested.connect(self._on_show_requested)
        self.notifier.item_requested.connect(self.open_notified)

    # ------------------------------------------------------------ lifecycle
    def start(self) -> None:
        """Read the change feed position, then start watching and load every page."""
        j = self.journal
        self.status.set_journal(place_of(j), j.schema_revision, j.actor.name, bool(j.read_only))
        self.status.set_exposure(None if server_of(j) is not None else exposure_warning(j.path))
        self.sidebar.select("inbox")
        lost = getattr(j, "lost_tail", None)
        if lost is not None:
            self.show_lost_tail(lost)
        self.services.runner.run(
            j.changes.latest,
            on_done=self._on_latest,
            on_error=self._on_latest_failed,
            owner=self,
        )

    def _on_latest(self, seq: int) -> None:
        """The inbox first: its first page is what the window is opened for, so the other
        pages' first reads wait for it (they would queue before it on the read threads and
        take the CPU it needs, the more so the bigger the journal)."""
        self.services.watcher.start(seq)
        if seq:
            changes = self.journal.changes
            self.services.runner.run(
                lambda: changes.since(seq - 1, limit=1), on_done=self._on_last_change, owner=self
            )
        self.inbox.model.loaded.connect(self._on_inbox_arrived)
        self.inbox.model.failed.connect(self._on_inbox_arrived)
        self.inbox.start()
        self.counts.read()
        self.inbox.focus_list()

    def _on_latest_failed(self, exc: BaseException) -> None:
        self.presenter.present(exc)
        self._on_inbox_arrived()  # nothing waits for an inbox that cannot come

    def _on_inbox_arrived(self, *_: object) -> None:
        if self._inbox_there or self._closing:
            return
        self._inbox_there = True
        if self.isVisible():  # its rows on screen before anything else takes the CPU
            self.inbox.table.viewport().repaint()
        for page in self.pages.values():
            if page is not self.inbox:
                page.start()
        self.inbox_arrived.emit()

    def _on_last_change(self, cs: ChangeSet) -> None:
        if cs.changes:
            self.status.set_last_change(cs.changes[-1].created_at)

    def closeEvent(self, event: QCloseEvent) -> None:
        if not self._closing:
            self._closing = True
            self._save_state()
            self.services.watcher.stop()
            self.inbox.stop()
            self.counts.stop()
            for timer in self.findChildren(QTimer):  # every page's ticks and throttles
                timer.stop()
            self.notifier.hide_tray()
            # on the write lane: after every decision already asked for (none is dropped)
            self.services.runner.run(self.journal.close, write=True)
            self.closed.emit()
        super().closeEvent(event)

    # ------------------------------------------------------------ navigation
    def go(self, page_id: str) -> None:
        page = self.pages[page_id]
        self.stack.setCurrentWidget(page)
        self.sidebar.select(page_id)
        page.focus_list()
        self.registry.refresh()

    def current_page_id(self) -> str:
        return next(pid for pid, page in self.pages.items() if page is self.stack.currentWidget())

    @Slot(str)
    def show_run(self, run_id: str) -> None:
        self.go("runs")
        self.runs.show_run(run_id)

    @Slot(object)
    def show_inbox_filtered(self, filters: dict) -> None:
        """The inbox showing only what ``filters`` (kind, agent, project, text) select."""
        self.go("inbox")
        self.inbox.filters.show_only(**filters)

    @Slot(str, int)
    def show_event(self, run_id: str, sequence: int) -> None:
        """Show ``run_id`` with event ``sequence`` selected in its timeline."""
        self.go("runs")
        self.runs.show_run(run_id, sequence)

    @Slot()
    def _on_show_requested(self) -> None:
        self.banner.clear()
        bring_to_front(self)
        self.go("inbox")

    @Slot(object)
    def show_item(self, item: InboxItem) -> None:
        """The window comes forward with ``item`` shown in the inbox (a notification)."""
        self._on_show_requested()
        self.inbox.open_item(item)

    @Slot(object)
    def open_notified(self, item: InboxItem) -> None:
        """A click on a notification about ``item`` follows its link, the path of ``proctor
        open proctor://item/ID`` (the item is read again: one decided since is said to wait
        no more, not shown as it was); an id no link can carry is shown as notified."""
        if linkable(item.id):
            self.follow_link(link_url("item", item.id))
        else:
            self.show_item(item)

    @Slot(str)
    def follow_link(self, text: str) -> None:
        """Show what a proctor:// link names: the run, or the inbox item while it waits
        (``proctor open URL``, the desktop's URL handler, a notification)."""
        try:
            link = parse_link(text)
        except BadLink as exc:
            self.notice.show_message(
                tr("Could not follow the link: {why}").format(why=exc), Level.WARNING
            )
            return
        bring_to_front(self)
        if link.target == "run":
            self.show_run(link.id)
            return
        self.services.runner.run(
            partial(waiting_item, self.journal, link.id),
            on_done=partial(self._on_linked_item, link.id),
            owner=self,
        )

    def _on_linked_item(self, ident: str, item: InboxItem | None) -> None:
        if item is not None:
            self.show_item(item)
            return
        self.go("inbox")
        self.notice.show_message(
            tr(
                "Nothing waits in the inbox as {id}: it was decided or expired, or it is in "
                "another journal."
            ).format(id=fmt.bounded(ident, 80)),
            Level.INFO,
        )

    # ------------------------------------------------------------ live data
    @Slot(object)
    def _on_changes(self, cs: ChangeSet) -> None:
        for page in self.pages.values():
            page.on_changes(cs)
        self.counts.on_changes(cs)
        self.arrivals.on_changes(cs)

    @Slot(dict)
    def _on_counts(self, counts: dict[str, int]) -> None:
        hints = {
            "inbox": ", ".join(
                [
                    tr("%n approval(s)", n=counts["approvals"]),
                    tr("%n question(s)", n=counts["questions"]),
                    tr("%n memory conflict(s)", n=counts["memory"]),
                    tr("%n effect(s)", n=counts["effects"]),
                ]
            ),
            "runs": "active runs",
            "memory": "pending conflicts",
            "effects": "ambiguous effects",
            "audit": "audit entries",
            "rules": "approval rules",
        }
        for pid, _title in PAGES:
            if pid in hints:  # the overview has no count of its own
                self.sidebar_model.set_count(pid, counts.get(pid), hints[pid])
        self.setWindowTitle(self._title(counts.get("inbox")))

    def _title(self, waiting: int | None = None) -> str:
        name = short_name(self.journal)
        ro = " (read-only)" if self.journal.read_only else ""
        return f"Proctor — {waiting} waiting — {name}{ro}" if waiting else f"Proctor — {name}{ro}"

    @Slot()
    def _on_wal_lost(self) -> None:
        self.status.set_fault(StoreState.WAL_DELETED)
        self.notice.show_message(
            tr(
                "The journal's -wal file ({path}-wal) was deleted while the desk had it open: "
                "requests written since its last checkpoint may be lost, and agents may get disk "
                "I/O errors. Close and reopen the journal, check that nothing else deletes "
                "journal files, and run `proctor verify`."
            ).format(path=self.journal.path),
            Level.ERROR,
        )

    def show_lost_tail(self, lost: LostTail) -> None:
        """The journal lacks changes a desk saw in it (core/audit/witness.py): say so, and stay."""
        self.status.set_fault(StoreState.TAIL_LOST)
        self.notice.show_message(
            f"{lost.sentence[0].upper()}{lost.sentence[1:]}. {lost.hint}", Level.ERROR
        )

    def show_damage(self, why: str) -> None:
        """The journal is damaged (quick check at open, or a failing read): say so once. After
        its -wal was deleted under the desk, a failing read follows from the deletion: the
        notice keeps saying what happened, and a backup is advised only by `proctor verify`."""
        if self.status.fault is StoreState.DAMAGED:
            return
        if self.status.fault is StoreState.WAL_DELETED:
            self.notice.show_message(
                tr(
                    "The journal's -wal file ({path}-wal) was deleted while the desk had it "
                    "open, and reading the journal now fails: {why}. Close and reopen the "
                    "journal, then run `proctor verify {path}`; restore it from a backup only "
                    "if verify names a problem (a backup lacks the newest requests)."
                ).format(why=why, path=place_of(self.journal)),
                Level.ERROR,
            )
            return
        self.status.set_fault(StoreState.DAMAGED)
        self.notice.show_message(
            tr(
                "The journal file is damaged: {why}. Do not rely on what this desk shows; run "
                "`proctor verify {path}`, and restore the journal from a backup if it names a "
                "problem."
            ).format(why=why, path=place_of(self.journal)),
            Level.ERROR,
        )

    @Slot(object)
    def _on_damaged(self, exc: BaseException) -> None:
        self.show_damage(str(exc))

    @Slot(object)
    def _on_store_failed(self, exc: BaseException) -> None:
        if is_damage(exc):  # the task's own handler presents it inline, without a dialog
            self.show_damage(str(exc))
            return
        busy = isinstance(exc, StoreBusy)
        if busy:
            self._lock_busy = True
            self._check_lock()
        self.status.set_error(True, busy=busy)
        self.presenter.present(exc)

    @Slot()
    def _on_store_ok(self) -> None:
        """A store call succeeded after a failure. Reads work while another process holds
        the write lock, so "busy" stays until the lock is seen free (``_on_lock_checked``)."""
        if self._lock_busy:
            self.status.set_error(True, busy=True)
            return
        self.status.set_error(False)
        if self.status.fault is None:  # a damaged or -wal-deleted notice stays
            self.notice.clear()

    def _check_lock(self) -> None:
        if self._checking_lock or self._closing:
            return
        self._checking_lock = True
        self.services.runner.run(
            partial(write_lock_free, self.journal), on_done=self._on_lock_checked, owner=self
        )

    def _on_lock_checked(self, free: bool) -> None:
        self._checking_lock = False
        if not self._lock_busy or self._closing:
            return
        if not free:
            QTimer.singleShot(LOCK_CHECK_PAUSE_MS, self, self._check_lock)
            return
        self._lock_busy = False
        if self.status.current_state() is StoreState.BUSY:
            self.status.set_error(False)
            self.notice.clear()

    def refresh_all(self) -> None:
        self.services.watcher.refresh_now()
        for page in self.pages.values():
            page.model.refresh()
        self.counts.read()

    # ------------------------------------------------------------ dialogs
    def show_palette(self) -> None:
        palette = CommandPalette(self.registry, self)
        palette.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        palette.open()

    def show_shortcuts(self) -> None:
        dialog = ShortcutHelp(self.registry, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()

    def show_about(self) -> None:
        dialog = AboutDialog(self, self.journal)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()

    def choose_journal(self) -> None:
        recent = self.settings.recent()
        start = str(Path(recent[0]).parent) if recent else ""
        path = OpenJournalDialog.ask(self, start, self.settings)
        if path:
            self.open_requested.emit(path)

    def connect_to_server(self) -> None:
        """File ▸ Connect to server: whether the OS keyring works is found off the GUI
        thread (it may talk to a keyring service), then the dialog asks."""
        self.services.runner.run(keyring_status, on_done=self._ask_connect, owner=self)

    def _ask_connect(self, keyring_usable: tuple[bool, str]) -> None:
        request = ConnectDialog.ask(
            self, self.settings.recent_servers(), keyring_usable, server_of(self.journal)
        )
        if request is not None:
            self.connect_requested.emit(request)

    @Slot()
    def _fill_recent(self) -> None:
        self.recent_menu.clear()
        for path in self.settings.recent():
            action = self.recent_menu.addAction(path)
            action.setData(path)
            action.triggered.connect(self._on_recent)
        servers = self.settings.recent_servers()
        if servers and self.recent_menu.actions():
            self.recent_menu.addSeparator()
        for label in servers:
            action = self.recent_menu.addAction(label)
            action.setData(label)
            action.triggered.connect(self._on_recent)
        self.recent_menu.setEnabled(True)
        if not self.recent_menu.actions():
            self.recent_menu.addAction(tr("(no recent journals)")).setEnabled(False)

    @Slot()
    def _on_recent(self) -> None:
        action = self.sender()
        path = action.data() if isinstance(action, QAction) else None
        if path:
            self.open_requested.emit(str(path))

    def toggle_absolute_times(self) -> None:
        """View > Absolute times: every page repaints its times, nothing is re-read."""
        on = self.registry.action("app.absolute_times").isChecked()
        self.settings.absolute_times = on
        time_mode().set_absolute(on)

    def edit_preferences(self) -> None:
        prefs = PreferencesDialog.ask(self, prefs_from(self.settings))
        if prefs is not None:
            self.apply_preferences(prefs)

    def apply_preferences(self, prefs: Prefs) -> None:
        save_prefs(self.settings, prefs)
        self.registry.set_single_keys(prefs.single_keys)
        self.notifier.enabled = prefs.notifications
        self.services.watcher.set_poll_interval(prefs.poll_ms)
        self.memory.set_token_limit(prefs.memory_tokens)
        if self.services.theme is not None:
            self.services.theme.apply(ThemeMode(prefs.theme))
        if (
            prefs.operator
            and prefs.operator != self.journal.actor.name
            and server_of(self.journal) is not None
        ):
            self.notice.show_message(
                tr(
                    "On a team server, decisions are recorded as the login you connected with "
                    "({name}), whatever the name in Preferences."
                ).format(name=self.journal.actor.name),
                Level.INFO,
            )
        elif prefs.operator and prefs.operator != self.journal.actor.name:
            self.notice.show_message(
                tr(
                    "Decisions in this window are recorded as {name}; reopen the journal to "
                    "decide as {operator}."
                ).format(name=self.journal.actor.name, operator=prefs.operator),
                Level.INFO,
                action="Reopen now",
                on_action=self.reopen,
            )

    def reopen(self) -> None:
        """Open this journal again (e.g. as the operator name just chosen)."""
        self.open_requested.emit(place_of(self.journal))

    # ------------------------------------------------------------ window state
    def _save_state(self) -> None:
        s = self.settings
        s.save_state("geometry", self.window().saveGeometry())  # the frame's, when in one
        s.save_state("state", self.saveState())
        s.save_state("inbox_splitter", self.inbox.splitter.saveState())
        s.sync()

    def _restore_state(self) -> None:
        s = self.settings
        if (geometry := s.state("geometry")) is not None:
            self.restoreGeometry(geometry)
        if (state := s.state("state")) is not None:
            self.restoreState(state)
        if (split := s.state("inbox_splitter")) is not None:
            self.inbox.splitter.restoreState(split)
