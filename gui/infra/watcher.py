"""Live refresh: notice other processes' commits and say what changed.

A journal on a server (team mode) has no file: its fast path is the server's notification
(``LISTEN``, ``journal.changes.wait`` on a thread of its own, NOTIFY_WAIT_S at a time), and
the poll is its safety net too.

Fast path: a QFileSystemWatcher on the journal's ``-wal`` file (and on its folder, to
re-arm when ``-wal`` reappears after the last connection closed it). Safety net:
``journal.changes.data_version()`` polled off the GUI thread every POLL_MS. Either one
triggers a read of ``journal.changes.since(last_seq)``; a non-empty ChangeSet is
emitted once. Reads are coalesced: at most one in flight, one more queued.

The desk's own writes do not wait for any of this: each write of the desk's journal hands
the change set it committed to ``wrote`` with its commit (``Journal.on_commit``, through
gui/infra/guard.py ``WriteFeed``), emitted at once through the same ``changed`` signal. Rows
are reported once, by change seq: when the feed read later returns them, they are left out.

SQLite writes the WAL frames (the file events) before the commit becomes visible to
readers (the wal-index in ``-shm`` is updated after the fsync, through mmap: no event).
A read woken by the frames can therefore find nothing yet; it is then retried after
FOLLOW_UP_MS delays until the commit shows up (measured: without this, one new request
in ten waited for the next unrelated write or the poll, ~140 ms). The commit shows up
when the agent's fsync returns, a few to tens of ms after the frames: the retries are at
most FOLLOW_UP_STEP_MS apart for the first FOLLOW_UP_FINE_MS (a 2, 8, 25 ms schedule
found a commit visible at 11 ms at 35 ms: request → painted p95 48 ms), then sparser.
An empty read costs one indexed read on a worker.

An agent's wait stamps its request's ``waiter_seen_at`` (core/storage/waiter.py) without a
change row: the same read also asks for the looks since the last one it saw (two seeks on
the waiter indexes, ``Changes.since(looks=True)``), and ``looked`` says which requests an
agent looked at, at once, not at the inbox's 15 s reload.
"""

from __future__ import annotations

import threading
from pathlib import Path

from PySide6.QtCore import QFileSystemWatcher, QObject, QTimer, Signal, Slot

from proctor.core import Journal, errors
from proctor.core.audit.witness import HeadWitness, journal_id
from proctor.core.models import ChangeSet

from .guard import JournalClosed
from .server_target import server_of
from .tasks import TaskRunner

POLL_MS = 400
MAX_BATCH = 5000
READ, POLL = "read", "poll"  # the runner keys of the feed reads and the data-version polls
CHECKPOINT = "checkpoint"  # the runner key of the desk's own -wal checkpoints
CHECKPOINT_MS = 1000  # after a desk write, its -wal pages are copied into the file this late
FOLLOW_UP_STEP_MS = 4  # the most a commit becoming visible early is read late
FOLLOW_UP_FINE_MS = 60  # ... while it is this fresh
FOLLOW_UP_MS = (2,) + (FOLLOW_UP_STEP_MS,) * 15 + (20, 40, 80)  # 2, 6, ... 62, 82, 122, 202
WITNESS_MS = 1000  # the head witness is written at most this often (core/audit/witness.py)
NOTIFY_WAIT_S = 0.5  # a server journal's listener checks for stop this often


