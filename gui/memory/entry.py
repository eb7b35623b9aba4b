"""One memory entry: its content (masked when sensitive), facts, operator edits (edit with
the expected version, pin/unpin, confirm, remove/restore) and its full history, with the
word-level diff of every change."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QItemSelection, Qt, Signal, Slot
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from proctor.core.memory.service import Memory
from proctor.core.models import MemoryEntry, MemoryMutation

from ..decide.reveal import RevealState, RowsModel, is_sensitive, label, mask_text
from ..infra.actions import ActionRegistry
from ..infra.i18n import QT_TR_NOOP, tr
from ..widgets import fmt
from ..widgets.bounded_text import display_text
from ..widgets.dialogs import ReasonDialog
from ..widgets.labels import plain_label, section
from ..widgets.message_bar import Level, MessageBar
from ..widgets.tables import row_table
from ..widgets.text_diff import LINE, TOO_LARGE, WHOLE, Diff, DiffView, whitespace_only

HISTORY_HEADERS = (
    QT_TR_NOOP("Ver."),
    QT_TR_NOOP("When"),
    QT_TR_NOOP("Operation"),
    QT_TR_NOOP("Actor"),
    QT_TR_NOOP("Reason"),
    QT_TR_NOOP("Before → after"),
    QT_TR_NOOP("Source"),
)


@dataclass(frozen=True)
class EntryData:
    entry: MemoryEntry
    history: list[MemoryMutation]


def load_entry(memory: Memory, entry_id: str) -> EntryData:
    return EntryData(memory.get(entry_id), memory.history(entry_id))


def history_cells(m: MemoryMutation) -> tuple[str, ...]:
    return (
        str(m.version),
        fmt.clock(m.created_at),
        label(m.operation),
        m.actor,
        m.reason or "",
        f"{fmt.short(m.before_hash, 8) or '—'} → {fmt.short(m.after_hash, 8)}",
        change_source(m),
    )


def change_source(m: MemoryMutation, *, full: bool = False) -> str:
    """Where a change came from: its run and the event it appended there, when known."""
    if not m.run_id:
        return "—"
    run = m.run_id if full else fmt.short(m.run_id, 12)
    return f"run {run}" + (f" · event #{m.event_sequence:,}" if m.event_sequence else "")


def history_tip(m: MemoryMutation) -> str:
    text = tr(
        "{operation} by {actor} at {when}\nreason: {reason}\nbefore: {before}\nafter: {after}"
    ).format(
        operation=label(m.operation),
        actor=m.actor,
        when=fmt.clock(m.created_at),
        reason=m.reason or "—",
        before=m.before_hash or "—",
        after=m.after_hash or "—",
    )
    if m.run_id:
        text += "\n" + tr("source: {source}").format(source=change_source(m, full=True))
    return text


def facts_text(e: MemoryEntry) -> str:
    flags = [
        f
        for f, on in (
            (tr("pinned"), e.pinned),
            (tr("confirmed"), e.confirmed),
            (tr("removed"), e.deleted),
        )
        if on
    ]
    text = tr(
        "{scope} · {key} · kind {kind} · priority {priority} · trust {trust} · "
        "sensitivity {sensitivity}\nversion {version} · created {created} · updated "
        "{updated}"
    ).format(
        scope=e.scope.value,
        key=fmt.bounded(e.scope_key, 60),
        kind=e.kind,
        priority=e.priority,
        trust=label(e.trust.value),
        sensitivity=e.sensitivity,
        version=e.version,
        created=fmt.clock(e.created_at),
        updated=fmt.clock(e.updated_at),
    )
    if flags:
        text += f" · {', '.join(flags)}"
    if e.use_count:
        return (
            text
            + " · "
            + tr("used {count}× (last {when})").format(
                count=f"{e.use_count:,}", when=fmt.clock(e.last_used_at)
            )
        )
    return text + " · " + tr("never used")


class EntryDetail(QWidget):
    """Signals:
    write_requested(str, object): a label ("Pinned") and a no-argument store call the
        host runs on the task runner (the widget itself never calls the store).
    reveal_requested(str): the operator asked to reveal this sensitive entry id.
    open_run(str): the operator asked to see the entry's source run.
    open_event(str, int): the operator asked to see the run event that made a change.
    buttons_changed(): the buttons were re-enabled for the entry now shown (the
        registry's commands follow them).
    """

    write_requested = Signal(str, object)
    buttons_changed = Signal()
    reveal_requested = Signal(str)
    open_run = Signal(str)
    open_event = Signal(str, int)

    def __init__(
        self,
        memory: Memory,
        reveals: RevealState,
        registry: ActionRegistry,
        parent: QWidget | None = None,
        *,
        read_only: bool = False,
    ) -> None:
        """``registry`` holds the entry's commands (gui/memory/commands.py): its buttons
        are built from them."""
        super().__init__(parent)
        self.registry = registry
        self.memory = memory
        self.reveals = reveals
        self.read_only = read_only
        self.data: EntryData | None = None
        self.edit_base: int | None = None  # the version the open edit started from
        self.message = MessageBar(self)
        self.title = plain_label(parent=self, name="DetailTitle")
        self.title.setAccessibleName(tr("Entry title"))
        self.facts = plain_label(parent=self, name="Muted")
        self.facts.setAccessibleName(tr("Entry facts"))
        self.content = QPlainTextEdit(self)
        self.content.setReadOnly(True)
        self.content.setAccessibleName(tr("Entry content"))
        self.content.setTabChangesFocus(True)
        self.editor = QPlainTextEdit(self)
        self.editor.setAccessibleName(tr("Edit entry content"))
        self.editor.setTabChangesFocus(True)
        self.edit_reason = QLineEdit(self)
        self.edit_reason.setAccessibleName(tr("Reason for the edit"))
        self.edit_reason.setPlaceholderText(tr("Why this change? (optional, kept in the history)"))
        self.history = RowsModel(HISTORY_HEADERS, history_cells, self, tip=history_tip)
        self.history_view = self._history_view()
        self.diff = DiffView("Change in the selected version", self)
        self.diff.compared.connect(self._on_compared)
        self._diffing: MemoryMutation | None = None  # the change whose diff is being shown
        self.diff_note = plain_label(parent=self, name="Muted")
        self._buttons()
        self._build()
        reveals.changed.connect(self._on_revealed)
        self.show_entry(None)

    # ------------------------------------------------------------ building
    def _buttons(self) -> None:
        def button(text: str, name: str, slot: Any) -> QPushButton:
            b = QPushButton(text, self)
            b.setAccessibleName(name)
            b.clicked.connect(slot)
            return b

        registry = self.registry
        self.reveal_button = registry.button("memory.reveal", self)
        self.run_button = button(
            "Open source r&un", "Open the run that wrote this entry", self._on_open_run
        )
        self.edit_button = registry.button("memory.edit", self)
        self.pin_button = registry.button(("memory.pin", "memory.unpin"), self)
        self.confirm_button = registry.button("memory.confirm", self)
        self.remove_button = registry.button(("memory.remove", "memory.restore"), self)
        self.save_button = button("&Save (Ctrl+S)", "Save the edit", self.save_edit)
        self.cancel_button = button("&Cancel edit", "Cancel the edit", self.cancel_edit)
        self.change_run_button = button(
            "Open the run of this change",
            "Open the run that made the selected change",
            self._on_open_change_run,
        )
        save = QShortcut(QKeySequence("Ctrl+S"), self.editor)
        save.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        save.activated.connect(self.save_edit)

    def _history_view(self) -> QTableView:
        view = row_table(self.history, "Entry history", self, (44, 120, 130, 150, 160, 150))
        view.setTabKeyNavigation(False)
        view.setWordWrap(False)
        view.verticalHeader().setDefaultSectionSize(24)
        view.horizontalHeader().setSectionResizeMode(4, QHeaderView.ResizeMode.Stretch)
        view.selectionModel().selectionChanged.connect(self._on_history_selected)
        view.activated.connect(self._on_open_change_run)  # Enter on a change opens its run
        return view

    def _build(self) -> None:
        head = QHBoxLayout()
        head.addWidget(self.title, 1)
        head.addWidget(self.run_button)
        actions = QHBoxLayout()
        for b in (
            self.reveal_button,
            self.edit_button,
            self.pin_button,
            self.confirm_button,
            self.remove_button,
            self.save_button,
            self.cancel_button,
        ):
            actions.addWidget(b)
        actions.addStretch(1)
        top = QWidget(self)
        upper = QVBoxLayout(top)
        upper.setContentsMargins(0, 0, 0, 0)
        upper.addLayout(head)
        upper.addWidget(self.facts)
        upper.addWidget(self.content, 1)
        upper.addWidget(self.editor, 1)
        upper.addWidget(self.edit_reason)
        upper.addLayout(actions)
        bottom = QWidget(self)
        lower = QVBoxLayout(bottom)
        lower.setContentsMargins(0, 0, 0, 0)
        self.history_title = section("History", bottom)
        lower.addWidget(self.history_title)
        lower.addWidget(self.history_view, 1)
        note_row = QHBoxLayout()
        note_row.addWidget(self.diff_note, 1)
        note_row.addWidget(self.change_run_button)
        lower.addLayout(note_row)
        lower.addWidget(self.diff, 2)
        split = QSplitter(Qt.Orientation.Vertical, self)
        split.addWidget(top)
        split.addWidget(bottom)
        split.setChildrenCollapsible(False)
        split.setStretchFactor(0, 2)
        split.setStretchFactor(1, 3)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.message)
        layout.addWidget(split, 1)

    # ------------------------------------------------------------ showing
    def entry(self) -> MemoryEntry | None:
        return self.data.entry if self.data else None

    def show_entry(self, data: EntryData | None) -> None:
        previous = self.entry()
        if data is None or previous is None or previous.id != data.entry.id:
            self.message.clear()
            self._end_edit()
        elif (
            self.editing()
            and data.entry.version != self.edit_base
            and data.entry.version != previous.version
        ):
            self.message.show_message(
                tr(
                    "The entry changed while you were editing (version {edit_base} → {version}, "
                    "{operation} by {actor}). Saving now is refused; copy your text, cancel, and "
                    "edit the new version."
                ).format(
                    edit_base=self.edit_base,
                    version=data.entry.version,
                    operation=label(data.history[-1].operation),
                    actor=data.history[-1].actor,
                ),
                Level.WARNING,
            )
        self.data = data
        e = data.entry if data else None
        self.title.setText(fmt.bounded(e.title, 160) if e else tr("Select an entry"))
        self.facts.setText(facts_text(e) if e else "")
        self.run_button.setVisible(bool(e and e.source_run_id))
        self._show_content()
        row = self.history_view.currentIndex().row()
        self.history.set_rows(data.history if data else [])
        self.history_title.setText(
            tr("History ({history} changes)").format(history=len(data.history))
            if data
            else tr("History")
        )
        if data and data.history:
            self.history_view.selectRow(
                row if 0 <= row < len(data.history) else len(data.history) - 1
            )
        else:
            self.diff.show_text("")
            self.diff_note.setText("")
            self.change_run_button.hide()
        self._update_buttons()

    def _show_content(self) -> None:
        e = self.entry()
        shown = self.reveals.shows(e)
        self.content.setPlainText(
            display_text(e.content) if e and shown else mask_text(e) if e else ""
        )

    # ------------------------------------------------------------ what may be done now
    def _writable(self) -> bool:
        return self.entry() is not None and not self.read_only and not self.editing()

    def can_edit(self) -> bool:
        e = self.entry()
        return e is not None and self._writable() and self.reveals.shows(e) and not e.deleted

    def can_flag(self) -> bool:
        """Pin, unpin, remove, restore."""
        return self._writable()

    def can_confirm(self) -> bool:
        e = self.entry()
        return e is not None and self._writable() and self.reveals.shows(e) and not e.confirmed

    def hides(self) -> bool:
        e = self.entry()
        return e is not None and not self.reveals.shows(e)

    def can_reveal(self) -> bool:
        return self.hides() and not self.read_only

    def _update_buttons(self) -> None:
        editing = self.editing()
        for w in (self.editor, self.edit_reason, self.save_button, self.cancel_button):
            w.setVisible(editing)
        self.content.setVisible(not editing)
        self.buttons_changed.emit()  # the commands, and the buttons built from them

    def selected_change(self) -> MemoryMutation | None:
        rows = self.history_view.selectionModel().selectedRows()
        return self.history.item(rows[0].row()) if rows else None

    @Slot(QItemSelection, QItemSelection)
    def _on_history_selected(self, *_: Any) -> None:
        m = self.selected_change()
        self.change_run_button.setVisible(bool(m and m.run_id))
        self.change_run_button.setText(
            tr("Open the run of this change (event #{event_sequence:,})").format(
                event_sequence=m.event_sequence
            )
            if m and m.event_sequence
            else tr("Open the run of this change")
        )
        if m is None:
            return
        if not self.reveals.shows(self.entry()):
            self._diffing = None
            self.diff.show_text("Hidden until the entry is revealed.")
            self.diff_note.setText("")
            return
        self._diffing = m
        self.diff_note.setText(
            tr("Version {version}: comparing with the version before…").format(version=m.version)
        )
        self.diff.compare(m.before_content or "", m.after_content or "")  # off the GUI thread

    @Slot(object)
    def _on_compared(self, diff: Diff) -> None:
        m = self._diffing
        if m is None or m is not self.selected_change():
            return
        if m.before_content is None:
            note = f"Version {m.version}: first version."
        elif m.before_hash == m.after_hash:
            note = f"Version {m.version}: content unchanged ({label(m.operation)})."
        elif diff.level == WHOLE:
            note = f"Version {m.version}: {TOO_LARGE}"
        elif whitespace_only(diff.pieces):
            note = f"Version {m.version}: only white space changed (marked ↵ at line ends)."
        else:
            note = f"Version {m.version}: deleted words struck out, new words highlighted."
            if diff.level == LINE:
                note += " Blocks too large to compare word by word are marked whole."
        self.diff_note.setText(note)

    @Slot(str)
    def _on_revealed(self, entry_id: str) -> None:
        e = self.entry()
        if e is not None and e.id == entry_id:
            self._show_content()
            self._update_buttons()
            self._on_history_selected()

    # ------------------------------------------------------------ editing
    def editing(self) -> bool:
        return self.edit_base is not None

    @Slot()
    def start_edit(self) -> None:
        e = self.entry()
        if e is None or not self.can_edit():
            return
        self.edit_base = e.version
        self.editor.setPlainText(e.content)
        self.edit_reason.clear()
        self._update_buttons()
        self.editor.setFocus()

    @Slot()
    def save_edit(self) -> None:
        e = self.entry()
        if e is None or not self.editing():
            return
        text = self.editor.toPlainText()
        if not text.strip():
            self.message.show_message(
                tr("The content cannot be empty; remove the entry instead."), Level.WARNING
            )
            return
        memory, base, reason = self.memory, self.edit_base, self.edit_reason.text().strip()
        assert base is not None  # editing()
        self.write_requested.emit(
            "Saved",
            lambda: memory.replace(e.id, text, expected_version=base, reason=reason or None),
        )

    @Slot()
    def cancel_edit(self) -> None:
        self._end_edit()
        self._update_buttons()
        self.content.setFocus()

    def _end_edit(self) -> None:
        self.edit_base = None
        self.editor.clear()
        self.edit_reason.clear()

    def edit_saved(self) -> None:
        """The host's save succeeded: leave edit mode."""
        self.cancel_edit()

    # ------------------------------------------------------------ other writes
    def toggle_pin(self) -> None:
        e = self.entry()
        if e is None or not self.can_flag():
            return
        memory, pinned = self.memory, not e.pinned
        self.write_requested.emit(
            "Pinned" if pinned else "Unpinned",
            lambda: memory.pin(e.id, pinned, expected_version=e.version),
        )

    def confirm(self) -> None:
        e = self.entry()
        if e is None or not self.can_confirm():
            return
        memory = self.memory
        self.write_requested.emit(
            "Confirmed",
            lambda: memory.confirm(
                e.id, expected_version=e.version, reason="confirmed at the desk"
            ),
        )

    def remove_or_restore(self) -> None:
        e = self.entry()
        if e is None or not self.can_flag():
            return
        memory = self.memory
        if e.deleted:
            self.write_requested.emit(
                "Restored",
                lambda: memory.restore(
                    e.id, expected_version=e.version, reason="restored at the desk"
                ),
            )
            return
        reason = ReasonDialog.ask(
            self,
            tr("Remove memory entry"),
            tr(
                "Remove “{title}”? Agents stop seeing it. Every version is "
                "kept and it can be restored."
            ).format(title=fmt.bounded(e.title, 80)),
            ok=tr("Remove"),
            required=False,
        )
        if reason is None:
            return
        self.write_requested.emit(
            "Removed",
            lambda: memory.remove(e.id, expected_version=e.version, reason=reason or None),
        )

    def reveal(self) -> None:
        e = self.entry()
        if e is not None and is_sensitive(e.sensitivity) and not self.read_only:
            self.reveal_requested.emit(e.id)

    @Slot()
    def _on_open_change_run(self, *_: Any) -> None:
        m = self.selected_change()
        if m is not None and m.run_id and m.event_sequence:
            self.open_event.emit(m.run_id, m.event_sequence)
        elif m is not None and m.run_id:
            self.open_run.emit(m.run_id)

    @Slot()
    def _on_open_run(self) -> None:
        e = self.entry()
        if e is not None and e.source_run_id:
            self.open_run.emit(e.source_run_id)
