"""Faults seen from the desk: each one leaves a clear state and a next step on screen, and
nothing is lost or half-written.

- the journal locked by another process past the busy timeout -> "store: busy", Retry
- a read-only journal (mode=ro), a read-only folder (bind mount) -> observe mode
- the disk full during a decision (a 4 MB tmpfs) -> not recorded, said, consistent
- a damaged, foreign, empty file, a folder, a missing path, a newer schema -> refused by name
- the -wal deleted under the desk -> live refresh goes on
- a journal readable by other users -> a warning in the status bar

Mounting needs root (CI runs as root); where it is not permitted the test is skipped and
says why.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest
from PySide6.QtWidgets import QAbstractButton, QAbstractItemView, QApplication

from proctor import cli
from proctor.core import Actor, Journal
from proctor.core.audit.verify import verify
from proctor.gui.infra.errors import ErrorDialog
from proctor.gui.shell.app import DeskApp
from proctor.gui.shell.mainwindow import MainWindow

WAIT_MS = 20_000
pytestmark = pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints")
WRITE_WORDS = re.compile(
    r"^(approve|deny|snooze|wake|send|submit|mark|keep local|"
    r"take incoming|merge|dismiss|cancel run|resolve|reveal|pin|"
    r"restore|remove|confirm)\b"
)


# ---------------------------------------------------------------- fixtures


def populate(path: Path) -> dict[str, str]:
    """One item of every inbox kind, from an agent."""
    with Journal.open(path, actor=Actor.agent("bot")) as a:
        run = a.runs.start("shop", "fault target", agent="bot")
        ids = {"run": run.id}
        ids["approval"] = a.approvals.request(
            run.id,
            {"tool": "deploy", "args": {"n": 1}},
            reason="ship it",
            safety_class="idempotent_write",
        ).id
        ids["approval2"] = a.approvals.request(
            run.id,
            {"tool": "deploy", "args": {"n": 2}},
            reason="again",
            safety_class="idempotent_write",
        ).id
        ids["question"] = a.questions.ask(run.id, "question", "Which region?").id
        entry = a.memory.add("project", "shop", "db host", "db1")
        ids["conflict"] = a.memory.record_conflict(entry.id, "db2", incoming_source="bot").id
        a.effects.reserve("mail:1", tool="send_email", run_id=run.id)
        a.effects.begin("mail:1")
        a.effects.mark_ambiguous("mail:1", "SMTP timed out")
        ids["effect"] = "mail:1"
    return ids


@pytest.fixture
def journal(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    folder = tmp_path / "journals"
    folder.mkdir(mode=0o700)
    path = folder / "journal.db"
    return path, populate(path)


@pytest.fixture
def desk_app(qtbot, settings, monkeypatch) -> Iterator:
    """A DeskApp (the open path of `proctor open`) whose error dialog is recorded."""
    shown: list[tuple] = []
    monkeypatch.setattr(ErrorDialog, "ask", lambda *a: shown.append(a))
    app = DeskApp(QApplication.instance(), settings, None, strict=True)
    app.dialogs = shown
    app.exits = []
    app.app = SimpleNamespace(exit=app.exits.append)  # `proctor open` would exit(1) here
    yield app
    if app.window is not None:
        app.window.close()
    app.shutdown()


def mount(*args: str) -> None:
    result = subprocess.run(["mount", *args], capture_output=True, text=True)
    if result.returncode != 0:
        pytest.skip(f"mount {' '.join(args)} is not permitted here: {result.stderr.strip()}")


def umount(target: Path) -> None:
    """Unmount; lazily if a file there is still open (it goes when the last one closes)."""
    if subprocess.run(["umount", str(target)], capture_output=True).returncode != 0:
        subprocess.run(["umount", "-l", str(target)], capture_output=True)


def select(qtbot, window: MainWindow, key: str) -> None:
    model = window.inbox.model
    qtbot.waitUntil(lambda: model.row_of(key) >= 0, timeout=WAIT_MS)
    window.inbox.set_current_row(model.row_of(key))
    detail = window.inbox.detail
    wanted = key.split(":", 1)[1]

    def shown() -> bool:
        current = detail.current()
        entity = current.entity if current is not None else None
        return entity is not None and wanted in (
            getattr(entity, "id", None),
            getattr(entity, "key", None),
        )

    qtbot.waitUntil(shown, timeout=WAIT_MS)


def settle(qtbot, window: MainWindow) -> None:
    qtbot.waitUntil(lambda: window.services.runner.pending() == 0, timeout=WAIT_MS)


def decisions(path: Path, target: str) -> int:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return conn.execute(
            "SELECT COUNT(*) FROM decisions WHERE target_id = ?", (target,)
        ).fetchone()[0]
    finally:
        conn.close()


def status_of(path: Path, approval_id: str) -> str:
    with Journal.open(path, actor=Actor.operator("checker"), read_only=True) as j:
        return j.approvals.get(approval_id).status.value


# ---------------------------------------------------------------- locked past the timeout

HOLD_LOCK = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
sys.stdin.readline()
conn.execute("COMMIT")
"""


