"""The visual timeline pane: zoom buttons, the view, and a plain-text hover line.

Reads the run's spans and the event density on the task runner; a click on a bar or on
the event lane is turned into the event at that time (``sequence_chosen``).
"""

from __future__ import annotations

from PySide6.QtCore import Signal, Slot
from PySide6.QtWidgets import QHBoxLayout, QToolButton, QVBoxLayout, QWidget

from proctor.core.audit import timeline
from proctor.core.audit.timeline import RunTimeline, Span

from ..infra.context import PageContext
from ..infra.i18n import tr
from ..widgets.labels import plain_label
from .view import TimelineView, span_text

HINT = (
    "Wheel: zoom · drag: pan · click a bar to see its event · "
    "colour and words give the status; a dashed end is still open"
)


class TimelinePane(QWidget):
    """Signals:
    sequence_chosen(int): the operator clicked something; this event belongs to it.
    failed(object): a store read failed.
    """

    sequence_chosen = Signal(int)
    failed = Signal(object)

    def __init__(self, ctx: PageContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.run_id: str | None = None
        self.view = TimelineView(self)
        self.info = plain_label(HINT, self, name="Muted")
        self.info.setWordWrap(False)
        self.info.setAccessibleName(tr("Timeline details"))
        buttons = QHBoxLayout()
        buttons.setSpacing(2)
        for text, name, slot in (
            ("−", "Zoom out", self.zoom_out),
            ("+", "Zoom in", self.zoom_in),
            ("Fit", "Fit the whole run", self.view.fit),
        ):
            button = QToolButton(self)
            button.setText(text)
            button.setAccessibleName(name)
            button.setToolTip(name)
            button.clicked.connect(slot)
            buttons.addWidget(button)
        top = QHBoxLayout()
        top.addWidget(self.info, 1)
        top.addLayout(buttons)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addLayout(top)
        layout.addWidget(self.view, 1)
        self.view.hovered.connect(self._on_hovered)
        self.view.span_clicked.connect(self._on_span)
        self.view.time_clicked.connect(self._on_time)
        self.view.visible_range.connect(self._on_range)

    def preferred_height(self) -> int:
        """Tall enough for every lane of a run without overlapping spans."""
        return int(self.view.content_height()) + self.info.sizeHint().height() + 12

    # ------------------------------------------------------------ loading
    def show_run(self, run_id: str) -> None:
        self.run_id = run_id
        self.reload()

    def reload(self) -> None:
        if self.run_id is None:
            return
        journal, run_id = self.ctx.journal, self.run_id
        self.ctx.runner.latest(
            "timeline",
            lambda: timeline.timeline(journal, run_id),
            on_done=self._on_timeline,
            on_error=self.failed.emit,
            owner=self,
        )

    def _on_timeline(self, tl: RunTimeline) -> None:
        if tl.run_id == self.run_id:
            self.view.set_timeline(tl)

    @Slot(float, float, int)
    def _on_range(self, start: float, end: float, buckets: int) -> None:
        shown = self.view.timeline
        if shown is None or shown.run_id != self.run_id:
            return  # a range of the previous run's lanes; the new run's comes next
        journal, run_id = self.ctx.journal, shown.run_id
        # coalesced: one density read in flight; while it runs, only the last range asked
        # for is read after it (panning never queues a read per frame)
        self.ctx.runner.coalesce(
            "density",
            lambda: (
                run_id,
                start,
                end,
                timeline.event_density(journal, run_id, start, end, buckets),
            ),
            on_done=self._on_density,
            on_error=self.failed.emit,
            owner=self,
        )

    def _on_density(self, result: tuple[str, float, float, list[int]]) -> None:
        run_id, start, end, counts = result
        shown = self.view.timeline
        if shown is not None and run_id == shown.run_id == self.run_id:
            self.view.set_density(start, end, counts)

    # ------------------------------------------------------------ interaction
    @Slot()
    def zoom_in(self) -> None:
        self.view.zoom(2.0)

    @Slot()
    def zoom_out(self) -> None:
        self.view.zoom(0.5)

    @Slot(object)
    def _on_hovered(self, span: Span | None) -> None:
        self.info.setText(span_text(span) if span is not None else HINT)

    @Slot(object)
    def _on_span(self, span: Span) -> None:
        self.info.setText(span_text(span))
        self._resolve(span.start)

    @Slot(float)
    def _on_time(self, at: float) -> None:
        self._resolve(at)

    def _resolve(self, at: float) -> None:
        if self.run_id is None:
            return
        journal, run_id = self.ctx.journal, self.run_id
        self.ctx.runner.run(
            lambda: (run_id, timeline.sequence_at(journal, run_id, at)),
            on_done=self._on_sequence,
            on_error=self.failed.emit,
            owner=self,
        )

    def _on_sequence(self, result: tuple[str, int | None]) -> None:
        run_id, sequence = result
        if run_id == self.run_id and sequence is not None:
            self.sequence_chosen.emit(sequence)

    def mark_event(self, at: float) -> None:
        """The event list selected an event at time ``at``: show where it is."""
        self.view.set_cursor(at, self.view.selected_id)
