"""The item's comment thread under its detail: who said what and when, and a box to add a
comment (Ctrl+Enter posts).

Comment text is shown as plain text, never markup: controls and bidi overrides are made
visible and a long comment is cut with "Show all" (``BoundedText``), so a hostile 3 MB
comment costs what its preview costs. The thread is read on the task runner; a comment
posted here or by another operator comes back through the change feed (its ``comment``
row names the item: ``reload``), the same path as every other write. What was typed is
kept per item until it is posted, and kept when the post is refused.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QEvent, QObject, Qt, Signal, Slot
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QHBoxLayout,
    QPlainTextEdit,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from proctor.core.models import InboxItem

from ..infra.i18n import tr
from ..infra.tasks import request_id
from ..widgets import fmt
from ..widgets.bounded_text import BoundedText
from ..widgets.labels import plain_label
from ..widgets.message_bar import MessageBar

SHOWN = 200  # the newest comments listed; older ones are counted


def is_post_key(event: QKeyEvent) -> bool:
    """Ctrl+Enter (either Enter key; Cmd on macOS), nothing else held."""
    mods = event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier
    return (
        event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
        and mods == Qt.KeyboardModifier.ControlModifier
    )


class CommentView(QWidget):
    """One comment: its author and time, then its text."""

    def __init__(self, comment: Any, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.comment = comment
        self.head = plain_label(
            tr("{author} · {when}").format(
                author=fmt.bounded(comment.author, 80), when=fmt.when(comment.created_at)
            ),
            self,
            name="Muted",
        )
        self.head.setToolTip(fmt.other(comment.created_at))
        self.body = BoundedText(tr("Comment"), self)
        self.body.set_text(comment.text)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 4)
        layout.addWidget(self.head)
        layout.addWidget(self.body)


class CommentsPanel(QWidget):
    """The thread of the item shown and the box to add to it.

    Signals:
        posted(object): a comment of this desk was written (the Comment).
    """

    posted = Signal(object)

    def __init__(self, ctx: Any, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx  # the detail's DetailContext
        self.item: InboxItem | None = None
        self.comments: list[Any] = []
        self._views: list[CommentView] = []
        self._drafts: dict[str, str] = {}
        self._posting = False
        # the toggle sits in the detail's head row (``DetailWidget``): closed, the thread
        # takes no room from the item's own form
        self.toggle = QToolButton(parent)
        self.toggle.setObjectName("CommentsToggle")
        self.toggle.setCheckable(True)
        self.toggle.setAccessibleName(tr("Show or hide the comments"))
        self.toggle.toggled.connect(self._on_toggled)
        self.area = QWidget(self)
        self.empty = plain_label(tr("No comments yet."), self.area, name="Muted", selectable=False)
        self.older = plain_label("", self.area, name="Muted", selectable=False)
        self.older.hide()
        self.list = QVBoxLayout()
        self.list.setContentsMargins(0, 0, 0, 0)
        self.message = MessageBar(self.area)
        self.box = QPlainTextEdit(self.area)
        self.box.setObjectName("CommentBox")
        self.box.setAccessibleName(tr("New comment"))
        self.box.setPlaceholderText(tr("Add a comment for the other operators (Ctrl+Enter posts)"))
        self.box.setTabChangesFocus(True)
        self.box.setFixedHeight(self.box.fontMetrics().lineSpacing() * 4 + 12)
        self.box.textChanged.connect(self._on_typed)
        self.box.installEventFilter(self)  # Ctrl+Enter posts (never the window's approve)
        self.post_button = QPushButton(tr("Post comment"), self.area)
        self.post_button.setAccessibleName(tr("Post the comment"))
        self.post_button.clicked.connect(self.post)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(self.post_button)
        inner = QVBoxLayout(self.area)
        inner.setContentsMargins(0, 0, 0, 0)
        inner.addWidget(self.older)
        inner.addLayout(self.list)
        inner.addWidget(self.empty)
        inner.addWidget(self.message)
        inner.addWidget(self.box)
        inner.addLayout(row)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 8, 0, 0)
        layout.addWidget(self.area)
        self.hide()
        self._count()
        writable = not ctx.read_only
        self.box.setVisible(writable)
        self.post_button.setVisible(writable)
        self._on_typed()

    # ------------------------------------------------------------ showing
    def show_item(self, item: InboxItem) -> None:
        """Show ``item``'s thread (read now); what was typed for the item left is kept."""
        if self.item is None or self.item.id != item.id or self.item.kind != item.kind:
            self._keep_draft()
            self.item = item
            self.message.clear()
            self._set_comments([])
            self.box.setPlainText(self._drafts.get(self._key(item), ""))
        else:
            self.item = item
        self.reload()

    def reload(self) -> None:
        """Read the thread again (the change feed named this item)."""
        item = self.item
        if item is None:
            return
        comments = self.ctx.journal.comments
        self.ctx.runner.latest(
            "comments",
            lambda: comments.thread(item.id, kind=item.kind.value),
            on_done=self._on_thread,
            on_error=self._on_error,
            owner=self,
        )

    def _on_thread(self, comments: list[Any]) -> None:
        if comments and self.item is not None and comments[0].item_id != self.item.id:
            return  # the thread of an item left since
        self._set_comments(comments)

    def _set_comments(self, comments: list[Any]) -> None:
        if [c.id for c in comments] == [c.id for c in self.comments]:
            return  # nothing new: nothing laid out again
        self.comments = comments
        for view in self._views:
            self.list.removeWidget(view)
            view.deleteLater()
        shown = comments[-SHOWN:]
        self._views = [CommentView(comment, self.area) for comment in shown]
        for view in self._views:
            self.list.addWidget(view)
        hidden = len(comments) - len(shown)
        self.older.setText(tr("{n} earlier comments not shown").format(n=hidden))
        self.older.setVisible(hidden > 0)
        self.empty.setVisible(not comments)
        self._count()

    def _count(self) -> None:
        self.toggle.setText(tr("Comments ({n})").format(n=len(self.comments)))
        self.toggle.setToolTip(
            tr("Hide the comments") if self.toggle.isChecked() else tr("Show the comments")
        )

    def open_thread(self, shown: bool = True) -> None:
        """Show (or hide) the thread and the box; it stays so from item to item."""
        self.toggle.setChecked(shown)

    @Slot(bool)
    def _on_toggled(self, shown: bool) -> None:
        self.setVisible(shown)
        self._count()
        if shown and not self.ctx.read_only:
            self.box.setFocus()

    def views(self) -> list[CommentView]:
        """The comments shown, oldest first."""
        return list(self._views)

    # ------------------------------------------------------------ posting
    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        """In the comment box, Ctrl+Enter is the box's: it posts the comment. The window's
        Ctrl+Enter (approve the item) never fires from here: the shortcut is overridden."""
        if obj is self.box and isinstance(event, QKeyEvent) and is_post_key(event):
            if event.type() == QEvent.Type.ShortcutOverride:
                event.accept()  # delivered to the box as a key press, not as a shortcut
                return True
            if event.type() == QEvent.Type.KeyPress:
                self.post()
                return True
        return super().eventFilter(obj, event)

    @Slot()
    def post(self) -> None:
        """Post what is typed as this operator's comment on the item (one write)."""
        item, text = self.item, self.box.toPlainText()
        if item is None or self.ctx.read_only or self._posting or not text.strip():
            return
        comments, rid = self.ctx.journal.comments, request_id()
        self._posting = True
        self._on_typed()
        self.ctx.runner.run(
            lambda: comments.add(
                item.id, text, kind=item.kind.value, request_id=rid, source="desk"
            ),
            on_done=lambda posted: self._on_posted(item, text, posted),
            on_error=self._on_refused,
            owner=self,
            write=True,
        )

    def _on_posted(self, item: InboxItem, text: str, posted: Any) -> None:
        self._posting = False
        self._drafts.pop(self._key(item), None)
        shown = self.item is not None and self._key(self.item) == self._key(item)
        if shown and self.box.toPlainText() == text:
            self.box.clear()
        self.message.clear()
        self._on_typed()
        self.posted.emit(posted)

    def _on_refused(self, exc: BaseException) -> None:
        self._posting = False  # the text stays in the box
        self._on_typed()
        self._on_error(exc)

    def _on_error(self, exc: BaseException) -> None:
        self.ctx.presenter.present(exc, inline=self.message)

    @Slot()
    def _on_typed(self) -> None:
        self.post_button.setEnabled(
            not self._posting and bool(self.box.toPlainText().strip()) and not self.ctx.read_only
        )

    def _keep_draft(self) -> None:
        if self.item is None:
            return
        text = self.box.toPlainText()
        if text.strip():
            self._drafts[self._key(self.item)] = text
        else:
            self._drafts.pop(self._key(self.item), None)

    @staticmethod
    def _key(item: InboxItem) -> str:
        return f"{item.kind.value}:{item.id}"