def test_a_lock_held_past_the_timeout_shows_store_busy_and_offers_retry(qtbot, journal, desk):
    path, ids = journal
    window = desk(path, busy_timeout=1.5)
    select(qtbot, window, f"approval:{ids['approval']}")
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        detail = window.inbox.detail.current()
        after_failure = []  # the state shown the moment the store call failed
        window.services.runner.store_failed.connect(
            lambda exc: after_failure.append((type(exc).__name__, window.status.state.text()))
        )
        assert window.registry.trigger("inbox.approve")
        # while the click waits for the lock, the window answers: the list still moves
        qtbot.waitUntil(lambda: window.status.state.text() == "store: busy", timeout=WAIT_MS)
        assert "writes wait" in window.status.state.toolTip()
        row = window.inbox.table.currentIndex().row()
        step = "inbox.prev" if row > 0 else "inbox.next"
        window.registry.trigger(step)
        assert window.inbox.table.currentIndex().row() != row
        window.inbox.set_current_row(row)
        # said where the click was made: on the item, or on the page if it is not shown
        bars = (detail.message, window.inbox.message)
        qtbot.waitUntil(lambda: any("busy" in bar.text() for bar in bars), timeout=WAIT_MS)
        bar = next(bar for bar in bars if "busy" in bar.text())
        assert bar._button.isVisible() and bar._button.text() == "Retry"
        assert after_failure and set(after_failure) == {("StoreBusy", "store: busy")}
        assert decisions(path, ids["approval"]) == 0
        assert "database is locked" not in bar.text()  # said in words, not SQLite's
    finally:
        holder.stdin.write("\n")
        holder.stdin.flush()
        holder.wait(30)
    bar._button.click()  # Retry: the same request id, so it cannot apply twice
    qtbot.waitUntil(lambda: status_of(path, ids["approval"]) == "approved", timeout=WAIT_MS)
    qtbot.waitUntil(lambda: window.status.state.text() == "store: ok", timeout=WAIT_MS)
    assert decisions(path, ids["approval"]) == 1
    with Journal.open(path, actor=Actor.operator("checker"), read_only=True) as j:
        assert j.approvals.get(ids["approval"]).decided_by == "operator:alice"
        assert verify(j).ok


# ---------------------------------------------------------------- read-only


def enabled_write_buttons(window: MainWindow) -> list[str]:
    found = []
    for button in window.findChildren(QAbstractButton):
        text = button.text().replace("&", "").lower()
        if button.isVisible() and button.isEnabled() and WRITE_WORDS.match(text):
            found.append(text)
    return found


def write_actions(window: MainWindow) -> list[str]:
    words = ("approve", "deny", "snooze", "wake", "effect_", "cancel", "resolve", "answer")
    return [
        s.id
        for s in window.registry.specs()
        if s.id.split(".")[-1].startswith(words) and s.id != "inbox.snoozed"
    ]


