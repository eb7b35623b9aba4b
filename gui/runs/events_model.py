"""The event timeline model: every event of one run, loaded lazily.

``rowCount`` is the run's ``last_sequence`` (or, under a type filter, the number of
matching events), so the scroll bar is right at once; ``data()`` serves rows from an LRU
of keyset-paged blocks of BLOCK events. A missing block is fetched on the task runner
(never on the GUI thread) and its rows repaint when it arrives. When the operator drags
the scroll bar across thousands of rows, only the blocks still wanted are fetched:
at most IN_FLIGHT fetches run, newer wishes first, and stale wishes are dropped.

Unfiltered, row ``r`` is sequence ``r + 1`` (sequences are gapless). Filtered, the
model first reads the matching sequences (an index-only scan) and maps rows through it.
"""

from __future__ import annotations

import time
from bisect import bisect_left
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    Signal,
)

from proctor.core import Journal
from proctor.core.audit import timeline
from proctor.core.models import RunEvent

from ..infra.i18n import QT_TR_NOOP, tr
from ..infra.tasks import TaskRunner
from ..widgets import fmt
from ..widgets.event_summary import event_summary, plain_tip

# a block is about a screen of rows: a scroll position reads the one or two blocks it shows
# (200-row blocks read 400 rows to show 25; each row is a model and a summary made on the
# worker, so the drag waited for 16x the work it showed)
BLOCK = 32
CACHE_BLOCKS = 256  # 8,192 rows
TAIL_BLOCKS = 2  # opening a run reads its last two blocks (a screen, however the run ends)
IN_FLIGHT = 2
MAX_WANTED = 6
EVENT_ROLE = int(Qt.ItemDataRole.UserRole) + 1
SEQUENCE_ROLE = int(Qt.ItemDataRole.UserRole) + 2
DISPLAY = int(Qt.ItemDataRole.DisplayRole)
ALIGN = int(Qt.ItemDataRole.TextAlignmentRole)
ACCESSIBLE = int(Qt.ItemDataRole.AccessibleTextRole)
SERVED = frozenset(
    {DISPLAY, ALIGN, ACCESSIBLE, int(Qt.ItemDataRole.ToolTipRole), EVENT_ROLE, SEQUENCE_ROLE}
)
HEADERS = (
    "#",
    QT_TR_NOOP("Time"),
    QT_TR_NOOP("Type"),
    QT_TR_NOOP("Summary"),
    QT_TR_NOOP("Actor"),
    QT_TR_NOOP("Attempt"),
)  # marked; translated in headerData
COL_SEQ, COL_TIME, COL_TYPE, COL_SUMMARY, COL_ACTOR, COL_ATTEMPT = range(6)
Index = QModelIndex | QPersistentModelIndex
RIGHT = int((Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter).value)


