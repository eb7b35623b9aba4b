"""Composition root: open journal -> services -> main window. No globals.

``build_window(journal, ...)`` composes one desk over an already open journal (tests use
it directly); ``DeskApp`` opens journals on the task runner and swaps windows;
``run_desk()`` is what ``proctor open`` / ``proctor demo`` / ``proctor-desk`` call.
"""

from __future__ import annotations

import faulthandler
import logging
import os
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable
from functools import partial
from pathlib import Path
from types import TracebackType
from typing import Any, TextIO, cast
from urllib.parse import quote

from PySide6.QtCore import QObject, QTimer, Signal, Slot
from PySide6.QtWidgets import QApplication, QWidget

from proctor import resources
from proctor.core import Actor, Journal, errors
from proctor.core.journal import OldSchemaPolicy
from proctor.core.models import ActorKind

from ..infra.context import Services
from ..infra.errors import ErrorDialog, describe, is_expected, unexpected_text
from ..infra.guard import GuardedJournal, ThreadGuard
from ..infra.i18n import install_translator, tr
from ..infra.server_target import (
    ServerTarget,
    connect_problem,
    is_server,
    place_of,
    server_of,
    visible_url,
)
from ..infra.settings import DeskSettings
from ..infra.tasks import PresentationPool, TaskRunner
from ..infra.theme import Theme, ThemeMode
from ..infra.watcher import JournalWatcher
from ..widgets.icons import icon
from ..widgets.message_bar import Level
from .connect import ConnectRequest, PasswordNotStored, remember_password, stored_password
from .logging_setup import LOG_NAME, log_dir, setup_logging
from .mainwindow import MainWindow
from .old_schema import (
    Choice,
    OlderJournal,
    OldSchema,
    OldSchemaDialog,
    app_schema,
    backups,
    read_only_reason,
    upgrade_progress,
)
from .single_instance import JournalServer, bring_to_front, focus_running, same_journal

log = logging.getLogger("proctor.gui")


def debug_mode() -> bool:
    return os.environ.get("PROCTOR_DEBUG", "") not in ("", "0")


def build_window(
    journal: Journal,
    *,
    runner: TaskRunner,
    settings: DeskSettings,
    theme: Theme | None = None,
    strict: bool | None = None,
) -> MainWindow:
    """One desk over ``journal``: guard it, watch it, and build the window (not shown)."""
    guard = ThreadGuard(strict=debug_mode() if strict is None else strict)
    guarded = GuardedJournal(journal, guard)
    looks = cast(Journal, guarded)  # the desk uses it as the Journal it stands in for
    watcher = JournalWatcher(looks, runner)
    guarded.written.sink = watcher.wrote  # the desk's own writes reach its views at once
    watcher.set_poll_interval(settings.poll_ms)
    services = Services(
        journal=looks, runner=runner, watcher=watcher, settings=settings, guard=guard, theme=theme
    )
    window = MainWindow(services)
    watcher.setParent(window)
    return window


def note_on(journal: Journal, name: str, value: object) -> None:
    """A desk-only note on a journal it opened (``read_only_because``, ``password_note``,
    ``damaged_because``, ``server_target``): no attribute of core's Journal, so it is set
    by name and read back with getattr where the desk shows it."""
    setattr(journal, name, value)


# the desk's writes wait for another process's write lock by trying again this often from
# the start, not in SQLite's 1-25 ms busy-handler steps (core Journal.open ``lock_poll``,
# ``lock_patience``)
LOCK_POLL_S = 0.0005


def open_for_desk(
    path: str | Path,
    actor: Actor | None,
    read_only: bool,
    on_old_schema: OldSchemaPolicy = "migrate",
) -> Journal:
    """Open an existing journal (or create a missing one); an existing file is never turned
    into a journal. A journal that cannot be written (read-only file, folder or file system)
    opens read-only, with the reason in ``journal.read_only_because``."""
    create = not Path(path).exists()
    try:
        return Journal.open(
            path,
            actor=actor,
            read_only=read_only,
            create=create,
            on_old_schema=on_old_schema,
            signer=None if read_only else desk_signer(actor),
            autocheckpoint=False,  # the watcher checkpoints after its writes
            lock_poll=LOCK_POLL_S,  # a click takes the write lock as soon as it is free
            lock_patience=0.0,
        )
    except errors.StoreReadOnly as exc:
        if read_only:
            raise
        journal = Journal.open(path, actor=actor, read_only=True, create=False)
        note_on(journal, "read_only_because", f"{exc} {exc.hint}".strip())
        return journal