def assert_observe_mode(qtbot, window: MainWindow, ids: dict[str, str]) -> None:
    """Every decision is disabled, and the window says why."""
    assert window.status.state.text() == "store: read-only"
    assert "not decide" in window.status.state.toolTip()
    assert "(read-only)" in window.windowTitle()
    for key in ("approval", "question", "conflict", "effect"):
        select(qtbot, window, f"{key}:{ids[key]}")
        settle(qtbot, window)
        window.registry.refresh()
        assert [a for a in write_actions(window) if window.registry.action(a).isEnabled()] == []
        assert enabled_write_buttons(window) == [], key
    for page in ("runs", "memory", "effects"):
        window.go(page)
        settle(qtbot, window)
        for table in window.pages[page].findChildren(QAbstractItemView):
            if table.isVisible() and table.model() is not None and table.model().rowCount():
                table.setCurrentIndex(table.model().index(0, 0))
                settle(qtbot, window)
        assert enabled_write_buttons(window) == [], page
    window.show_run(ids["run"])
    qtbot.waitUntil(window.runs.showing_run, timeout=WAIT_MS)
    settle(qtbot, window)
    assert enabled_write_buttons(window) == []


def test_a_read_only_journal_is_observe_mode(qtbot, journal, desk):
    path, ids = journal
    window = desk(path, read_only=True)
    assert_observe_mode(qtbot, window, ids)
    question = window.inbox.detail
    window.go("inbox")
    select(qtbot, window, f"question:{ids['question']}")
    assert "read-only" in question.current().hint.text()


@pytest.fixture
def read_only_folder(journal, tmp_path) -> Iterator[tuple[Path, dict[str, str]]]:
    """The journal's folder bind-mounted read-only (chmod is no barrier for root)."""
    path, ids = journal
    target = tmp_path / "read-only"
    target.mkdir()
    mount("--bind", str(path.parent), str(target))
    try:
        mount("-o", "remount,ro,bind", str(target))
        yield target / path.name, ids
    finally:
        umount(target)


def test_a_journal_in_a_read_only_folder_opens_in_observe_mode(qtbot, read_only_folder, desk_app):
    path, ids = read_only_folder
    before = sorted(os.listdir(path.parent))
    with qtbot.waitSignal(desk_app.window_shown, timeout=WAIT_MS):
        desk_app.open(path, operator="alice")  # asked writable, as `proctor open` does
    window = desk_app.window
    qtbot.waitUntil(lambda: window.inbox.model.has_loaded, timeout=WAIT_MS)
    assert window.journal.read_only
    assert "Opened read-only" in window.notice.text() and str(path) in window.notice.text()
    assert_observe_mode(qtbot, window, ids)
    assert sorted(os.listdir(path.parent)) == before
    assert desk_app.dialogs == []


# ---------------------------------------------------------------- disk full


@pytest.fixture
def small_disk(tmp_path) -> Iterator[Path]:
    target = tmp_path / "small-disk"
    target.mkdir()
    mount("-t", "tmpfs", "-o", "size=4m,mode=0700", "tmpfs", str(target))
    try:
        yield target
    finally:
        umount(target)


def fill(folder: Path) -> Path:
    """Fill ``folder``'s file system. Unbuffered: a buffered writer keeps the part of the last
    write the disk did not take and raises ENOSPC again on close (whether it does depended on
    how the free space fell against the 64 KB writes, i.e. on the journal's size)."""
    filler = folder / "filler"
    with open(filler, "wb", buffering=0) as out:
        try:
            while True:
                out.write(b"\0" * 65536)
        except OSError:
            pass
    return filler