class JournalWatcher(QObject):
    """Signals:
    changed(ChangeSet): changes committed since the last one seen (any process).
    seen_at(float): wall time of the newest change seen (for the status bar).
    wal_lost(): the ``-wal`` this desk's open connections use vanished or was replaced
        (deleted by something else: un-checkpointed commits in it may be lost). Once.
    looked(list): (ChangeKind, id) of the requests an agent looked at (its wait's stamp)
        since the last read that saw one.
    """

    changed = Signal(object)
    looked = Signal(list)
    seen_at = Signal(float)
    wal_lost = Signal()
    _written = Signal(object)  # from any thread: the ChangeSet a desk write committed
    _notified = Signal()  # from the listener thread: the server said a write committed

    def __init__(self, journal: Journal, runner: TaskRunner, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._journal = journal
        self._runner = runner
        # a journal on a server has no file to watch or to keep a witness beside: the poll
        # (and the server's notifications, where core offers them) tell what changed
        self.on_server = server_of(journal) is not None
        self._path = Path(str(journal.path))
        self._wal = Path(f"{self._path}-wal")
        self.last_seq = 0
        self.looked_at: float | None = None  # the newest agent look seen (None: not read yet)
        self._ahead: set[int] = set()  # seqs past last_seq already reported (own writes)
        self._data_version: int | None = None
        self._stopped = True  # until start(); after stop() nothing is read or emitted
        self._files = True  # watch the -wal and its folder (else the poll alone finds changes)
        self._wal_inode: int | None = None  # of the -wal seen while the journal was open
        self.wal_was_lost = False
        self._fs = QFileSystemWatcher(self)
        self._fs.fileChanged.connect(self._on_file_changed)
        self._fs.directoryChanged.connect(self._on_dir_changed)
        self._poll = QTimer(self)
        self._poll.setInterval(POLL_MS)
        self._poll.timeout.connect(self._on_poll)
        self.wakeups = {"wal": 0, "poll": 0, "follow_up": 0}
        self._follow_ups: list[int] = []
        self._follow_up = QTimer(self)
        self._follow_up.setSingleShot(True)
        self._follow_up.timeout.connect(self._on_follow_up)
        # what this desk saw, kept beside the journal: a -wal lost before its checkpoint is
        # found later by `proctor verify` or the next open. A journal that already lacks
        # what the witness saw keeps the witness as it is (the finding stays until accepted).
        self.witness = HeadWitness(self._path)
        self._witness_frozen = (
            getattr(journal, "lost_tail", None) is not None
            or bool(getattr(journal, "read_only", False))
            or self.on_server
        )
        self._witness_timer = QTimer(self)
        self._witness_timer.setSingleShot(True)
        self._witness_timer.setInterval(WITNESS_MS)
        self._witness_timer.timeout.connect(self._write_witness)
        # the desk's journal leaves the -wal to it (open_for_desk: autocheckpoint=False), so
        # that no click's commit is the one that copies 1,000 pages: it checkpoints a moment
        # after its own writes instead, off the click's path (agents still checkpoint theirs)
        self._checkpoint_timer = QTimer(self)
        self._checkpoint_timer.setSingleShot(True)
        self._checkpoint_timer.setInterval(CHECKPOINT_MS)
        self._checkpoint_timer.timeout.connect(self._checkpoint)
        self.checkpoints = 0  # checkpoints asked for (tests)
        self._written.connect(self._on_written)  # queued when emitted on a worker thread
        self._notified.connect(self._on_notified)
        self._listening: threading.Event | None = None  # set: the listener thread stops
        self.wakeups["notify"] = 0

    # ------------------------------------------------------------ lifecycle
    def start(self, since: int) -> None:
        """Start watching; changes after ``since`` (a change_seq) are reported."""
        self.last_seq = since
        self._stopped = False
        self._poll.start()
        if not self.on_server:  # what opening wrote (a migration) goes into the file too
            self._checkpoint_timer.start()
        if self.on_server:
            self._listen()
            return
        self._arm()
        folder = str(self._path.parent)
        if folder not in self._fs.directories():
            self._fs.addPath(folder)

    def stop(self) -> None:
        """Stop for good (the window closes): reads still in flight are dropped and nothing
        is read or emitted any more, until start() again."""
        self._stopped = True
        self._runner.drop(READ, self)  # a read in flight, or waiting, is not delivered
        self.pause()
        self._witness_timer.stop()
        self._checkpoint_timer.stop()
        if not self._witness_frozen and self.witness.dirty:
            data = self.witness.snapshot()  # the head seen last, before the desk lets go
            if data is not None:
                data["journal_id"] = self.witness.journal_id
                self.witness.write(data)

    def pause(self) -> None:
        """No more file events, follow-ups or polls; explicit reads (refresh_now) still
        work."""
        if self._listening is not None:
            self._listening.set()
            self._listening = None
        self._follow_ups = []
        self._poll.stop()
        self._follow_up.stop()
        paths = self._fs.files() + self._fs.directories()
        if paths:
            self._fs.removePaths(paths)

    def poll_only(self) -> None:
        """Find changes by the poll alone, as on a platform where the -wal cannot be
        watched (file events off, the safety-net poll on)."""
        self.pause()
        self._files = False
        if not self._stopped:
            self._poll.start()

    def watching_wal(self) -> bool:
        return str(self._wal) in self._fs.files()

    def set_poll_interval(self, ms: int) -> None:
        """The safety-net poll period (the operator's "refresh fallback interval")."""
        self._poll.setInterval(int(ms))

    def poll_interval(self) -> int:
        return self._poll.interval()

    def refresh_now(self) -> None:
        """Read the change feed now (on demand)."""
        self._read()

    def wrote(self, changes: ChangeSet) -> None:
        """A desk write committed ``changes`` (any thread): report them now."""
        self._written.emit(changes)

    @Slot(object)
    def _on_written(self, changes: ChangeSet) -> None:
        if self._stopped:
            return
        if not self.on_server and not self._checkpoint_timer.isActive():
            self._checkpoint_timer.start()
        fresh = [c for c in changes.changes if c.seq > self.last_seq and c.seq not in self._ahead]
        if not fresh:
            return
        self._ahead.update(c.seq for c in fresh)
        self.seen_at.emit(max(c.created_at for c in fresh))
        self.changed.emit(ChangeSet(since=fresh[0].seq - 1, until=fresh[-1].seq, changes=fresh))

    @Slot()
    def _checkpoint(self) -> None:
        if self._stopped:
            return
        self.checkpoints += 1
        self._runner.coalesce(
            CHECKPOINT, self._journal.checkpoint, owner=self, on_error=self._on_poll_error
        )  # the next one tries again

    # ------------------------------------------------------------ server notifications
    def _listen(self) -> None:
        """A thread that waits for the server's change notifications (a journal whose core
        has no ``changes.wait`` is polled only)."""
        journal = getattr(self._journal, "unguarded", self._journal)
        wait = getattr(journal.changes, "wait", None)
        if wait is None or self._listening is not None:
            return
        stop = self._listening = threading.Event()

        def listen() -> None:
            while not stop.is_set():
                try:
                    woke = wait(NOTIFY_WAIT_S)
                except Exception:  # noqa: BLE001 - a closed journal, a lost server: the poll carries on
                    return
                if not woke and getattr(journal.changes, "closed", False):
                    return  # the journal was closed: wait() returns at once from now on
                if woke and not stop.is_set():
                    try:
                        self._notified.emit()
                    except RuntimeError:  # the watcher is gone (its window closed)
                        return

        threading.Thread(target=listen, name="proctor-listen", daemon=True).start()

    @Slot()
    def _on_notified(self) -> None:
        if self._stopped:
            return
        self.wakeups["notify"] += 1
        self._read()

    # ------------------------------------------------------------ triggers
    def _arm(self) -> None:
        if self.on_server:
            return
        self._check_wal()
        if self._files and self._wal.exists() and str(self._wal) not in self._fs.files():
            self._fs.addPath(str(self._wal))

    def _check_wal(self) -> None:
        """While the desk holds the journal open, SQLite never removes its -wal (only the
        last connection to close does): a -wal that vanishes or changes inode was deleted
        by something else."""
        try:
            inode: int | None = self._wal.stat().st_ino
        except OSError:
            inode = None
        if self._wal_inode is not None and inode != self._wal_inode and not self.wal_was_lost:
            self.wal_was_lost = True
            self._witness_lost_wal()
            self.wal_lost.emit()
        if inode is not None:
            self._wal_inode = inode

    @Slot(str)
    def _on_file_changed(self, _path: str) -> None:
        self.wal_written()

    def wal_written(self) -> None:
        """The -wal changed (its file event): read now, and again shortly after while the
        commit is not visible to readers yet."""
        if self._stopped:
            return
        self.wakeups["wal"] += 1
        self._follow_ups = list(FOLLOW_UP_MS)
        self._arm()  # the watch is dropped when -wal is removed or replaced
        self._read()

    @Slot(str)
    def _on_dir_changed(self, _path: str) -> None:
        if self._stopped:
            return
        self._check_wal()
        if not self.watching_wal() and self._wal.exists():
            self._arm()
            self._read()

    @Slot()
    def _on_poll(self) -> None:
        if self._stopped:
            return
        self._arm()
        changes = self._journal.changes
        # coalesced: one poll in flight; a slow store never piles them up
        self._runner.coalesce(
            POLL,
            changes.data_version,
            on_done=self._on_data_version,
            on_error=self._on_poll_error,
            owner=self,
        )

    def _on_data_version(self, version: int) -> None:
        if self._stopped:
            return
        if version != self._data_version:
            # the first reading has no baseline: read the feed once to close the gap
            # between start(since) and this first poll
            if self._data_version is not None:
                self.wakeups["poll"] += 1
            self._read()
        self._data_version = version

    def _on_poll_error(self, _exc: BaseException) -> None:
        pass  # the next read reports the error; polling goes on

    # ------------------------------------------------------------ reading
    def _read(self) -> None:
        """Read the feed past ``last_seq`` (coalesced: one read in flight; a request made
        meanwhile runs once it is delivered, from where that delivery left ``last_seq``)."""
        if self._stopped:
            return
        self._runner.coalesce(
            READ,
            self._read_past_last,
            on_done=self._on_changes,
            on_error=self._on_read_error,
            owner=self,
        )

    def _read_past_last(self) -> ChangeSet:
        """(worker) The changes after ``last_seq``, as it stands when the read starts: the
        GUI thread set it before starting this read, and does not move it while it runs."""
        return self._journal.changes.since(
            self.last_seq, limit=MAX_BATCH, looks=True, looks_after=self.looked_at
        )

    def reading(self) -> bool:
        """A read of the feed or a poll is in flight or waiting (for tests: settled?)."""
        return self._runner.keyed(READ, self) or self._runner.keyed(POLL, self)

    def has_baseline(self) -> bool:
        """The poll has read the journal's data version once."""
        return self._data_version is not None

    @Slot()
    def _on_follow_up(self) -> None:
        if self._stopped:
            return
        self.wakeups["follow_up"] += 1
        self._read()

    def _on_changes(self, cs: ChangeSet) -> None:
        if self._stopped:
            return
        self._on_looks(cs)
        if cs.changes:
            self._follow_ups = []
            self._follow_up.stop()
            self.last_seq = cs.until
            self._observe(cs)
            self.seen_at.emit(max(c.created_at for c in cs.changes))
            self._emit_unseen(cs)
        elif cs.looks:
            self._follow_ups = []  # the commit that woke the read was a look: it is seen
            self._follow_up.stop()
        elif self._follow_ups and not self._runner.waiting(READ, self):
            self._follow_up.start(self._follow_ups.pop(0))  # the commit may not be visible yet
        if len(cs.changes) >= MAX_BATCH:
            self._read()

    def _on_looks(self, cs: ChangeSet) -> None:
        """Agents' looks in ``cs``: the newest is the next read's baseline (the first read
        only sets it), and ``looked`` names the requests looked at since the last one."""
        if self.looked_at is None:  # the first read: the baseline (0: no look yet)
            self.looked_at = cs.looked_at or 0.0
            return
        if cs.looked_at is None or cs.looked_at <= self.looked_at:
            return
        self.looked_at = cs.looked_at
        if cs.looks:
            self.looked.emit(list(cs.looks))

    # ------------------------------------------------------------ head witness
    def _observe(self, cs: ChangeSet) -> None:
        if self._witness_frozen:
            return
        self.witness.observe(cs.changes)
        if not self._witness_timer.isActive():
            self._witness_timer.start()

    @Slot()
    def _write_witness(self) -> None:
        if self._witness_frozen or not self.witness.dirty:
            return
        data = self.witness.snapshot()
        if data is None:
            return
        witness, journal = self.witness, self._journal

        def write() -> bool:  # a worker: the journal's id once, then the file
            try:
                if witness.journal_id is None:
                    witness.journal_id = journal_id(journal)
                data["journal_id"] = witness.journal_id
            except (errors.ProctorError, JournalClosed):
                pass  # only a witness: written without the id
            return witness.write(data)

        self._runner.run(write, owner=self)

    def _witness_lost_wal(self) -> None:
        """The -wal vanished: write what was seen before it, now, and keep it so."""
        if self._witness_frozen:
            return
        self._witness_frozen = True
        self._witness_timer.stop()
        self.witness.lost_wal()
        data = self.witness.snapshot()
        if data is not None:  # on this thread: the desk may not live much longer
            data["journal_id"] = self.witness.journal_id
            self.witness.write(data)

    def _emit_unseen(self, cs: ChangeSet) -> None:
        """``changed`` with the rows not already reported by ``wrote``."""
        if self._ahead:
            fresh = [c for c in cs.changes if c.seq not in self._ahead]
            self._ahead = {seq for seq in self._ahead if seq > cs.until}
            if not fresh:
                return
            if len(fresh) < len(cs.changes):
                cs = cs.model_copy(update={"changes": fresh})
        self.changed.emit(cs)

    def _on_read_error(self, exc: BaseException) -> None:
        self._runner.drop(READ, self)  # no follow-up after a failed read: the next trigger
        if not self._stopped:
            self._runner.default_error(exc)
