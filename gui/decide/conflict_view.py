"""Review of one memory conflict: local vs incoming side by side with word-level
highlighting, the field differences, and the form to resolve it (keep local, take
incoming, merge in an editor pre-filled with both versions, dismiss — with a reason).

Used by the Memory page and by the inbox detail of kind "memory". The widget never writes:
it emits ``resolve_requested`` and the host runs the store call built by ``resolve_call``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from PySide6.QtCore import Signal, Slot
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from proctor.core.memory.service import Memory, content_hash
from proctor.core.models import Conflict, ConflictStatus, MemoryEntry

from ..infra.actions import ActionRegistry
from ..infra.i18n import tr
from ..infra.tasks import PresentationPool, Ticket
from ..widgets import fmt
from ..widgets.labels import plain_label, plain_tip, section
from ..widgets.message_bar import Level, MessageBar
from ..widgets.text_diff import (
    TOO_LARGE,
    WHOLE,
    Budget,
    Diff,
    DiffView,
    diff_texts,
    line_blocks,
    whitespace_only,
)
from .reveal import RevealState, RowsModel, is_sensitive, label, request_id

CHOICE_TEXT = {
    ConflictStatus.ACCEPTED_LOCAL: "Kept local",
    ConflictStatus.ACCEPTED_INCOMING: "Took incoming",
    ConflictStatus.MERGED: "Merged",
    ConflictStatus.DISMISSED: "Dismissed",
}
CHANGES_CONTENT = (ConflictStatus.ACCEPTED_INCOMING, ConflictStatus.MERGED)
MERGE_NOTE = (
    "The editor holds both versions of every changed line, local first. Edit it "
    "down to the text the entry should have, then save the merge."
)


@dataclass(frozen=True)
class ConflictData:
    item: Conflict
    entry: MemoryEntry


def load_conflict(memory: Memory, item_id: str) -> ConflictData:
    """Runs on the task runner: the item and its entry now. The diff between them is
    presentation work: the review makes it on the presentation pool (``start_diff``), never
    in the store's task runner, so store calls never wait behind it."""
    item = memory.conflict(item_id)
    return ConflictData(item, memory.get(item.entry_id))


def union_merge(local: str, incoming: str, budget: Budget | None = None) -> str:
    """Both versions of every changed line, local first (like ``git merge-file --union``);
    both texts whole, local first, when they are too large to compare line by line."""
    blocks = line_blocks(local, incoming, budget)
    if blocks is None:
        blocks = [("replace", local, incoming)]
    out: list[str] = []
    for tag, left, right in blocks:
        if tag == "equal":
            out.append(left)
            continue
        lines = (left.splitlines(keepends=True) if tag != "insert" else []) + (
            right.splitlines(keepends=True) if tag != "delete" else []
        )
        out += [
            line if line.endswith("\n") or n == len(lines) - 1 else line + "\n"
            for n, line in enumerate(lines)
        ]
    text = "".join(out)
    return text if text.strip() else incoming


def compare_conflict(local: str, incoming: str, ticket: Ticket) -> tuple[Diff, str]:
    """Presentation work (on the presentation pool): the word diff and the union merge."""
    budget = Budget(cancelled=ticket.cancelled)
    return diff_texts(local, incoming, budget=budget), union_merge(local, incoming, budget)


def masking_sensitivity(data: ConflictData) -> str:
    """The sensitivity that hides the two versions: the entry's, else the incoming one's."""
    incoming = data.item.incoming_sensitivity
    if incoming is not None and is_sensitive(incoming) and not is_sensitive(data.entry.sensitivity):
        return incoming
    return data.entry.sensitivity


def shows_conflict(reveals: RevealState, data: ConflictData) -> bool:
    """Both versions may be shown: the entry is not sensitive (or revealed) and the incoming
    version does not claim a sensitivity the entry lacks (or the entry was revealed)."""
    return reveals.shows(data.entry) and (
        not is_sensitive(data.item.incoming_sensitivity) or data.entry.id in reveals
    )


def resolve_call(
    memory: Memory, data: ConflictData, choice: ConflictStatus, merged: str | None, reason: str
) -> Callable[[], Any]:
    """The store call for one resolution (its own request id, so a retry is idempotent).
    Choices that change the content are refused if the entry moved past the version shown."""
    rid, item = request_id(), data.item
    if choice in CHANGES_CONTENT:
        version = data.entry.version
        return lambda: memory.resolve_seen(
            item.id,
            choice,
            expected_version=item.version,
            entry_version=version,
            merged_content=merged,
            reason=reason,
            request_id=rid,
        )
    return lambda: memory.resolve(
        item.id, choice, expected_version=item.version, reason=reason, request_id=rid
    )