def test_a_full_disk_during_a_decision_records_nothing_and_says_so(
    qtbot, small_disk, journal, desk
):
    source, ids = journal
    path = small_disk / "journal.db"
    shutil.copy2(source, path)
    window = desk(path)
    select(qtbot, window, f"approval:{ids['approval']}")
    detail = window.inbox.detail.current()
    filler = fill(small_disk)
    try:
        assert window.registry.trigger("inbox.approve")
        qtbot.waitUntil(
            lambda: (
                "could not be written" in detail.message.text()
                or "could not be written" in window.notice.text()
            ),
            timeout=WAIT_MS,
        )
        shown = detail.message.text() or window.notice.text()
        assert "disk is full" in shown  # the next step
        assert decisions(path, ids["approval"]) == 0
        assert status_of(path, ids["approval"]) == "pending"
    finally:
        filler.unlink()
    settle(qtbot, window)
    select(qtbot, window, f"approval:{ids['approval']}")
    assert window.registry.trigger("inbox.approve")  # space again: the same click works
    qtbot.waitUntil(lambda: status_of(path, ids["approval"]) == "approved", timeout=WAIT_MS)
    assert decisions(path, ids["approval"]) == 1
    with Journal.open(path, actor=Actor.operator("checker"), read_only=True) as j:
        assert j.integrity_check() == ["ok"]
        assert verify(j).ok


# ---------------------------------------------------------------- files that are not journals


def digest_folder(folder: Path) -> dict[str, str]:
    out = {}
    for item in sorted(folder.iterdir()):
        if item.is_file() and item.stat().st_size:
            out[item.name] = hashlib.sha256(item.read_bytes()).hexdigest()
        else:
            out[item.name] = "dir" if item.is_dir() else "empty"
    return out


def bad_file(kind: str, folder: Path, good: Path) -> Path:
    path = folder / "journal.db"
    if kind in ("bad header", "damaged schema page"):
        shutil.copy2(good, path)
        data = bytearray(path.read_bytes())
        if kind == "bad header":
            data[:16] = b"not a journal!!!"
        else:
            data[100:4096] = os.urandom(3996)  # sqlite_master lives on page 1
        path.write_bytes(bytes(data))
    elif kind == "foreign SQLite file":
        conn = sqlite3.connect(path)
        conn.execute("CREATE TABLE notes (body TEXT)")
        conn.commit()
        conn.close()
    elif kind == "zero-byte file":
        path.write_bytes(b"")
    elif kind == "folder":
        path.mkdir()
    return path


BAD = [
    "bad header",
    "damaged schema page",
    "foreign SQLite file",
    "zero-byte file",
    "folder",
    "missing path",
]


@pytest.mark.parametrize("kind", BAD)
def test_a_file_that_is_no_journal_is_refused_by_name_and_left_alone(
    qtbot, kind, journal, tmp_path, desk_app, capsys
):
    good, _ = journal
    folder = tmp_path / "bad"
    folder.mkdir()
    path = bad_file(kind, folder, good)
    before = digest_folder(folder)
    # a missing path is refused by `proctor open` itself (the desk creates what is missing)
    modes = (True,) if kind == "missing path" else (False, True)
    for read_only in modes:
        with qtbot.waitSignal(desk_app.open_failed, timeout=WAIT_MS) as failed:
            desk_app.open(path, read_only=read_only, operator="alice")
        assert str(path) in str(failed.args[0]), failed.args[0]
    assert all(str(path) in text for _, _, text, _ in desk_app.dialogs)
    if kind in ("bad header", "foreign SQLite file"):  # never was a journal: no restore advice
        assert all(
            "not a Proctor journal" in text and "backup" not in text
            for _, _, text, _ in desk_app.dialogs
        )
    assert desk_app.window is None and desk_app.exits == [1] * len(modes)
    capsys.readouterr()
    if kind == "missing path":
        assert cli.main(["open", str(path)]) == 3
        assert str(path) in capsys.readouterr().err
    assert cli.main(["verify", str(path)]) == 3
    assert str(path) in capsys.readouterr().err
    after = digest_folder(folder)
    wal = after.pop("journal.db-wal", "empty")
    after.pop("journal.db-shm", None)
    assert after == before and wal == "empty"  # SQLite may leave an empty -wal behind


