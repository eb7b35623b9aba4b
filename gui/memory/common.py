"""Pieces the memory views share: sensitivity masking, the reveal state, a small read-only
table model, and the per-scope token budget setting."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QFont

from proctor.core.memory.service import OPEN_SENSITIVITIES as OPEN_SENSITIVITIES
from proctor.core.memory.service import is_sensitive as is_sensitive
from proctor.core.models import MemoryEntry

from ..i18n import tr
from ..settings import DEFAULT_TOKEN_LIMIT
from ..settings import TOKEN_LIMIT_KEY as TOKEN_LIMIT_KEY  # where tests look for it
from ..widgets import fmt
from ..widgets.labels import plain_tip
from ..widgets.list_model import Index, ListModel


def mask_text(entry: MemoryEntry) -> str:
    return tr("Hidden: this entry is marked “{sensitivity}”. Reveal it to read it ({count} "
              "characters); the reveal is recorded in the audit log.").format(
        sensitivity=fmt.bounded(entry.sensitivity, 40), count=f"{len(entry.content):,}")


def token_limit(settings: Any) -> int:
    """The per-scope token budget (Preferences; ``DeskSettings.memory_token_limit``)."""
    return int(getattr(settings, "memory_token_limit", DEFAULT_TOKEN_LIMIT))


def request_id() -> str:
    return f"desk-{uuid.uuid4().hex}"


def label(text: str) -> str:
    return text.replace("_", " ")


class RevealState(QObject):
    """Which sensitive entries this desk has revealed (after an audited reveal).

    Signals:
        changed(str): the entry id that was revealed.
    """

    changed = Signal(str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._ids: set[str] = set()

    def add(self, entry_id: str) -> None:
        if entry_id not in self._ids:
            self._ids.add(entry_id)
            self.changed.emit(entry_id)

    def shows(self, entry: MemoryEntry | None) -> bool:
        """True if ``entry``'s content may be shown."""
        return entry is not None and (not is_sensitive(entry.sensitivity)
                                      or entry.id in self._ids)

    def __contains__(self, entry_id: object) -> bool:
        return entry_id in self._ids


class RowsModel(ListModel):
    """A small read-only table over a list (history, field differences, receipts): what
    each cell shows comes from ``cells``; ``tip`` and ``bold`` are optional per row."""

    def __init__(self, headers: Sequence[str], cells: Callable[[Any], Sequence[str]],
                 parent: QObject | None = None, *,
                 tip: Callable[[Any], str] | None = None,
                 bold: Callable[[Any], bool] | None = None) -> None:
        super().__init__(headers, parent)
        self._cells = cells
        self._tip = tip
        self._bold = bold

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or index.row() >= len(self._rows):
            return None
        row = self._rows[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return fmt.bounded(self._cells(row)[index.column()])
        if role == Qt.ItemDataRole.ToolTipRole and self._tip is not None:
            return plain_tip(fmt.bounded(self._tip(row), 2000))
        if role == Qt.ItemDataRole.FontRole and self._bold is not None and self._bold(row):
            font = QFont()
            font.setBold(True)
            return font
        return None