def desk_signer(actor: Actor | None) -> Any:
    """The operator's signing key, made on the desk's first use (worker thread: a keyring
    may be slow). None, logged, when no key can be made: the desk still works and its
    decisions are unsigned (trusting agents refuse them)."""
    from proctor.core.decisions.keys import KeyStore
    from proctor.core.journal import default_operator_name

    name = actor.name if actor is not None else default_operator_name()
    try:
        key, created = KeyStore().init(name)
    except (OSError, errors.ProctorError) as exc:
        log.warning("no operator key for %s: %s", name, exc)
        return None
    if created:
        log.info("made an operator key for %s: %s (%s)", name, key.fingerprint, key.storage)
    return key


def open_server(
    target: ServerTarget, password: str | None, remember: bool, actor: Actor | None, read_only: bool
) -> Journal:
    """Open the journal on ``target``'s server (worker thread): with ``password``, or the one
    the OS keyring keeps for it, as the operator the login is (not the name typed in
    Preferences: a team server refuses a decision by anyone but the login). The schema is never migrated from a desk (the team's
    ``proctor team init`` does that): an older one opens read-only, saying so. A
    connection the operator can fix (wrong password, refused, no such database) raises
    ``StoreError`` with a sentence saying what to do."""
    secret = password if password is not None else stored_password(target)
    url = target.url(secret)
    if actor is None or actor.kind is ActorKind.OPERATOR:
        # the server records the login as the operator (core/ops/team.py): decide as it
        actor = Actor.operator(target.user)
    try:
        journal = _open_url(url, actor, read_only)
    except errors.SchemaTooOld as exc:
        journal = _open_url(url, actor, True, "read_only")
        note_on(
            journal,
            "read_only_because",
            f"{exc} The team's administrator upgrades a server's schema (`proctor team "
            "init URL`); until then this desk only observes.",
        )
    except errors.ProctorError as exc:
        why = connect_problem(exc, target)
        if why is None and not _names_secret(exc, url, secret):
            raise
        if why is not None:  # our sentence says what to do
            raise errors.StoreError(why, hint="") from None
        raise errors.StoreError(
            _without_secret(str(exc), url, secret, target),
            hint=_without_secret(exc.hint, url, secret, target),
        ) from None
    except Exception as exc:  # noqa: BLE001 - a driver error core did not translate: never show the URL
        why = connect_problem(exc, target)
        raise errors.StoreError(
            why or f"Could not connect to {target.label()}: {type(exc).__name__}.", hint=""
        ) from None
    note_on(journal, "server_target", target)
    if remember and password:
        try:
            remember_password(target, password)
        except PasswordNotStored as exc:
            note_on(journal, "password_note", str(exc))
    return journal


def _names_secret(exc: BaseException, url: str, secret: str | None) -> bool:
    text = f"{exc} {getattr(exc, 'hint', '')}"
    if url in text:
        return True
    if not secret:
        return False
    return secret in text or quote(secret, safe="") in text


def _without_secret(text: str, url: str, secret: str | None, target: ServerTarget) -> str:
    """``text`` with the URL shown as its label and the password as ***."""
    text = text.replace(url, target.label())
    if secret:
        text = text.replace(quote(secret, safe=""), "***").replace(secret, "***")
    return text


def _open_url(
    url: str, actor: Actor | None, read_only: bool, on_old_schema: OldSchemaPolicy = "error"
) -> Journal:
    return Journal.open(
        url,
        actor=actor,
        read_only=read_only,
        create=False,
        on_old_schema=on_old_schema,
        signer=None if read_only else desk_signer(actor),
    )


def open_or_hold(
    path: str | Path, actor: Actor | None, read_only: bool, old_schema: OldSchema = "ask"
) -> Journal | OlderJournal:
    """Open ``path`` for the desk (worker thread). With ``old_schema="ask"`` nothing is
    migrated: a journal with an older schema comes back open read-only in an
    ``OlderJournal`` so the operator can choose."""
    if old_schema != "ask":
        return open_for_desk(path, actor, read_only, old_schema)
    try:
        return open_for_desk(path, actor, read_only, "error")
    except errors.SchemaTooOld:
        held = open_for_desk(path, actor, True, "read_only")
    head = app_schema()
    if held.schema_revision == head:  # another process upgraded it meanwhile
        held.close()
        return open_for_desk(path, actor, read_only, "error")
    return OlderJournal(held, head)