NOT_CARRIED = "not carried (stays)"
CARRIES_NOTE = (
    "Take incoming applies the incoming text and every field it carries (the bold "
    "rows differ); a field it does not carry stays as it is. Keep local, Merge and "
    "Dismiss keep the local fields."
)


def _field(
    name: str, local: Any, incoming: Any, show: Callable[[Any], str] = str
) -> tuple[str, str, str, bool]:
    """One field's row: ``incoming`` None means the incoming version does not carry it."""
    if incoming is None:
        return (name, show(local), NOT_CARRIED, False)
    differs = incoming != local
    return (name, show(local), show(incoming) if differs else "same", differs)


def field_rows(data: ConflictData) -> list[tuple[str, str, str, bool]]:
    """(field, local, incoming, differs): local is the entry now; incoming is what the
    incoming version carries ("same" when equal, NOT_CARRIED when it has no such field)."""
    e, item = data.entry, data.item
    local_len, in_len = len(e.content), len(item.incoming_content)
    moved = e.version != item.local_version
    return [
        (
            "Version",
            f"{e.version}" + (f" (conflict recorded at {item.local_version})" if moved else ""),
            "new version if taken",
            moved,
        ),
        (
            "Source",
            f"run {e.source_run_id}" if e.source_run_id else "—",
            f"{item.incoming_source}" + (f" · run {item.run_id}" if item.run_id else ""),
            True,
        ),
        _field("Kind", e.kind, item.incoming_kind),
        _field("Priority", e.priority, item.incoming_priority),
        _field("Trust", e.trust, item.incoming_trust, lambda t: label(t.value)),
        _field("Sensitivity", e.sensitivity, item.incoming_sensitivity),
        ("Length", f"{local_len:,} characters", f"{in_len:,} characters", local_len != in_len),
        (
            "Content hash",
            fmt.short(e.content_hash, 16),
            fmt.short(content_hash(item.incoming_content), 16),
            e.content_hash != content_hash(item.incoming_content),
        ),
    ]


