"""Fixtures shared by every suite: Qt runs offscreen; ``desks`` opens real desk windows
over real journal files and tears them down in one fixed order (see ``Desks.close_all``)."""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# Every `proctor` process a test starts runs its command itself: no warm server outlives a
# test or serves another's code (tests/cli/test_warm.py starts its own, in its own folder).
os.environ["PROCTOR_WARM"] = "0"


def _cache_bytecode() -> None:
    """Compiled modules are kept (__pycache__, ignored by git) for this session and every
    process it starts, whatever the shell says (some set PYTHONDONTWRITEBYTECODE): else
    each agent, CLI and desk process a test starts, and each pytest-xdist worker, compiles
    SQLAlchemy, pydantic and proctor from source again (``import proctor.core``: ~2.3 s of
    CPU instead of ~0.8 s)."""
    if os.environ.pop("PYTHONDONTWRITEBYTECODE", None) is not None:
        sys.dont_write_bytecode = False


_cache_bytecode()

RUNNER_DRAIN_MS = 60_000  # teardown waits this long at most for the tasks still running
PATIENT_MS = 30_000  # qtbot's waits default to this (pytest-qt's 5 s is short on a loaded CI)


WAITS = ("waitUntil", "waitSignal", "waitSignals", "waitExposed", "waitActive", "waitCallback")


def patient_qtbot(request: pytest.FixtureRequest) -> Any:
    """A QtBot whose waits (WAITS) give a condition PATIENT_MS unless the test names a
    timeout: a wait ends as soon as its condition holds, so the deadline only matters on
    a slow machine, where pytest-qt's 5 s default fails tests that are right."""
    from pytestqt.qtbot import QtBot

    patient = {name: _patient(getattr(QtBot, name)) for name in WAITS}
    return type("PatientQtBot", (QtBot,), patient)(request)


