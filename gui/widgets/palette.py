"""The command palette (Ctrl+K) and the shortcut help (?), both built from the registry."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import (
    QEvent,
    QModelIndex,
    QObject,
    Qt,
    Slot,
)
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QDialog,
    QHeaderView,
    QLabel,
    QLineEdit,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from ..infra.actions import ActionRegistry, display_key
from ..infra.i18n import QT_TR_NOOP, tr
from .list_model import Index, TableModel
from .tables import row_table

ID_ROLE = Qt.ItemDataRole.UserRole + 1


@dataclass(frozen=True)
class Row:
    id: str
    text: str
    menu: str
    keys: str
    enabled: bool


def rows_of(registry: ActionRegistry) -> list[Row]:
    registry.refresh()
    return [
        Row(
            s.id,
            tr(s.text),
            tr(s.menu),
            display_key(registry.effective_shortcut(s.id)),
            registry.is_enabled(s.id),
        )
        for s in registry.specs()
    ]


def matches(row: Row, query: str) -> bool:
    hay = f"{row.text} {row.menu} {row.id}".lower()
    return all(token in hay for token in query.lower().split())


class CommandsModel(TableModel):
    """Commands (text | menu | shortcut); ``set_filter`` narrows by words."""

    HEADERS = (QT_TR_NOOP("Command"), QT_TR_NOOP("Menu"), QT_TR_NOOP("Shortcut"))

    def __init__(self, rows: list[Row], parent: QObject | None = None) -> None:
        super().__init__(self.HEADERS, parent)
        self._all = rows
        self._rows = list(rows)

    def set_filter(self, query: str) -> None:
        self.beginResetModel()
        self._rows = [r for r in self._all if matches(r, query)]
        self._rows.sort(key=lambda r: not r.enabled)
        self.endResetModel()

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if not index.isValid() or index.row() >= len(self._rows):
            return None
        row = self._rows[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return (row.text, row.menu, row.keys)[index.column()]
        if role == ID_ROLE:
            return row.id
        return None

    def flags(self, index: Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        row = self._rows[index.row()]
        flags = Qt.ItemFlag.ItemIsSelectable
        return flags | Qt.ItemFlag.ItemIsEnabled if row.enabled else flags

    def id_at(self, row: int) -> str | None:
        return (
            self._rows[row].id if 0 <= row < len(self._rows) and self._rows[row].enabled else None
        )


def _table(model: CommandsModel, name: str, parent: QWidget) -> QTableView:
    view = row_table(model, name, parent)
    header = view.horizontalHeader()
    header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
    header.resizeSection(1, 90)
    header.resizeSection(2, 130)
    return view


class CommandPalette(QDialog):
    """Type to find a command; Enter runs it."""

    def __init__(self, registry: ActionRegistry, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(tr("Command palette"))
        self._registry = registry
        self.model = CommandsModel(rows_of(registry), self)
        self.search = QLineEdit(self)
        self.search.setPlaceholderText(tr("Type a command…"))
        self.search.setAccessibleName(tr("Search commands"))
        self.search.textChanged.connect(self._on_text)
        self.search.installEventFilter(self)
        self.view = _table(self.model, "Commands", self)
        self.view.activated.connect(self._on_activated)
        layout = QVBoxLayout(self)
        layout.addWidget(self.search)
        layout.addWidget(self.view, 1)
        self.resize(560, 420)
        self._on_text("")
        self.search.setFocus()

    @Slot(str)
    def _on_text(self, text: str) -> None:
        self.model.set_filter(text)
        if self.model.rowCount():
            self.view.selectRow(0)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.search and event.type() == QEvent.Type.KeyPress:
            assert isinstance(event, QKeyEvent)
            if event.key() in (Qt.Key.Key_Down, Qt.Key.Key_Up):
                step = 1 if event.key() == Qt.Key.Key_Down else -1
                row = max(0, min(self.model.rowCount() - 1, self.view.currentIndex().row() + step))
                self.view.selectRow(row)
                return True
            if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
                self.run_current()
                return True
        return super().eventFilter(watched, event)

    def run_current(self) -> None:
        action_id = self.model.id_at(self.view.currentIndex().row())
        if action_id is None:
            return
        self.accept()
        self._registry.trigger(action_id)

    @Slot(QModelIndex)
    def _on_activated(self, _index: QModelIndex) -> None:
        self.run_current()


TRIAGE = ("inbox.next", "inbox.prev", "inbox.approve", "inbox.deny", "inbox.snooze", "inbox.open")


def help_order(row: Row) -> tuple:
    """The triage keys first (j/k, a, d, s), then by menu, keyed commands first."""
    triage = TRIAGE.index(row.id) if row.id in TRIAGE else len(TRIAGE)
    return (triage, row.menu, not row.keys, row.text)


class ShortcutHelp(QDialog):
    """Every command and its shortcut: the triage keys first, then grouped by menu."""

    def __init__(self, registry: ActionRegistry, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(tr("Keyboard shortcuts"))
        rows = sorted(
            (r for r in rows_of(registry) if r.keys or r.menu),
            key=help_order,
        )
        self.model = CommandsModel([Row(r.id, r.text, r.menu, r.keys, True) for r in rows], self)
        view = _table(self.model, "Keyboard shortcuts", self)
        note = QLabel(self)
        note.setTextFormat(Qt.TextFormat.PlainText)
        note.setWordWrap(True)
        note.setObjectName("Muted")
        note.setText(
            tr("Single-key shortcuts do not fire while you type in a text field. ")
            + (
                tr("They can be switched off in Preferences.")
                if registry.single_keys
                else tr("Single-key shortcuts are switched off (Preferences).")
            )
        )
        layout = QVBoxLayout(self)
        layout.addWidget(view, 1)
        layout.addWidget(note)
        self.resize(560, 560)
