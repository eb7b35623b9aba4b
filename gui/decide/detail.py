"""The detail pane: one widget class per inbox kind (pluggable: ``DETAIL_WIDGETS``).

A detail widget shows the inbox row at once, then loads the whole entity on the task
runner. It keeps the operator's typed text per item (drafts), so a refused or stale
click never loses it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, ClassVar

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QPushButton,
    QScrollArea,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from proctor.core import Journal
from proctor.core.kernel.origin import describe
from proctor.core.models import InboxItem, InboxKind

from ..infra.actions import ActionRegistry
from ..infra.errors import ErrorPresenter
from ..infra.i18n import tr
from ..infra.settings import DeskSettings
from ..infra.tasks import TaskRunner
from ..infra.time_mode import time_mode
from ..widgets import fmt
from ..widgets.icons import kind_icon
from ..widgets.labels import plain_label
from ..widgets.message_bar import MessageBar
from .comments import CommentsPanel
from .decider import Decider
from .items import waiter_text
from .settle import Settle


@dataclass
class DetailContext:
    journal: Journal
    runner: TaskRunner
    presenter: ErrorPresenter
    registry: ActionRegistry
    decider: Decider
    read_only: bool
    settings: DeskSettings | None = None  # credential references are kept there
    settle: Settle | None = None  # the inbox's: is a decision now a deliberate one?


def origin_text(item: InboxItem) -> str:
    """ "From mcp · refund_agent (pid 4242 on host-a) · tool request_approval (as the agent
    reports it)": agent text, escaped and bounded by ``fmt.bounded``."""
    if item.origin is None:
        return tr("From: not reported")
    return tr("From {origin} (as the agent reports it)").format(
        origin=fmt.bounded(describe(item.origin), 300)
    )