def test_a_journal_from_a_newer_proctor_is_refused_even_read_only(qtbot, journal, desk_app, capsys):
    path, _ = journal
    conn = sqlite3.connect(path)
    conn.execute("UPDATE alembic_version SET version_num = '9999'")
    conn.commit()
    conn.close()
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    for read_only in (False, True):
        with qtbot.waitSignal(desk_app.open_failed, timeout=WAIT_MS) as failed:
            desk_app.open(path, read_only=read_only, operator="alice")
        assert type(failed.args[0]).__name__ == "SchemaTooNew"
        assert str(path) in str(failed.args[0]) and "9999" in str(failed.args[0])
    assert "Upgrade Proctor" in desk_app.dialogs[-1][2]
    assert cli.main(["verify", str(path)]) == 3
    assert "newer" in capsys.readouterr().err
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before


# ---------------------------------------------------------------- the -wal under the desk


AGENT_ASKS = """
import sys
from proctor.core import Actor, Journal
with Journal.open(sys.argv[1], actor=Actor.agent("late")) as j:
    a = j.approvals.request(sys.argv[2], {"tool": sys.argv[3]}, reason="after the wal went")
    print(a.id, flush=True)
    if sys.argv[4] == "stay":
        sys.stdin.readline()
"""


def agent_asks(path: Path, run_id: str, tool: str, stay: bool = False) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", AGENT_ASKS, str(path), run_id, tool, "stay" if stay else "go"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )


def test_live_refresh_goes_on_when_the_wal_is_deleted_or_replaced(qtbot, journal, desk):
    path, ids = journal
    window = desk(path)
    watcher = window.services.watcher
    qtbot.waitUntil(watcher.watching_wal, timeout=WAIT_MS)
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0] == 0
    conn.close()
    wal = Path(f"{path}-wal")
    wal.unlink()  # deleted under the desk: its watch is gone, its connections are stale
    first = agent_asks(path, ids["run"], "after-delete")
    first_id = first.communicate(timeout=60)[0].strip()
    qtbot.waitUntil(lambda: window.inbox.model.row_of(f"approval:{first_id}") >= 0, timeout=WAIT_MS)
    second = agent_asks(path, ids["run"], "while-open", stay=True)  # a new -wal appears
    try:
        second_id = second.stdout.readline().strip()
        qtbot.waitUntil(
            lambda: window.inbox.model.row_of(f"approval:{second_id}") >= 0, timeout=WAIT_MS
        )
        qtbot.waitUntil(watcher.watching_wal, timeout=WAIT_MS)  # the fast path is re-armed
    finally:
        second.communicate("\n", timeout=60)
    with Journal.open(path, actor=Actor.operator("checker"), read_only=True) as j:
        assert j.integrity_check() == ["ok"] and verify(j).ok


# ---------------------------------------------------------------- file modes


def test_a_journal_readable_by_others_is_flagged_in_the_status_bar(qtbot, journal, desk):
    path, _ = journal
    window = desk(path)
    assert not window.status.exposure.isVisible()
    os.chmod(path, 0o644)
    other = desk(path)
    assert other.status.exposure.isVisible()
    assert "readable by other users" in other.status.exposure.text()
    assert "chmod 600" in other.status.exposure.text()


def test_new_journals_and_their_wal_files_are_private(tmp_path):
    old = os.umask(0)
    try:
        path = tmp_path / "fresh" / "deeper" / "journal.db"
        with Journal.open(path, actor=Actor.agent("bot")) as j:
            j.runs.start("p", "t")
            modes = {p.name: p.stat().st_mode & 0o777 for p in path.parent.iterdir()}
        assert modes == {"journal.db": 0o600, "journal.db-wal": 0o600, "journal.db-shm": 0o600}
        assert path.parent.stat().st_mode & 0o777 == 0o700
        assert path.parent.parent.stat().st_mode & 0o777 == 0o700
    finally:
        os.umask(old)
