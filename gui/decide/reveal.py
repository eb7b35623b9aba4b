"""Pieces the memory views share: sensitivity masking, the reveal state and the per-scope
token budget setting."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, Signal

from proctor.core.memory.service import OPEN_SENSITIVITIES as OPEN_SENSITIVITIES
from proctor.core.memory.service import is_sensitive as is_sensitive
from proctor.core.models import MemoryEntry

from ..infra.i18n import tr
from ..infra.settings import DEFAULT_TOKEN_LIMIT
from ..infra.settings import TOKEN_LIMIT_KEY as TOKEN_LIMIT_KEY  # where tests look for it
from ..infra.tasks import request_id as request_id
from ..widgets import fmt
from ..widgets.fmt import label as label
from ..widgets.list_model import RowsModel as RowsModel


def mask_text(entry: MemoryEntry) -> str:
    return tr(
        "Hidden: this entry is marked “{sensitivity}”. Reveal it to read it ({count} "
        "characters); the reveal is recorded in the audit log."
    ).format(sensitivity=fmt.bounded(entry.sensitivity, 40), count=f"{len(entry.content):,}")


def token_limit(settings: Any) -> int:
    """The per-scope token budget (Preferences; ``DeskSettings.memory_token_limit``)."""
    return int(getattr(settings, "memory_token_limit", DEFAULT_TOKEN_LIMIT))


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
        return entry is not None and (not is_sensitive(entry.sensitivity) or entry.id in self._ids)

    def __contains__(self, entry_id: object) -> bool:
        return entry_id in self._ids