class DetailWidget(QWidget):
    """Base of every kind's detail view.

    Signals:
        open_run(str): the operator asked to see the run (run id).
        loaded(object): the whole entity of the shown item is on screen (the InboxItem).
    """

    open_run = Signal(str)
    loaded = Signal(object)
    kind: ClassVar[InboxKind]

    def __init__(self, ctx: DetailContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.item: InboxItem | None = None
        self.entity: Any = None
        self.message = MessageBar(self)
        self.title = plain_label(parent=self, name="DetailTitle")
        self.title.setAccessibleName(tr("Item title"))
        self.icon = plain_label(parent=self, selectable=False)
        self.subtitle = plain_label(parent=self, name="Muted")
        self.origin = plain_label(parent=self, name="Muted")
        self.origin.setAccessibleName(tr("Where the request came from, as the agent reports it"))
        self.waiter = plain_label(parent=self, name="Muted")
        self.waiter.setAccessibleName(tr("Whether the requesting agent waits for an answer"))
        self.run_button = QPushButton(tr("Open run"), self)
        self.run_button.setAccessibleName(tr("Open the run this item belongs to"))
        self.run_button.clicked.connect(self._on_open_run)
        time_mode().changed.connect(self._on_time_mode)
        self.body = QVBoxLayout()
        self.comments = CommentsPanel(ctx, self)  # the item's thread, under its body
        self._build_frame()

    def _build_frame(self) -> None:
        head = QHBoxLayout()
        head.addWidget(self.icon)
        head.addWidget(self.title, 1)
        head.addWidget(self.comments.toggle)
        head.addWidget(self.run_button)
        content = QWidget(self)
        inner = QVBoxLayout(content)
        inner.addLayout(head)
        inner.addWidget(self.subtitle)
        inner.addWidget(self.origin)
        inner.addWidget(self.waiter)
        inner.addLayout(self.body)
        inner.addWidget(self.comments)
        inner.addStretch(1)
        scroll = QScrollArea(self)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setWidget(content)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(self.message)
        outer.addWidget(scroll, 1)
        outer.addLayout(self.footer())

    def footer(self) -> QVBoxLayout:
        """Subclasses put their decision form here (stays visible while the body scrolls)."""
        return QVBoxLayout()

    # ------------------------------------------------------------ showing
    def show_item(self, item: InboxItem) -> None:
        """Show ``item`` now from the inbox row, then load the whole entity."""
        same = self.item is not None and self.item.id == item.id
        if not same:
            self.leave_item()
            self.message.clear()
            self.entity = None
        self.item = item
        self.icon.setPixmap(kind_icon(item.kind.value).pixmap(28, 28))
        self.show_requested()
        self.origin.setText(origin_text(item))
        self.origin.setToolTip(fmt.bounded(describe(item.origin), 1000) if item.origin else "")
        self.run_button.setVisible(bool(item.run_id))
        self.show_waiter()
        self.show_row(item)
        if not same:
            self.enter_item(item)
        self.comments.show_item(item)
        self.reload()

    def show_waiter(self) -> None:
        """Whether the requesting agent waits for the item now (approvals and questions)."""
        text = "" if self.item is None else waiter_text(self.item, time.time())
        self.waiter.setText(text)
        self.waiter.setVisible(bool(text))

    def reload(self) -> None:
        if self.item is None:
            return
        self.ctx.runner.latest(
            "detail",
            self.fetcher(self.item),
            on_done=self._on_loaded,
            on_error=self._on_load_error,
            owner=self,
        )

    def _on_loaded(self, data: Any) -> None:
        self.show_entity(data)
        if self.item is not None:
            self.loaded.emit(self.item)

    def _on_load_error(self, exc: BaseException) -> None:
        self.ctx.presenter.present(exc, inline=self.message)

    @Slot()
    def _on_open_run(self) -> None:
        if self.item is not None and self.item.run_id:
            self.open_run.emit(self.item.run_id)

    # ------------------------------------------------------------ for subclasses
    def show_row(self, item: InboxItem) -> None:
        self.title.setText(fmt.bounded(item.summary, 200))

    def fetcher(self, item: InboxItem) -> Any:
        """A no-argument callable run on the task runner; its result goes to show_entity."""
        raise NotImplementedError

    def show_entity(self, data: Any) -> None:
        raise NotImplementedError

    def enter_item(self, item: InboxItem) -> None:
        """Restore drafts for ``item``."""

    def leave_item(self) -> None:
        """Save drafts of the item being left."""

    def show_requested(self) -> None:
        """Who asked and when (relative or absolute, as chosen; the tooltip: the other)."""
        item = self.item
        if item is None:
            return
        self.subtitle.setText(
            tr("{agent} · {project}/{space} · requested {created_at}").format(
                agent=item.agent,
                project=item.project,
                space=item.space,
                created_at=fmt.when(item.created_at),
            )
        )
        self.subtitle.setToolTip(tr("requested {when}").format(when=fmt.other(item.created_at)))

    @Slot()
    def _on_time_mode(self) -> None:
        self.show_requested()
        self.tick()

    def tick(self) -> None:
        """Once a second: refresh countdowns."""

    def focus_primary(self) -> None:
        self.setFocus()

    def show_refusal(self, exc: BaseException) -> None:
        self.ctx.presenter.present(exc, inline=self.message)
        self.reload()


class EmptyDetail(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.label = plain_label(
            tr("Select an item to see it whole."), self, name="Muted", selectable=False
        )
        self.label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        layout = QVBoxLayout(self)
        layout.addWidget(self.label)

    def set_text(self, text: str) -> None:
        self.label.setText(text)


class DetailPane(QStackedWidget):
    """Shows the detail widget of the current item's kind.

    Signals:
        open_run(str): a detail asked to open a run.
        loaded(object): a detail shows the whole entity of its item (the InboxItem).
    """

    open_run = Signal(str)
    loaded = Signal(object)

    def __init__(
        self,
        ctx: DetailContext,
        widgets: dict[InboxKind, type[DetailWidget]],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self._classes = dict(widgets)
        self._widgets: dict[InboxKind, DetailWidget] = {}
        self.empty = EmptyDetail(self)
        self.addWidget(self.empty)

    def widget_for(self, kind: InboxKind) -> DetailWidget:
        if kind not in self._widgets:
            widget = self._classes[kind](self.ctx, self)
            widget.open_run.connect(self.open_run)
            widget.loaded.connect(self.loaded)
            self._widgets[kind] = widget
            self.addWidget(widget)
        return self._widgets[kind]

    def show_item(self, item: InboxItem | None) -> None:
        if item is None or item.kind not in self._classes:
            self.setCurrentWidget(self.empty)
            return
        widget = self.widget_for(item.kind)
        widget.show_item(item)
        self.setCurrentWidget(widget)

    def show_empty(self, text: str) -> None:
        self.empty.set_text(text)
        self.setCurrentWidget(self.empty)

    def current(self) -> DetailWidget | None:
        widget = self.currentWidget()
        return widget if isinstance(widget, DetailWidget) else None

    def current_item(self) -> InboxItem | None:
        widget = self.current()
        return widget.item if widget else None

    def tick(self) -> None:
        widget = self.current()
        if widget is not None:
            widget.tick()
            widget.show_requested()  # "requested 12m ago" keeps the age the list shows
            widget.show_waiter()

    def show_waiter_of(self, item: InboxItem) -> None:
        """The shown item's row changed only in its agent's last look: say so, no reload."""
        widget = self.current()
        if widget is not None and widget.item is not None and widget.item.id == item.id:
            widget.item = item
            widget.show_waiter()
