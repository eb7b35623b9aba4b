"""A QAbstractTableModel over keyset-paged core queries.

Pages are fetched on the task runner (``fetchMore`` is asynchronous). A refresh reloads
the rows already shown and applies the difference row by row (remove, reorder, insert,
dataChanged), so the view keeps its selection, current row and scroll position. A patch
re-reads only the rows a change named (``set_query(..., pick=...)``), which costs the same
whatever the number of rows shown.
Sorting and filtering happen in the core query, never in a proxy model.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import (
    QModelIndex,
    QObject,
    Qt,
    Signal,
)

from proctor.core.models import Page

from ..infra.tasks import TaskRunner
from . import fmt
from .labels import PlainTip, plain_tip
from .list_model import Index, TableModel

PAGE = 200
REFRESH_CAP = 2000  # a refresh reloads at most this many leading rows
MAX_HELD = 10_000  # rows one view holds: scrolling fetches no more past this (narrow it)
ROWS = "rows"  # the runner key of every read of the rows (latest wins)
KEY_ROLE = Qt.ItemDataRole.UserRole + 1
ITEM_ROLE = Qt.ItemDataRole.UserRole + 2

Fetch = Callable[[str | None, int], Page]
Pick = Callable[[set[str]], list[Any]]  # keys -> those rows that belong in the result now


@dataclass(frozen=True)
class Column:
    title: str
    text: Callable[[Any], str]
    tip: Callable[[Any], str] | None = None
    align: Qt.AlignmentFlag = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
    width: int = 120
    live: bool = False  # the text depends on the clock (ages, countdowns)
    absolute_title: str = ""  # the title while times are absolute ("Age" -> "Requested")


class PagedModel(TableModel):
    """Signals:
    loaded(): the first page of a new query (or a refresh) has been applied.
    loading_changed(bool): a page or refresh is in flight / done.
    vanished(list): keys of rows a refresh removed.
    arrived(list): keys of rows a refresh inserted.
    failed(object): a fetch failed (the exception).
    """

    loaded = Signal()
    loading_changed = Signal(bool)
    vanished = Signal(list)
    arrived = Signal(list)
    failed = Signal(object)

    def __init__(
        self,
        runner: TaskRunner,
        columns: Sequence[Column],
        key: Callable[[Any], str],
        order: Callable[[Any], Any],
        parent: QObject | None = None,
    ) -> None:
        super().__init__([c.title for c in columns], parent)
        self.absolute_titles = {
            n: c.absolute_title for n, c in enumerate(columns) if c.absolute_title
        }
        self._runner = runner
        self._columns = list(columns)
        self._key = key
        self._order = order
        self._keys: dict[str, int] = {}
        self._cursor: str | None = None
        self._fetch: Fetch | None = None
        self._descending = True
        self._loading = False  # a read is in flight (one at a time; the others wait below)
        self._refresh_queued = False
        self._pick: Pick | None = None
        self._patch_keys: set[str] = set()
        self.has_loaded = False
        self.applying = False  # True while a refresh's row changes are being signalled

    # ------------------------------------------------------------ query
    def set_query(self, fetch: Fetch, *, descending: bool = True, pick: Pick | None = None) -> None:
        """Show the result of ``fetch(cursor, limit)``; drops rows of the previous query.
        ``pick(keys)`` (optional) returns those of ``keys`` that belong in the result now."""
        self._fetch = fetch
        self._pick = pick
        self._patch_keys = set()
        self._descending = descending
        self.has_loaded = False
        self.beginResetModel()
        self._rows, self._keys, self._cursor = [], {}, None
        self.endResetModel()
        self._set_loading(False)
        self._load(None, PAGE, self._on_first_page)

    def refresh(self) -> None:
        """Reload the rows shown (coalesced: at most one refresh in flight)."""
        if self._fetch is None:
            return
        if self._loading:
            self._refresh_queued = True
            return
        self._load(None, min(max(PAGE, len(self._rows)), REFRESH_CAP), self._on_refresh)

    def patch(self, keys: set[str]) -> None:
        """Re-read just the rows with ``keys`` (changed, new or gone); a full refresh when the
        model cannot pick rows. Coalesced with whatever is in flight."""
        if self._fetch is None:
            return
        if self._pick is None:
            if keys:
                self.refresh()
            return
        self._patch_keys |= keys
        if not self._patch_keys or self._loading:
            return  # nothing to do, or applied after the load in flight (see _finish)
        keys, self._patch_keys = self._patch_keys, set()
        pick = self._pick
        self._set_loading(True)
        self._runner.latest(
            ROWS,
            lambda: (keys, pick(keys)),
            on_done=self._on_patch,
            on_error=self._on_error,
            owner=self,
        )

    def _on_patch(self, result: tuple[set[str], list[Any]]) -> None:
        keys, items = result
        present = {self._key(i): i for i in items if self._key(i) in keys}
        rows = [r for r in self._rows if self._key(r) not in keys]
        last = self._order(self._rows[-1]) if self._rows else None
        rows += [
            i
            for i in present.values()  # rows past the loaded ones come with fetchMore
            if self._cursor is None or last is None or not self._beyond(self._order(i), last)
        ]
        rows.sort(key=self._order, reverse=self._descending)
        self._show(rows)

    def _load(self, cursor: str | None, limit: int, done: Callable[[Page], None]) -> None:
        """Every read of the rows is the latest of key ROWS: a new query's first page drops
        the outcome of whatever read of the previous query was still in flight."""
        fetch = self._fetch
        assert fetch is not None
        self._set_loading(True)
        self._runner.latest(
            ROWS, lambda: fetch(cursor, limit), on_done=done, on_error=self._on_error, owner=self
        )

    def _set_loading(self, loading: bool) -> None:
        if loading != self._loading:
            self._loading = loading
            self.loading_changed.emit(loading)

    def _finish(self) -> None:
        self._set_loading(False)
        if self._refresh_queued:
            self._refresh_queued = False
            self._patch_keys = set()  # a full refresh covers them
            self.refresh()
        elif self._patch_keys:
            self.patch(set())

    def _on_error(self, exc: BaseException) -> None:
        self._set_loading(False)
        self._refresh_queued = False
        self._patch_keys = set()
        self.failed.emit(exc)

    def _on_first_page(self, page: Page) -> None:
        self._cursor = page.next_cursor
        self._append(page.items)
        self.has_loaded = True
        self._finish()
        self.loaded.emit()

    def _on_more(self, page: Page) -> None:
        self._cursor = page.next_cursor
        self._append([i for i in page.items if self._key(i) not in self._keys])
        self._finish()

    def _on_refresh(self, page: Page) -> None:
        fresh = list(page.items)
        if len(self._rows) > len(fresh) and page.next_cursor is not None and fresh:
            # rows past the reloaded prefix stay as they were (order key beyond the prefix)
            last = self._order(fresh[-1])
            seen = {self._key(i) for i in fresh}
            fresh += [
                r
                for r in self._rows
                if self._key(r) not in seen and self._beyond(self._order(r), last)
            ]
        else:
            self._cursor = page.next_cursor
        self._show(fresh)

    def _show(self, rows: list[Any]) -> None:
        """Apply a reloaded list, then say which rows left and came, and that it loaded."""
        removed, inserted = self.apply_rows(rows)
        self._finish()
        if removed:
            self.vanished.emit(removed)
        if inserted:
            self.arrived.emit(inserted)
        self.loaded.emit()

    def _beyond(self, order: Any, last: Any) -> bool:
        return order < last if self._descending else order > last

    # ------------------------------------------------------------ diff
    def apply_rows(self, fresh: list[Any]) -> tuple[list[str], list[str]]:
        """Turn the current rows into ``fresh`` with fine-grained signals."""
        new_keys = [self._key(i) for i in fresh]
        wanted = set(new_keys)
        removed = [k for k in self._keys if k not in wanted]
        self.applying = True
        try:
            self._remove(removed)
            kept_order = [k for k in new_keys if k in self._keys]
            if kept_order != [self._key(r) for r in self._rows]:
                self._reorder(kept_order)
            inserted = [k for k in new_keys if k not in self._keys]
            self._insert(fresh, new_keys)
            self._update(fresh)
        finally:
            self.applying = False
        return removed, inserted

    def _remove(self, keys: list[str]) -> None:
        rows = sorted((self._keys[k] for k in keys), reverse=True)
        while rows:
            last = first = rows.pop(0)
            while rows and rows[0] == first - 1:
                first = rows.pop(0)
            self.beginRemoveRows(QModelIndex(), first, last)
            del self._rows[first : last + 1]
            self._reindex()
            self.endRemoveRows()

    def _reorder(self, order: list[str]) -> None:
        self.layoutAboutToBeChanged.emit()
        old_keys = [self._key(r) for r in self._rows]
        by_key = dict(zip(old_keys, self._rows, strict=True))
        self._rows = [by_key[k] for k in order]
        self._reindex()
        for old in self.persistentIndexList():
            row = self._keys.get(old_keys[old.row()], -1) if old.isValid() else -1
            self.changePersistentIndex(
                old, self.index(row, old.column()) if row >= 0 else QModelIndex()
            )
        self.layoutChanged.emit()

    def _insert(self, fresh: list[Any], new_keys: list[str]) -> None:
        i = 0
        while i < len(fresh):
            if new_keys[i] in self._keys:
                i += 1
                continue
            j = i
            while j < len(fresh) and new_keys[j] not in self._keys:
                j += 1
            self.beginInsertRows(QModelIndex(), i, j - 1)
            self._rows[i:i] = fresh[i:j]
            self._reindex()
            self.endInsertRows()
            i = j

    def _update(self, fresh: list[Any]) -> None:
        last_col = self.columnCount() - 1
        for row, item in enumerate(fresh):
            if self._rows[row] != item:
                self._rows[row] = item
                self.dataChanged.emit(self.index(row, 0), self.index(row, last_col))

    def _append(self, items: list[Any]) -> None:
        if not items:
            return
        start = len(self._rows)
        self.beginInsertRows(QModelIndex(), start, start + len(items) - 1)
        self._rows.extend(items)
        self._reindex()
        self.endInsertRows()

    def _reindex(self) -> None:
        self._keys = {self._key(r): n for n, r in enumerate(self._rows)}

    # ------------------------------------------------------------ access
    def items(self) -> list[Any]:
        return list(self._rows)

    def row_of(self, key: str) -> int:
        return self._keys.get(key, -1)

    def is_loading(self) -> bool:
        return self._loading

    def tick(self) -> None:
        """Repaint the clock-dependent columns (ages, countdowns)."""
        if not self._rows:
            return
        for col, column in enumerate(self._columns):
            if column.live:
                self.dataChanged.emit(
                    self.index(0, col),
                    self.index(len(self._rows) - 1, col),
                    [Qt.ItemDataRole.DisplayRole],
                )

    # ------------------------------------------------------------ Qt model API
    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or index.row() >= len(self._rows):
            return None
        item = self._rows[index.row()]
        column = self._columns[index.column()]
        if role == Qt.ItemDataRole.DisplayRole:
            return fmt.bounded(column.text(item))
        if role == Qt.ItemDataRole.ToolTipRole:
            return tip_text(column.tip(item)) if column.tip else None
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return int(column.align.value)
        if role == KEY_ROLE:
            return self._key(item)
        if role == ITEM_ROLE:
            return item
        return self.extra_data(item, index.column(), role)

    def extra_data(self, item: Any, column: int, role: int) -> Any:
        """Subclasses add icons, colours and accessible text here."""
        return None

    max_held = MAX_HELD

    def capped(self) -> bool:
        """More rows match than this view holds (``max_held``): the rest are not fetched
        (the desk peaked at 2.6 GB holding every row scrolled past); the filters narrow it."""
        return self._cursor is not None and len(self._rows) >= self.max_held

    def canFetchMore(self, parent: Index = QModelIndex()) -> bool:  # noqa: B008
        return (
            not parent.isValid()
            and self._cursor is not None
            and not self._loading
            and len(self._rows) < self.max_held
        )

    def fetchMore(self, parent: Index = QModelIndex()) -> None:  # noqa: B008
        if self.canFetchMore(parent):
            self._load(self._cursor, PAGE, self._on_more)

    def column_widths(self) -> list[int]:
        return [c.width for c in self._columns]

    def time_columns(self) -> list[int]:
        """The columns that show times (they widen for absolute ones)."""
        return [n for n, c in enumerate(self._columns) if c.live]


def tip_text(tip: str) -> str:
    """A cell's tooltip as plain text (agent text is never markup), bounded on display."""
    return tip if isinstance(tip, PlainTip) else plain_tip(fmt.bounded(tip, 2000))