def damage_check(journal: Journal, cancelled: Callable[[], bool]) -> str | None:
    """PRAGMA quick_check on the journal a window shows (task runner, after the window is
    up: it reads the whole file, seconds on a big journal, so it is not on the start path).
    The first problem found, or None. ``cancelled()`` stops it (errors.Cancelled) when the
    window closes. Only the desk pays for this (agents and the CLI open without it)."""
    if server_of(journal) is not None:  # the server checks its own pages
        return None
    try:
        problems = [
            line
            for line in journal.integrity_check(quick=True, cancelled=cancelled)
            if line != "ok"
        ]
    except errors.Corrupt as exc:
        problems = [str(exc)]
    if not problems:
        return None
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    return f"{problems[0]}{more}"


def warm_lens() -> None:
    """Import the risk lens's parsers and load their grammars (task runner, after the window
    is up), so that the first approval's detail does not pay for them (~150 ms)."""
    from proctor.core.lens import read_action

    read_action({"tool": "Bash", "args": {"command": "psql -c 'DELETE FROM t WHERE a = 1'"}})


def upgrade(held: OlderJournal) -> Journal:
    """Close the held read-only journal, then open it again migrating (worker thread):
    core writes the backup first."""
    journal = held.journal
    journal.close()
    return open_for_desk(journal.path, journal.actor, False, "migrate")


def make_app(argv: list[str] | None = None) -> QApplication:
    app = QApplication.instance()
    if not isinstance(app, QApplication):
        app = QApplication(argv or [sys.argv[0]])
        install_translator(app)  # the user's language, where a translation ships
    app.setOrganizationName("Proctor")
    app.setApplicationName("Proctor Desk")
    app.setDesktopFileName(resources.APP_ID)
    app.setWindowIcon(icon("proctor"))
    return app