class EventBlockModel(QAbstractTableModel):
    """Signals:
    block_loaded(int): a block of rows arrived (its number).
    shaped(): the row count was set for a new run or filter (rows are mapped).
    failed(object): a fetch failed (the exception).
    """

    block_loaded = Signal(int)
    shaped = Signal()
    failed = Signal(object)

    def __init__(self, runner: TaskRunner, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._runner = runner
        self._journal: Journal | None = None
        self.run_id: str | None = None
        self.types: list[str] | None = None
        self._count = 0
        self._seqs: list[int] | None = None  # row -> sequence under a filter
        self._blocks: OrderedDict[int, Block] = OrderedDict()
        self._inflight: set[int] = set()  # blocks being read (at most IN_FLIGHT at once)
        self._wanted: OrderedDict[int, None] = OrderedDict()
        self.fetched_rows = 0  # events read from the store since set_run (for tests, benches)
        self.fetches = 0

    # ------------------------------------------------------------ shaping
    def set_run(
        self, journal: Journal, run_id: str, last_sequence: int, types: list[str] | None = None
    ) -> None:
        """Show ``run_id`` (all events, or only ``types``); rows load when first shown."""
        self._journal, self.run_id, self.types = journal, run_id, list(types or []) or None
        self.fetched_rows = self.fetches = 0
        self.beginResetModel()
        self._clear()
        self._count = 0 if self.types else last_sequence
        self.endResetModel()
        if self.types:
            self._load_sequences()
        else:
            self.shaped.emit()

    def clear(self) -> None:
        self.run_id = None
        self.beginResetModel()
        self._clear()
        self._count = 0
        self.endResetModel()

    def _clear(self) -> None:
        """Forget the rows, and every read still on its way for them (latest/coalesce keys
        dropped: their outcome is never delivered)."""
        for key in ["sequences", "tail", *(("block", b) for b in self._inflight)]:
            self._runner.drop(key, self)
        self._blocks.clear()
        self._inflight.clear()
        self._wanted.clear()
        self._seqs = None

    def _shown(self) -> tuple[Journal, str]:
        """The journal and the run shown: reads start only after set_run gave both."""
        assert self._journal is not None and self.run_id is not None
        return self._journal, self.run_id

    def _load_sequences(self) -> None:
        (journal, run_id), types = self._shown(), self.types
        assert types is not None  # only a filtered view maps rows to sequences
        self._runner.latest(
            "sequences",
            lambda: timeline.event_sequences(journal, run_id, types),
            on_done=self._on_sequences,
            on_error=self._on_error,
            owner=self,
        )

    def _on_sequences(self, seqs: list[int]) -> None:
        self.beginResetModel()
        self._seqs, self._count = seqs, len(seqs)
        self.endResetModel()
        self.shaped.emit()

    def grow(self, last_sequence: int) -> None:
        """The run has more events (live): add rows at the end; nothing else moves."""
        if self.run_id is None:
            return
        if self.types:
            self._load_tail(last_sequence)
            return
        if last_sequence <= self._count:
            return
        first = self._count
        self._drop_block(first // BLOCK)  # the last, partial block is stale now
        self.beginInsertRows(QModelIndex(), first, last_sequence - 1)
        self._count = last_sequence
        self.endInsertRows()

    def _load_tail(self, last_sequence: int) -> None:
        if self._seqs is None:
            return
        (journal, run_id), types = self._shown(), self.types
        after = self._seqs[-1] if self._seqs else 0

        def fetch() -> list[int]:
            events = journal.runs.events(run_id, after=after, limit=10_000, types=types)
            return [e.sequence for e in events]

        self._runner.coalesce(
            "tail", fetch, on_done=self._on_tail, on_error=self._on_error, owner=self
        )

    def _on_tail(self, fresh: list[int]) -> None:
        """A coalesced read may have been asked for before an earlier one was delivered (its
        ``after`` is older than the last row now): keep only what is newer than that row."""
        if self._seqs is None:
            return
        last = self._seqs[-1] if self._seqs else 0
        fresh = [s for s in fresh if s > last]
        if not fresh:
            return
        first = self._count
        self._drop_block(first // BLOCK)
        self.beginInsertRows(QModelIndex(), first, first + len(fresh) - 1)
        self._seqs.extend(fresh)
        self._count = len(self._seqs)
        self.endInsertRows()

    def put_block(self, block: int, events: list[RunEvent]) -> None:
        """Store blocks read together with the run (the newest events, when opening):
        ``events`` start at block ``block`` and may fill the blocks after it."""
        if self.types or not events or events[0].sequence != block * BLOCK + 1:
            return
        for n in range(0, len(events), BLOCK):
            self._blocks[block + n // BLOCK] = make_block(events[n : n + BLOCK])
        self.fetched_rows += len(events)
        first = block * BLOCK
        last = min(first + len(events), self._count) - 1
        if last >= first:
            self.dataChanged.emit(self.index(first, 0), self.index(last, len(HEADERS) - 1))

    def _drop_block(self, block: int) -> None:
        self._blocks.pop(block, None)
        self._wanted.pop(block, None)

    # ------------------------------------------------------------ mapping
    def sequence_at(self, row: int) -> int | None:
        if not 0 <= row < self._count:
            return None
        return self._seqs[row] if self._seqs is not None else row + 1

    def row_of_sequence(self, sequence: int) -> int:
        """The row showing ``sequence`` (under a filter: the nearest row at or after it)."""
        if self._seqs is None:
            return min(max(sequence - 1, 0), self._count - 1) if self._count else -1
        if not self._seqs:
            return -1
        return min(bisect_left(self._seqs, sequence), len(self._seqs) - 1)

    def event_at(self, row: int) -> RunEvent | None:
        """The event at ``row`` if its block is loaded (requests it otherwise)."""
        block = self._blocks.get(row // BLOCK)
        if block is None:
            if 0 <= row < self._count:
                self._want(row // BLOCK)
            return None
        offset = row % BLOCK
        if offset >= len(block):  # fetched before the run grew: read it again
            self._drop_block(row // BLOCK)
            self._want(row // BLOCK)
            return None
        self._blocks.move_to_end(row // BLOCK)
        return block.events[offset]

    def is_loaded(self, row: int) -> bool:
        block = self._blocks.get(row // BLOCK)
        return block is not None and row % BLOCK < len(block)

    def load_rows(self, first: int, last: int) -> None:
        """Ask for the blocks covering rows ``first..last`` (e.g. before selecting one)."""
        for block in range(max(first, 0) // BLOCK, min(last, self._count - 1) // BLOCK + 1):
            if block not in self._blocks:
                self._want(block)

    # ------------------------------------------------------------ fetching
    def _want(self, block: int) -> None:
        if block in self._inflight:
            return
        self._wanted.pop(block, None)
        self._wanted[block] = None
        while len(self._wanted) > MAX_WANTED:
            self._wanted.popitem(last=False)  # the oldest wish scrolled away
        self._pump()

    def _pump(self) -> None:
        while self._wanted and len(self._inflight) < IN_FLIGHT:
            block, _ = self._wanted.popitem(last=True)  # newest wish first
            self._fetch(block)

    def _fetch(self, block: int) -> None:
        first_row = block * BLOCK
        start = self.sequence_at(first_row)
        if start is None:
            return
        self._inflight.add(block)
        (journal, run_id), types = self._shown(), self.types
        limit = min(BLOCK, self._count - first_row)
        runs = journal.runs
        self._runner.latest(
            ("block", block),
            lambda: (
                block,
                make_block(runs.events(run_id, after=start - 1, limit=limit, types=types)),
            ),
            on_done=self._on_block,
            on_error=self._on_block_error,
            owner=self,
        )

    def _on_block(self, result: tuple[int, Block]) -> None:
        block, events = result
        self._inflight.discard(block)
        self.fetches += 1
        self.fetched_rows += len(events)
        self._blocks[block] = events
        self._blocks.move_to_end(block)
        while len(self._blocks) > CACHE_BLOCKS:
            self._blocks.popitem(last=False)
        first = block * BLOCK
        last = min(first + len(events), self._count) - 1
        if last >= first:
            self.dataChanged.emit(self.index(first, 0), self.index(last, len(HEADERS) - 1))
        self.block_loaded.emit(block)
        self._pump()

    def _on_block_error(self, exc: BaseException) -> None:
        self._inflight.clear()
        self._on_error(exc)

    def _on_error(self, exc: BaseException) -> None:
        self.failed.emit(exc)

    # ------------------------------------------------------------ Qt model API
    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else self._count

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(HEADERS)

    def data(self, index: Index, role: int = DISPLAY) -> Any:
        """Painting asks ~7 roles per cell; the ones not served return at the first line,
        and the texts of loaded rows were made on the worker (a lookup here)."""
        if role not in SERVED:
            return None
        row, col = index.row(), index.column()
        if not 0 <= row < self._count or not index.isValid():
            return None
        if role == ALIGN:
            return RIGHT if col in (COL_SEQ, COL_ATTEMPT) else None
        if role == SEQUENCE_ROLE:
            return self.sequence_at(row)
        event = self.event_at(row)
        if event is None:
            if role == DISPLAY:
                return str(self.sequence_at(row)) if col == COL_SEQ else "…"
            return None
        texts = self._blocks[row // BLOCK].texts[row % BLOCK]
        if role == DISPLAY:
            return texts[col]
        if role == EVENT_ROLE:
            return event
        if role == ACCESSIBLE:
            return f"Event {event.sequence}, {texts[COL_TYPE]}: {texts[COL_SUMMARY]}"
        if col == COL_TIME:
            return precise_clock(event.created_at)
        return plain_tip(texts[-1]) if col == COL_SUMMARY else None

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if (
            orientation == Qt.Orientation.Horizontal
            and role == Qt.ItemDataRole.DisplayRole
            and 0 <= section < len(HEADERS)
        ):
            return tr(HEADERS[section])
        return None

    def flags(self, index: Index) -> Qt.ItemFlag:
        return ROW_FLAGS if index.isValid() else Qt.ItemFlag.NoItemFlags


ROW_FLAGS = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable


@dataclass(frozen=True)
class Block:
    """Events of one block and their cell texts (made on the worker thread, so painting
    only looks strings up)."""

    events: list[RunEvent]
    texts: list[tuple[str, ...]]

    def __len__(self) -> int:
        return len(self.events)


def make_block(events: list[RunEvent]) -> Block:
    texts: list[tuple[str, ...]] = []
    for e in events:
        summary = event_summary(e)
        texts.append(
            (
                str(e.sequence),
                precise_clock(e.created_at, date=False),
                fmt.bounded(e.type, 100),
                fmt.bounded(summary, 200),
                fmt.bounded(e.actor, 80),
                str(e.attempt),
                fmt.bounded(summary, 600),
            )
        )
    return Block(events, texts)


def read_tail(journal: Journal, run_id: str) -> tuple[Any, int, list[RunEvent]]:
    """The run and its last TAIL_BLOCKS blocks of events (the first block's number and
    the events), in one task (opening shows the end)."""
    run = journal.runs.get(run_id)
    block = max(max(run.last_sequence - 1, 0) // BLOCK - (TAIL_BLOCKS - 1), 0)
    events = (
        journal.runs.events(run_id, after=block * BLOCK, limit=TAIL_BLOCKS * BLOCK)
        if run.last_sequence
        else []
    )
    return run, block, events


def precise_clock(ts: float, *, date: bool = True) -> str:
    """Local time with milliseconds (events of one run are often within one second);
    with ``date``, the day too when it is not today."""
    local = time.localtime(ts)
    millis = int((ts - int(ts)) * 1000)
    day = (
        ""
        if not date or time.strftime("%Y-%m-%d", local) == time.strftime("%Y-%m-%d")
        else time.strftime("%Y-%m-%d ", local)
    )
    return f"{day}{time.strftime('%H:%M:%S', local)}.{millis:03d}"