class ConflictReview(QWidget):
    """Signals:
    resolve_requested(object, object, str): choice (ReconciliationStatus), merged text
        (str or None), reason — the operator asked to resolve the conflict shown.
    reveal_requested(str): the operator asked to reveal the (sensitive) entry id.
    open_run(str): the operator asked to see a run.
    buttons_changed(): the resolve buttons were re-enabled (the registry follows).
    """

    resolve_requested = Signal(object, object, str)
    buttons_changed = Signal()
    reveal_requested = Signal(str)
    open_run = Signal(str)

    def __init__(
        self,
        reveals: RevealState,
        registry: ActionRegistry,
        prefix: str,
        parent: QWidget | None = None,
        *,
        read_only: bool = False,
    ) -> None:
        """``registry`` holds the resolve commands under ``prefix`` (gui/memory/commands.py
        ``resolve_commands``): the review's buttons are built from them."""
        super().__init__(parent)
        self.registry, self.prefix = registry, prefix
        self.reveals = reveals
        self.read_only = read_only
        self.data: ConflictData | None = None
        self.expected: str | None = None  # the conflict asked for (None: whatever is shown)
        self.diff: Diff | None = None  # of the versions shown, once made
        self._union: str | None = None  # their union merge, made with the diff
        self._diff_key: tuple[str, str] | None = None
        self._ticket: Ticket | None = None  # the diff being made
        self.seen_version: int | None = None  # entry version the operator has been shown
        self.notice = MessageBar(self)
        self.state = plain_label(parent=self)
        self.state.setAccessibleName(tr("Conflict state"))
        self.summary = plain_label(parent=self, name="Muted")
        self.fields = RowsModel(
            ("Field", "Local", "Incoming"),
            lambda r: r[:3],
            self,
            tip=lambda r: f"{r[0]}: {r[1]} | {r[2]}",
            bold=lambda r: r[3],
        )
        self.fields_view = self._fields_view()
        self.local_title = section("Local", self)
        self.incoming_title = section("Incoming", self)
        for title in (self.local_title, self.incoming_title):  # long titles never widen a side
            title.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.local = DiffView("Local version (deleted words highlighted)", self, side="old")
        self.incoming = DiffView("Incoming version (new words highlighted)", self, side="new")
        for view in (self.local, self.incoming):
            view.setMinimumHeight(160)
        self.local.verticalScrollBar().valueChanged.connect(self._sync_from_local)
        self.reveal_button = registry.button(f"{prefix}.reveal", self)
        self.reveal_button.setText(tr("Reve&al sensitive content"))
        self.run_button = QPushButton(tr("Open the incoming r&un"), self)
        self.run_button.clicked.connect(self._on_open_run)
        self.form = self._build_form()
        self._build()
        reveals.changed.connect(self._on_revealed)
        self.set_enabled_actions()

    # ------------------------------------------------------------ building
    def _fields_view(self) -> QTableView:
        view = QTableView(self)
        view.setModel(self.fields)
        view.setAccessibleName(tr("Field differences"))
        view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        view.setTabKeyNavigation(False)
        view.verticalHeader().hide()
        view.setShowGrid(False)
        view.setWordWrap(False)
        view.verticalHeader().setDefaultSectionSize(24)
        view.setMaximumHeight(8 * 24 + 30)
        header = view.horizontalHeader()
        header.resizeSection(0, 110)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        return view

    def _build(self) -> None:
        sides = QHBoxLayout()
        for title, view in ((self.local_title, self.local), (self.incoming_title, self.incoming)):
            column = QVBoxLayout()
            column.addWidget(title)
            column.addWidget(view, 1)
            sides.addLayout(column, 1)
        buttons = QHBoxLayout()
        buttons.addWidget(self.reveal_button)
        buttons.addWidget(self.run_button)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.notice)
        layout.addWidget(self.state)
        layout.addWidget(self.summary)
        layout.addLayout(sides, 3)
        layout.addLayout(buttons)
        layout.addWidget(section("Field differences", self))
        layout.addWidget(self.fields_view, 1)
        layout.addWidget(plain_label(CARRIES_NOTE, self, name="Muted"))

    def _build_form(self) -> QWidget:
        form = QWidget(self)
        self.merge_note = plain_label(MERGE_NOTE, form, name="Muted")
        self.merge_editor = QPlainTextEdit(form)
        self.merge_editor.setAccessibleName(tr("Merged text"))
        self.merge_editor.setTabChangesFocus(True)
        self.merge_editor.setMinimumHeight(120)
        self.reason = QPlainTextEdit(form)
        self.reason.setAccessibleName(tr("Resolution reason"))
        self.reason.setPlaceholderText(tr("Why this version? (required; kept in the audit log)"))
        self.reason.setTabChangesFocus(True)
        self.reason.setMaximumHeight(60)
        prefix = self.prefix
        self.keep_button = self.registry.button(f"{prefix}.keep", form)
        self.take_button = self.registry.button(f"{prefix}.take", form)
        self.merge_button = self.registry.button(f"{prefix}.merge", form)
        self.dismiss_button = self.registry.button(f"{prefix}.dismiss", form)
        self.cancel_merge = QPushButton(tr("Cancel merge"), form)
        self.cancel_merge.clicked.connect(self.close_merge)
        row = QHBoxLayout()
        for button in (
            self.keep_button,
            self.take_button,
            self.merge_button,
            self.dismiss_button,
            self.cancel_merge,
        ):
            row.addWidget(button)
        row.addStretch(1)
        box = QVBoxLayout(form)
        box.setContentsMargins(8, 4, 8, 8)
        box.addWidget(section("Resolve", form))
        box.addWidget(self.merge_note)
        box.addWidget(self.merge_editor, 1)
        box.addWidget(self.reason)
        box.addLayout(row)
        self.close_merge()
        return form

    # ------------------------------------------------------------ showing
    def show_conflict(self, data: ConflictData) -> None:
        """Show ``data``; if the entry moved on since this conflict was shown, say so."""
        same = self.data is not None and self.data.item.id == data.item.id
        if not same:
            self.notice.clear()
            self.seen_version = data.entry.version
        elif (
            self.seen_version is not None
            and data.entry.version != self.seen_version
            and data.item.status == ConflictStatus.PENDING
        ):
            self.notice.show_message(
                tr(
                    "The entry changed while you were reviewing: version {seen_version} → "
                    "{version}. “Local” now shows version {version}; check the differences again "
                    "before you resolve."
                ).format(seen_version=self.seen_version, version=data.entry.version),
                Level.WARNING,
            )
            self.seen_version = data.entry.version
        self.data = data
        item, entry = data.item, data.entry
        self.local_title.setText(
            tr("Local — the entry now (version {version})").format(version=entry.version)
        )
        self.incoming_title.setText(
            tr("Incoming — from {incoming_source}").format(
                incoming_source=fmt.bounded(item.incoming_source, 60)
            )
        )
        self.incoming_title.setToolTip(plain_tip(item.incoming_source))
        self.summary.setText(self._summary(data))
        self.fields.set_rows(field_rows(data))
        self.run_button.setVisible(bool(item.run_id))
        self._show_sides()
        self._show_state()
        self.set_enabled_actions()

    def _summary(self, data: ConflictData) -> str:
        text = (
            f"“{fmt.bounded(data.item.title, 100)}” · {data.item.scope.value} "
            f"{fmt.bounded(data.item.scope_key, 60)} · {data.entry.kind}"
        )
        if data.entry.version != data.item.local_version:
            text += (
                f"\nThe entry moved on after this conflict was recorded (recorded "
                f"against version {data.item.local_version}, now {data.entry.version})."
            )
        diff = self.diff if self._diff_key == self._versions(data) else None
        if diff is None:
            return text
        if diff.level == WHOLE:
            text += "\n" + TOO_LARGE
        elif whitespace_only(diff.pieces):
            text += "\nOnly white space differs."
        elif not diff.changed:
            text += "\nThe two versions are identical."
        return text

    @staticmethod
    def _versions(data: ConflictData) -> tuple[str, str]:
        return data.entry.content, data.item.incoming_content

    def comparing(self) -> bool:
        """True while the diff of the versions shown is being made."""
        return self._ticket is not None

    def cancel_diff(self) -> None:
        if self._ticket is not None:
            self._ticket.cancel()
            self._ticket = None

    def _compare(self, data: ConflictData) -> None:
        """Show the diff of ``data``'s versions, making it on the presentation pool (the
        one in progress for other versions is cancelled: the operator moved on)."""
        key = self._versions(data)
        if key == self._diff_key and self.diff is not None:
            self.local.show_diff(self.diff)
            self.incoming.show_diff(self.diff)
            return
        if key == self._diff_key and self.comparing():
            return
        self.cancel_diff()
        self.diff, self._union, self._diff_key = None, None, key
        self.local.expect(*key)
        self.incoming.expect(*key)
        self._ticket = PresentationPool.instance().run(
            partial(compare_conflict, *key), on_done=self._on_compared, owner=self
        )

    def _on_compared(self, result: tuple[Diff, str]) -> None:
        self._ticket = None
        diff, self._union = result
        self.diff = diff
        self.local.show_diff(diff)
        self.incoming.show_diff(diff)
        if self.data is not None:
            self.summary.setText(self._summary(self.data))
        self.set_enabled_actions()

    def _show_sides(self) -> None:
        data = self.data
        if data is None:
            return
        if self.hides():
            self.cancel_diff()
            self._diff_key = None
            marked = fmt.bounded(masking_sensitivity(data), 40)
            masked = (
                f"Hidden: the entry is marked “{marked}”. Reveal it to compare the "
                "versions; the reveal is audited."
            )
            self.local.show_text(masked)
            self.incoming.show_text(masked)
        else:
            self._compare(data)

    def _show_state(self) -> None:
        item = self.data.item if self.data else None
        if item is None:
            return
        if item.status == ConflictStatus.PENDING:
            self.state.setText(
                tr("Pending for {created_at} · from {incoming_source}").format(
                    created_at=fmt.age(item.created_at),
                    incoming_source=fmt.bounded(item.incoming_source, 80),
                )
            )
            return
        text = f"{CHOICE_TEXT.get(item.status, item.status.value)} by {item.resolved_by}"
        text += f" at {fmt.clock(item.resolved_at)}"
        if item.resolution_reason:
            text += f": {fmt.bounded(item.resolution_reason, 300)}"
        self.state.setText(text)
        self.close_merge()

    def tick(self) -> None:
        """Once a second while shown: the waiting time moves on."""
        if self.is_pending():
            self._show_state()

    def expect(self, item_id: str | None) -> None:
        """The conflict ``item_id`` was asked for: until its read lands, the one still on
        screen cannot be resolved (with the reason typed for the next one)."""
        self.expected = item_id
        self.set_enabled_actions()

    def is_pending(self) -> bool:
        """The conflict shown is the one asked for, and pending."""
        return (
            self.data is not None
            and self.data.item.status == ConflictStatus.PENDING
            and self.expected in (None, self.data.item.id)
        )

    def can(self, choice: ConflictStatus) -> bool:
        """Whether ``choice`` may be asked for now: a pending conflict on a writable desk;
        nobody takes or merges what they cannot read (yet): hidden, or not compared."""
        if not self.is_pending() or self.read_only:
            return False
        if choice in (ConflictStatus.ACCEPTED_LOCAL, ConflictStatus.DISMISSED):
            return True
        return not self.hides() and not self.comparing()

    def hides(self) -> bool:
        """The conflict shown is sensitive and not revealed."""
        return self.data is not None and not shows_conflict(self.reveals, self.data)

    def can_reveal(self) -> bool:
        return self.hides() and not self.read_only

    def set_enabled_actions(self) -> None:
        self.reason.setEnabled(self.is_pending() and not self.read_only)
        self.buttons_changed.emit()  # the commands, and the buttons built from them

    # ------------------------------------------------------------ drafts
    def draft(self) -> tuple[str | None, str]:
        merged = self.merge_editor.toPlainText() if self.merging() else None
        return merged, self.reason.toPlainText()

    def set_draft(self, merged: str | None, reason: str) -> None:
        self.reason.setPlainText(reason)
        if merged is None:
            self.close_merge()
        else:
            self.open_merge(merged)

    def clear_draft(self) -> None:
        self.set_draft(None, "")

    # ------------------------------------------------------------ merge editor
    def open_merge(self, text: str | None = None) -> None:
        if text is None and self.data is not None:
            made = self._union if self._diff_key == self._versions(self.data) else None
            text = (
                made
                if made is not None
                else union_merge(  # not compared: coarse, bounded
                    self.data.entry.content, self.data.item.incoming_content, Budget(50_000)
                )
            )
        if text is not None:
            self.merge_editor.setPlainText(text)
        for widget in (self.merge_note, self.merge_editor, self.cancel_merge):
            widget.setVisible(True)
        self.merge_button.setText(tr("Save &merge"))
        self.merge_button.setAccessibleName(tr("Save merge"))

    @Slot()
    def close_merge(self) -> None:
        for widget in (self.merge_note, self.merge_editor, self.cancel_merge):
            widget.setVisible(False)
        self.merge_editor.clear()
        self.merge_button.setText(tr("&Merge…"))
        self.merge_button.setAccessibleName(tr("Merge"))

    def merging(self) -> bool:
        return not self.merge_editor.isHidden()

    # ------------------------------------------------------------ actions
    def merge(self) -> None:
        """Open the merge editor; once open, ask for the merge written there."""
        if not self.merging():
            self.open_merge()
            self.merge_editor.setFocus()
            return
        self.request(ConflictStatus.MERGED)

    def request(self, choice: ConflictStatus) -> bool:
        """Validate the form and emit ``resolve_requested``; False (and say why) if not."""
        if not self.is_pending() or self.read_only:
            return False
        reason = self.reason.toPlainText().strip()
        merged = self.merge_editor.toPlainText() if choice == ConflictStatus.MERGED else None
        if merged is not None and not merged.strip():
            self.notice.show_message(
                tr("The merged text is empty. Write the entry's text, or choose another way."),
                Level.WARNING,
            )
            self.merge_editor.setFocus()
            return False
        if not reason:
            self.notice.show_message(
                tr("Write a reason first: it is kept with the decision."), Level.WARNING
            )
            self.reason.setFocus()
            return False
        self.resolve_requested.emit(choice, merged, reason)
        return True

    def reveal(self) -> None:
        if self.data is not None:
            self.reveal_requested.emit(self.data.entry.id)

    @Slot(str)
    def _on_revealed(self, entry_id: str) -> None:
        if self.data is not None and self.data.entry.id == entry_id:
            self._show_sides()
            self.set_enabled_actions()

    @Slot()
    def _on_open_run(self) -> None:
        if self.data is not None and self.data.item.run_id:
            self.open_run.emit(self.data.item.run_id)

    @Slot(int)
    def _sync_from_local(self, value: int) -> None:
        src, dst = self.local.verticalScrollBar(), self.incoming.verticalScrollBar()
        if src.maximum() > 0:
            dst.setValue(round(value / src.maximum() * dst.maximum()))