def install_excepthook(desk: DeskApp) -> None:
    """Exceptions escaping a slot are logged and shown with details, not lost on stderr."""
    showing: list[bool] = []

    def hook(kind: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
        log.error("uncaught exception", exc_info=(kind, exc, tb))
        if showing or not issubclass(kind, Exception):
            return
        showing.append(True)
        try:
            details = "".join(traceback.format_exception(kind, exc, tb))
            ErrorDialog.ask(desk.window, tr("Something went wrong"), unexpected_text(exc), details)
        finally:
            showing.clear()

    sys.excepthook = hook


class DeskApp(QObject):
    """Opens journals (off the GUI thread) and owns the windows over them.

    Signals:
        window_shown(object): a new MainWindow is on screen.
        damage_check_started(object): the damage check of that window's journal started
            (after its inbox arrived: never on the start path).
        open_failed(object): a journal could not be opened (the exception).
        open_cancelled(str): the operator chose not to open an older journal (its path).
        last_window_closed(): the desk's window closed (not replaced by another journal's).
    """

    window_shown = Signal(object)
    damage_check_started = Signal(object)
    last_window_closed = Signal()
    open_failed = Signal(object)
    open_cancelled = Signal(str)

    def __init__(
        self,
        app: QApplication,
        settings: DeskSettings,
        theme: Theme | None,
        *,
        strict: bool = False,
    ) -> None:
        super().__init__(app)
        self.app = app
        self.settings = settings
        self.theme = theme
        self.strict = strict
        self.runner = TaskRunner(self)
        self.window: MainWindow | None = None
        self.on_window: Callable[[MainWindow], None] | None = None
        self.instances = JournalServer(self)
        self.instances.focus_requested.connect(self._on_focus_requested)
        self.instances.link_requested.connect(self.follow_link)
        self.link: str | None = None  # a proctor:// link to show once the window is up
        # the window shown before the desk was imported (start.py's DeskFrame): the first
        # main window goes inside it instead of opening a window of its own
        self.frame: Any = None

    def open(
        self,
        path: str | Path | ServerTarget,
        *,
        read_only: bool = False,
        operator: str | None = None,
        old_schema: OldSchema = "ask",
        password: str | None = None,
        remember: bool = False,
    ) -> None:
        """Open ``path`` in this desk, unless a desk already has it open: then focus that
        (unless this window found it damaged or its -wal lost: then it is read afresh, so a
        journal restored from a backup in its place is seen as it is now).

        ``path``: a journal file, or a server (a ``ServerTarget`` or its URL, whose
        ``password`` — None: the OS keyring's — is kept there when ``remember``).
        ``old_schema``: for a journal with an older schema, "ask" the operator (upgrade
        after a backup, open read-only, or cancel), or "migrate" / open "read_only" at once.
        """
        operator = operator or self.settings.operator or None
        if isinstance(path, str) and is_server(path):
            try:
                path, typed = ServerTarget.parse(path)
            except ValueError as exc:
                self._on_open_failed(errors.StoreError(str(exc), hint=""))
                return
            password = password if password is not None else typed
        place = path.label() if isinstance(path, ServerTarget) else path
        if isinstance(path, ServerTarget):
            operator = path.user  # on a server the login is the operator (open_server)
        if self._focus_existing(place, read_only, operator):
            return
        actor = Actor.operator(operator) if operator else None
        task: Callable[[], Journal | OlderJournal]
        if isinstance(path, ServerTarget):
            target = path
            task = partial(open_server, target, password, remember, actor, read_only)
        else:
            task = partial(open_or_hold, path, actor, read_only, old_schema)
        self.runner.run(
            task,
            on_done=self._on_opened,
            on_error=self._on_open_failed,
            owner=self,
        )

    def _on_opened(self, opened: Journal | OlderJournal) -> None:
        if isinstance(opened, OlderJournal):
            self._choose(opened)
        else:
            self._show(opened)

    def _choose(self, held: OlderJournal) -> None:
        """Ask what to do with an older journal (GUI thread), then do it."""
        journal = held.journal
        path = cast(Path, journal.path)  # held for a file only (open_or_hold)
        choice = OldSchemaDialog.ask(self.window, path, held.revision, held.head)
        if choice is Choice.UPGRADE:
            busy = upgrade_progress(self.window, path)
            self.runner.run(
                lambda: upgrade(held),
                on_done=partial(self._on_upgraded, held, busy),
                on_error=partial(self._on_upgrade_failed, busy),
                owner=self,
            )
        elif choice is Choice.READ_ONLY:
            note_on(journal, "read_only_because", read_only_reason(held.revision, held.head))
            self._show(journal)
        else:
            self.runner.run(journal.close)
            self.open_cancelled.emit(str(journal.path))
            if self.window is None:
                self.app.exit(1)

    def _on_upgraded(self, held: OlderJournal, busy: QWidget, journal: Journal) -> None:
        busy.close()  # first: a window that fails to build must not leave it up for good
        self._show(journal)
        assert self.window is not None  # _show made it
        path = cast(Path, journal.path)  # upgraded from a file only (upgrade)
        made = backups(path)
        where = f"; the backup is {made[-1]}" if made else ""
        self.window.notice.show_message(
            tr("Upgraded {name} from schema {revision} to {schema_revision}{where}.").format(
                name=path.name,
                revision=held.revision,
                schema_revision=journal.schema_revision,
                where=where,
            ),
            Level.INFO,
        )

    def _on_upgrade_failed(self, busy: QWidget, exc: BaseException) -> None:
        busy.close()
        self._on_open_failed(exc)

    def _show(self, journal: Journal) -> None:
        window = build_window(
            journal,
            runner=self.runner,
            settings=self.settings,
            theme=self.theme,
            strict=self.strict,
        )
        window.open_requested.connect(self._on_open_requested)
        window.connect_requested.connect(self._on_connect_requested)
        window.closed.connect(partial(self._on_window_closed, window))
        old, self.window = self.window, window
        target = server_of(journal)
        if target is not None:
            self.settings.add_recent_server(target.label())
        else:
            self.settings.add_recent(journal.path)
        self.instances.listen(place_of(journal))
        if self.frame is not None and old is None:
            self.frame.adopt(window)
            self.frame = None
        window.show()
        window.start()
        why = getattr(journal, "read_only_because", None)
        if why:
            window.notice.show_message(tr("Opened read-only: {why}").format(why=why), Level.WARNING)
        note = getattr(journal, "password_note", None)
        if note:
            window.notice.show_message(note, Level.WARNING)
        if self.link is not None:
            window.follow_link(self.link)
            self.link = None
        # after the inbox: the lens warm-up (so that the next approval shown reads at once)
        # and the damage check (seconds on a big journal) would take the CPU it needs
        window.inbox_arrived.connect(partial(self._after_inbox, window, journal))
        if old is not None:
            old.close()
            old.deleteLater()
        if self.on_window is not None:
            self.on_window(window)
        self.window_shown.emit(window)

    def _after_inbox(self, window: MainWindow, journal: Journal) -> None:
        self.runner.run(warm_lens, owner=window)
        self._check_damage(window, journal)

    def _check_damage(self, window: MainWindow, journal: Journal) -> None:
        """The damage check, after the window shows and the inbox is there: on the task
        runner's long lane, its result shown when it arrives, cancelled when the window
        closes (the desk does not wait for it)."""
        stop = threading.Event()
        window.closed.connect(stop.set)
        window.status.checking(True)
        self.damage_check_started.emit(window)

        def done(damage: str | None) -> None:
            window.status.checking(False)
            if damage:
                window.show_damage(damage)

        def failed(exc: BaseException) -> None:
            window.status.checking(False)
            if not isinstance(exc, errors.Cancelled):
                log.warning("the damage check failed", exc_info=exc)

        self.runner.run(
            partial(damage_check, journal, stop.is_set),
            on_done=done,
            on_error=failed,
            owner=window,
            long=True,
        )

    def _on_window_closed(self, window: MainWindow) -> None:
        if window is self.window:  # not one that another journal's window replaced
            self.last_window_closed.emit()

    def _on_open_requested(self, path: str) -> None:
        operator = self.window.journal.actor.name if self.window else None
        self.open(path, operator=self.settings.operator or operator)

    def _on_connect_requested(self, request: ConnectRequest) -> None:
        operator = self.window.journal.actor.name if self.window else None
        self.open(
            request.target,
            operator=self.settings.operator or operator,
            password=request.password,
            remember=request.remember,
        )

    def _focus_existing(self, path: str | Path, read_only: bool, operator: str | None) -> bool:
        window = self.window
        if window is None:
            return False
        journal = window.journal
        if same_journal(path, place_of(journal)):
            if window.status.fault is not None:
                return False  # damaged, -wal lost: read afresh (a restored backup, say)
            if bool(journal.read_only) == read_only and operator in (None, journal.actor.name):
                bring_to_front(window)
                return True
            return False  # reopening the same journal as someone else, or writable
        if focus_running(path):
            window.notice.show_message(
                tr(
                    "{path} is open in another desk window; that window was brought to the front."
                ).format(path=path),
                Level.INFO,
            )
            return True
        return False

    @Slot()
    def _on_focus_requested(self) -> None:
        if self.window is not None:
            bring_to_front(self.window)

    @Slot(str)
    def follow_link(self, link: str) -> None:
        """Show what ``link`` (proctor://item/ID, proctor://run/ID) names: in the window, or
        in the one to come when none is up yet."""
        if self.window is None:
            self.link = link
        else:
            self.window.follow_link(link)

    def _on_open_failed(self, exc: BaseException) -> None:
        self.open_failed.emit(exc)
        store_fault = isinstance(exc, errors.ProctorError)  # damaged, too new ...: + next step
        text = describe(exc) if store_fault else f"{type(exc).__name__}: {exc}"
        if not is_expected(exc):
            log.error("could not open the journal", exc_info=exc)
        ErrorDialog.ask(self.window, tr("Could not open the journal"), text, str(exc))
        if self.window is None:
            self.app.exit(1)

    def shutdown(self) -> None:
        self.instances.close()
        self.runner.shutdown()
        PresentationPool.instance().wait()


def run_desk(
    path: str | Path,
    *,
    read_only: bool = False,
    operator: str | None = None,
    on_window: Callable[[MainWindow], None] | None = None,
    single_instance: bool = True,
    old_schema: OldSchema = "ask",
    link: str | None = None,
    frame: Any = None,
) -> int:
    """Open ``path`` in the desk and run the event loop until the window closes; with
    ``link`` (proctor://item/ID, proctor://run/ID) show what it names.

    When another desk already has ``path`` open, that window is brought to the front (and
    shows ``link``) and this returns 0 at once (unless ``single_instance`` is False).
    ``old_schema``: see ``DeskApp.open`` (``proctor open --migrate`` passes "migrate").
    ``frame``: the window already shown (start.py's ``DeskFrame``) the main window goes in.
    """
    app = make_app()
    if isinstance(path, str) and is_server(path):
        try:
            place: str | Path = ServerTarget.parse(path)[0].label()
        except ValueError:
            place = visible_url(path)
    else:
        place = path
    if single_instance and focus_running(place, link=link):
        print(
            f"{visible_url(str(place))} is already open in a desk; brought that window to "
            "the front" + (" with the link." if link else "."),
            file=sys.stderr,
        )
        return 0
    setup_logging(console_level=logging.DEBUG if debug_mode() else logging.WARNING)
    settings = DeskSettings()
    theme = Theme(app, ThemeMode(settings.theme))
    desk = DeskApp(app, settings, theme, strict=debug_mode())
    # the desk ends when its window closes, not when the last of any window does (the
    # older-journal dialog or a busy indicator may be the only window for a while)
    app.setQuitOnLastWindowClosed(False)
    desk.last_window_closed.connect(app.quit)
    desk.on_window = on_window
    desk.link = link
    desk.frame = frame
    install_excepthook(desk)
    crash_log = record_native_crashes()
    restore_interrupt = quit_on_interrupt(app)
    desk.open(path, read_only=read_only, operator=operator, old_schema=old_schema)
    try:
        return app.exec()
    finally:
        restore_interrupt()
        desk.shutdown()
        stop_recording_crashes(crash_log)


def quit_on_interrupt(app: QApplication) -> Callable[[], None]:
    """Ctrl+C in the terminal closes the desk like File ▸ Quit (Qt's event loop runs no
    Python while idle, so a timer lets the interpreter see the signal). Returns the undo."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    previous = signal.getsignal(signal.SIGINT)
    signal.signal(signal.SIGINT, partial(_interrupted, app))
    wake = QTimer(app)
    wake.setInterval(250)
    wake.timeout.connect(_let_python_run)
    wake.start()

    def restore() -> None:
        wake.stop()
        wake.deleteLater()
        signal.signal(signal.SIGINT, previous)

    return restore


def _interrupted(app: QApplication, _signum: int, _frame: object) -> None:
    log.info("interrupted (Ctrl+C): closing the desk")
    for window in app.topLevelWidgets():
        if isinstance(window, MainWindow):
            window.close()
    app.quit()


def _let_python_run() -> None:
    """An empty slot: returning to the interpreter lets it run pending signal handlers."""


def record_native_crashes() -> TextIO | None:
    """A native crash (segfault, abort) writes every thread's stack to the desk log (unless
    something, e.g. pytest, already records them)."""
    if faulthandler.is_enabled():
        return None
    try:
        folder = log_dir()
        folder.mkdir(parents=True, exist_ok=True)
        stream = open(folder / LOG_NAME, "a", encoding="utf-8")  # noqa: SIM115 - kept open
    except OSError:
        return None
    faulthandler.enable(file=stream, all_threads=True)
    return stream


def stop_recording_crashes(stream: TextIO | None) -> None:
    if stream is None:
        return
    faulthandler.disable()
    stream.close()


def report_paint_and_quit(window: MainWindow) -> None:
    """Benchmark hook: print when the window is up (shown and painted once) and when the
    inbox has painted its first page (``inbox_arrived``), then quit."""
    window.repaint()
    print(f"shown {time.time():.6f}", flush=True)

    def arrived() -> None:
        table = window.inbox.table
        table.viewport().repaint()  # painted already (inbox_arrived): at once
        print(f"painted {time.time():.6f} rows {window.inbox.model.rowCount()}", flush=True)
        QApplication.quit()

    window.inbox_arrived.connect(arrived)


def main(argv: list[str] | None = None) -> int:
    from .desk_args import direct_parser

    parser = direct_parser()
    args = parser.parse_args(argv)
    hook = report_paint_and_quit if args.bench_paint else None
    return run_desk(
        args.path,
        read_only=args.read_only,
        operator=args.operator,
        on_window=hook,
        old_schema="migrate" if args.migrate else "ask",
    )


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
