"""``autocheckpoint=False``: this process's commits never copy the -wal into the file (the
desk's click must not pay for SQLite's auto-checkpoint); ``checkpoint()`` does, and another
process keeps its own auto-checkpoint. Real files, raw sqlite3 to read the -wal's state."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from proctor.core import Actor, Journal

pytestmark = pytest.mark.sqlite_only

PAYLOAD = {"text": "x" * 3000}  # about one page per event
EVENTS = 1500  # past SQLite's auto-checkpoint threshold of 1,000 pages


def copy_of(template_journal: Path, tmp_path: Path) -> Path:
    path = tmp_path / "j.db"
    shutil.copy(template_journal, path)
    return path


def write_many(journal: Journal) -> str:
    run = journal.runs.start("p", "checkpoint test", agent="a")
    for i in range(EVENTS):  # one commit each: each may be the one that crosses the threshold
        journal.runs.append_event(run.id, "note", {**PAYLOAD, "i": i})
    return run.id


def wal_frames_not_in_file(path: Path) -> int:
    """Frames in the -wal not yet copied into the file (a PASSIVE checkpoint's own answer,
    taken on a connection that does not auto-checkpoint and copies nothing: NOOP mode is
    not in SQLite 3.40, so ask on a copy)."""
    probe = path.with_name("probe.db")
    for suffix in ("", "-wal"):
        if Path(f"{path}{suffix}").exists():
            shutil.copy(f"{path}{suffix}", f"{probe}{suffix}")
    conn = sqlite3.connect(probe)
    try:
        _busy, log, _copied = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        return log
    finally:
        conn.close()


def file_pages(path: Path) -> int:
    return path.stat().st_size // 4096


def test_commits_without_autocheckpoint_leave_the_wal_to_checkpoint(
    template_journal: Path, tmp_path: Path
) -> None:
    path = copy_of(template_journal, tmp_path)
    before = file_pages(path)
    with Journal.open(path, actor=Actor.agent("a"), autocheckpoint=False) as journal:
        write_many(journal)
        assert file_pages(path) == before, "a commit copied the -wal into the file"
        assert wal_frames_not_in_file(path) > 1000
        journal.checkpoint()
        assert file_pages(path) > before + EVENTS // 2, "checkpoint() copied nothing"


def test_by_default_a_commit_checkpoints_as_sqlite_does(
    template_journal: Path, tmp_path: Path
) -> None:
    """The control: the same writes with the default copy the -wal into the file on their
    own (so the test above would fail if ``autocheckpoint`` were ignored)."""
    path = copy_of(template_journal, tmp_path)
    before = file_pages(path)
    with Journal.open(path, actor=Actor.agent("a")) as journal:
        write_many(journal)
        assert file_pages(path) > before + EVENTS // 2


def test_checkpoint_waits_for_no_reader_and_loses_nothing(
    template_journal: Path, tmp_path: Path
) -> None:
    """A reader holding an old snapshot keeps what it needs; the checkpoint returns at once
    (PASSIVE) and every event stays readable, in the journal and after reopening."""
    path = copy_of(template_journal, tmp_path)
    with Journal.open(path, actor=Actor.agent("a"), autocheckpoint=False) as journal:
        run_id = write_many(journal)
        reader = sqlite3.connect(path)
        reader.execute("BEGIN")
        held = reader.execute("SELECT COUNT(*) FROM events").fetchone()[0]
        journal.runs.append_event(run_id, "note", {"after": True})
        journal.checkpoint()
        assert reader.execute("SELECT COUNT(*) FROM events").fetchone()[0] == held
        reader.rollback()
        reader.close()
    with Journal.open(path, actor=Actor.agent("a")) as journal:
        assert journal.runs.get(run_id).last_sequence >= EVENTS + 1


def test_a_read_only_journal_checkpoints_nothing(template_journal: Path, tmp_path: Path) -> None:
    path = copy_of(template_journal, tmp_path)
    with Journal.open(path, actor=Actor.operator("o"), read_only=True) as journal:
        journal.checkpoint()  # no error, no write