def _patient(wait: Any) -> Any:
    def patient(self: Any, *args: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("timeout", PATIENT_MS)
        return wait(self, *args, **kwargs)

    patient.__name__ = wait.__name__
    patient.__doc__ = wait.__doc__
    return patient


def settle_qt() -> None:
    """Delete now, on the GUI thread, what was deleteLater()'d (pytest-qt closes a test's
    widgets that way, and outside an event loop nothing deletes them until the next test
    runs one), then collect cycles here too: nothing Qt is left to die later, on another
    thread or in the middle of the next test."""
    from PySide6.QtCore import QCoreApplication, QEvent

    if QCoreApplication.instance() is not None:
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    gc.collect()


class Desks:
    """Opens started desk windows (as ``build_window`` composes them) for one test.

    ``close_all`` runs at teardown: close every window (watcher and timers stop, the
    journal's close is queued), wait for each runner to finish every task (so the journal
    is closed and no worker thread is left inside SQLite), then delete the windows and
    runners on the GUI thread and collect.
    """

    def __init__(self, qtbot: Any, settings: Any, wait_ms: int) -> None:
        self.qtbot = qtbot
        self.settings = settings
        self.wait_ms = wait_ms
        self.opened: list[tuple[Any, Any]] = []

    def open(
        self,
        path: Path,
        *,
        operator: str = "alice",
        read_only: bool = False,
        busy_timeout: float | None = None,
        exposed: bool = True,
        activate: bool = False,
        signer: Any = None,
    ) -> Any:
        from proctor.core import Actor, Journal
        from proctor.gui.infra.tasks import TaskRunner
        from proctor.gui.shell.app import LOCK_POLL_S, build_window

        options: dict[str, Any] = {} if busy_timeout is None else {"busy_timeout": busy_timeout}
        if signer is not None:
            options["signer"] = signer
        # as the desk opens it (gui/shell/app.py open_for_desk): its watcher checkpoints the -wal
        journal = Journal.open(
            path,
            actor=Actor.operator(operator),
            read_only=read_only,
            autocheckpoint=False,
            lock_poll=LOCK_POLL_S,
            lock_patience=0.0,
            **options,
        )
        runner = TaskRunner()
        window = build_window(journal, runner=runner, settings=self.settings, strict=True)
        self.qtbot.addWidget(window)
        self.opened.append((window, runner))
        if exposed:
            with self.qtbot.waitExposed(window, timeout=self.wait_ms):
                window.show()
        else:
            window.show()
        if activate:
            window.activateWindow()
        window.start()
        self.qtbot.waitUntil(lambda: window.inbox.model.has_loaded, timeout=self.wait_ms)
        return window

    def close_all(self) -> list[list[str]]:
        """Tear every desk down; returns each window's GUI-thread store-call violations."""
        violations = []
        for window, runner in self.opened:
            window.close()
            drained = runner.shutdown(RUNNER_DRAIN_MS)
            assert drained, "a store task was still running long after the desk closed"
            violations.append(list(window.services.guard.violations))
            window.deleteLater()
            runner.deleteLater()
        self.opened.clear()
        from proctor.gui.infra.tasks import PresentationPool

        assert PresentationPool.instance().wait(RUNNER_DRAIN_MS), (
            "a diff was still running long after the desk closed"
        )
        settle_qt()
        return violations


@pytest.fixture
def qtbot(qapp, request: pytest.FixtureRequest) -> Any:
    """pytest-qt's qtbot with patient default deadlines (see ``patient_qtbot``)."""
    return patient_qtbot(request)


@pytest.fixture(autouse=True)
def _own_recent_journals(tmp_path_factory: pytest.TempPathFactory, monkeypatch) -> None:
    """The journals the desk and the CLI remember (core/ops/recent.py) are each test's own:
    never the developer's, and never one another test opened."""
    monkeypatch.setenv("PROCTOR_STATE_DIR", str(tmp_path_factory.mktemp("state")))


@pytest.fixture(autouse=True)
def _settle_qt_after_qt_tests(request: pytest.FixtureRequest) -> Iterator[None]:
    yield
    if "qapp" in request.fixturenames:
        settle_qt()


MODAL_LIMIT_MS = 60_000  # a dialog a test forgot to answer fails the test instead of hanging


@pytest.fixture(autouse=True)
def _no_forgotten_modal_dialog(request: pytest.FixtureRequest) -> Iterator[None]:
    """A modal dialog that nobody answers would wait for a person forever (CI has none):
    in a Qt test, every ``QDialog.exec`` is rejected after MODAL_LIMIT_MS and the test
    fails naming it. Tests that drive a real dialog answer it well before that."""
    if "qapp" not in request.fixturenames:
        yield
        return
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QDialog

    plain, left_open = QDialog.exec, []

    def guarded_exec(dialog: QDialog) -> int:
        def give_up() -> None:
            if dialog.isVisible():
                left_open.append(f"{type(dialog).__name__} {dialog.windowTitle()!r}")
                dialog.reject()

        QTimer.singleShot(MODAL_LIMIT_MS, dialog, give_up)
        return plain(dialog)

    QDialog.exec = guarded_exec
    try:
        yield
    finally:
        QDialog.exec = plain
    if left_open:
        pytest.fail(f"a modal dialog waited for an answer nobody gave: {left_open}")


def downgrade_journal(path: Path, revision: str) -> None:
    """Take a journal back to an older real revision with Alembic (as an older Proctor left
    it)."""
    from alembic import command
    from alembic.config import Config
    from sqlalchemy import create_engine

    engine = create_engine(f"sqlite:///{path}")
    try:
        with engine.begin() as conn:
            cfg = Config()
            cfg.set_main_option("script_location", "proctor.core.storage:migrations")
            cfg.attributes["connection"] = conn
            command.downgrade(cfg, revision)
    finally:
        engine.dispose()


@pytest.fixture
def downgrade() -> Any:
    """``downgrade(path, revision)``: an older journal, made by Alembic's own downgrade."""
    return downgrade_journal


@pytest.fixture
def settings(tmp_path: Path) -> Any:
    from PySide6.QtCore import QSettings

    from proctor.gui.infra.settings import DeskSettings

    desk = DeskSettings(QSettings(str(tmp_path / "desk.ini"), QSettings.Format.IniFormat))
    # the undo window (default 5 s) off: an agent waiting in a test acts on a click at once;
    # tests/gui/inbox/test_undo_decision.py turns it on
    desk.undo_seconds = 0
    return desk


@pytest.fixture
def desks(qtbot, settings) -> Iterator[Desks]:
    """The desks a test opens (``desks.open(path, ...)``), torn down after it."""
    opened = Desks(qtbot, settings, wait_ms=20_000)
    yield opened
    opened.close_all()


MADE_KEYS_DIR = "PROCTOR_TEST_KEYS_DIR_MADE"  # the folder below was made by a test session


def _isolate_operator_keys() -> None:
    """Operator keys made by the CLI and the desk under test go to a throwaway folder, as a
    0600 file (never the developer's keyring or config folder). Each pytest-xdist worker
    has a folder of its own: a worker inherits the controller's environment, and two
    workers' tests making and removing keys in one folder would race."""
    import tempfile

    made = os.environ.get(MADE_KEYS_DIR)
    inherited = made is not None and os.environ.get("PROCTOR_KEYS_DIR") == made
    if "PROCTOR_KEYS_DIR" not in os.environ or inherited:
        worker = os.environ.get("PYTEST_XDIST_WORKER", "")
        folder = tempfile.mkdtemp(prefix=f"proctor-test-keys-{worker}-")
        os.environ["PROCTOR_KEYS_DIR"] = os.environ[MADE_KEYS_DIR] = folder
        _MADE_HERE.append(folder)
    os.environ.setdefault("PROCTOR_KEY_STORE", "file")


_MADE_HERE: list[str] = []  # removed at the end of this process's session


_isolate_operator_keys()


# ---------------------------------------------------------------- PostgreSQL (team mode)
@pytest.fixture(scope="session")
def pg_server() -> Iterator[Any]:
    """The session's PostgreSQL server (tests/pg_server.py): skipped without PostgreSQL
    binaries, except under CI, which must run these tests."""
    import pg_server as pgs

    try:
        found = pgs.server()
    except RuntimeError as err:
        pytest.fail(str(err))
    if found is None:
        message = "no PostgreSQL binaries (initdb) on this machine"
        if os.environ.get("CI"):
            pytest.fail(f"{message}: CI must run the PostgreSQL tests")
        pytest.skip(message)
    return found


def pytest_collection_finish(session: pytest.Session) -> None:
    """What collection imported (SQLAlchemy, Qt's bindings, hypothesis, every test module)
    lives as long as the session: moved out of the cyclic collector's sight (gc.freeze), so
    the collection after each Qt test (``settle_qt``) looks only at what tests made since
    (~0.16 s a collection otherwise, several a desk test)."""
    gc.collect()
    gc.freeze()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """The end of this process's session (each pytest-xdist worker's, and the controller's):
    its PostgreSQL server stops, its keys folder goes."""
    import shutil

    import pg_server as pgs

    pgs.stop()
    for folder in _MADE_HERE:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def pg_url(pg_server: Any) -> Iterator[str]:
    """A fresh server journal (a database made from the migrated template): its URL."""
    name = pg_server.fresh_database()
    yield pg_server.url(name)
    pg_server.drop_database(name)
