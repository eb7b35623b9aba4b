"""The Runs page: the run list (filters, search, sort, live) and, on Enter or a double
click, one run in full (``RunDetail``). "← Runs" or Alt+Left (the registry's
``runs.back``, gui/runs/commands.py) goes back to the list, which kept its filters,
selection and scroll position.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QModelIndex, Qt, QTimer, Slot
from PySide6.QtWidgets import QPushButton, QStackedWidget, QVBoxLayout, QWidget

from proctor.core.models import ChangeKind, ChangeSet

from ..infra.context import PageContext
from ..infra.i18n import tr
from ..widgets.export import Exporter
from ..widgets.list_page import ListPage
from ..widgets.message_bar import Level
from ..widgets.paged_model import KEY_ROLE
from ..widgets.saved_views import SavedViews
from .detail import RunDetail
from .filters import RunFilterBar
from .model import COL_STATUS, SORT_OF, RunsModel

TICK_MS = 1000


class RunList(ListPage):
    """The list half of the Runs page."""

    change_kinds = frozenset(
        {ChangeKind.RUN, ChangeKind.APPROVAL, ChangeKind.QUESTION, ChangeKind.EFFECT}
    )
    title = "Runs"
    stretch_column = 1

    def __init__(self, ctx: PageContext, parent: QWidget | None = None) -> None:
        super().__init__(ctx, RunsModel(ctx.runner), parent)
        self.search.setPlaceholderText(tr("Search titles, ids, agents, projects"))
        self.search.setAccessibleName(tr("Search runs"))
        self.filters = RunFilterBar(self)
        self.export_button = QPushButton(tr("Export CSV…"), self)
        self.export_button.setAccessibleName(tr("Export the filtered run list as CSV"))
        self.exporter = Exporter(ctx, self, self.message)
        self.views = SavedViews(
            ctx.settings,
            "runs",
            self.view_state,
            self.apply_view,
            lambda text: self.message.show_message(text, Level.WARNING),
            self,
        )
        self.layout_top.addWidget(self.views)
        self.layout_top.addWidget(self.export_button)
        self.body.insertWidget(1, self.filters)
        self.add_main(self.table)
        self.table.setSortingEnabled(True)
        self.table.horizontalHeader().setSortIndicator(4, Qt.SortOrder.DescendingOrder)
        self.table.horizontalHeader().setSortIndicatorShown(True)
        self.filters.changed.connect(self.apply_query)
        self.export_button.clicked.connect(self.export_csv)
        assert isinstance(self.model, RunsModel)
        self.model.sorted.connect(self.filters.set_sort)
        self.table.horizontalHeader().sortIndicatorChanged.connect(self._on_header_sort)

    def apply_query(self) -> None:
        assert isinstance(self.model, RunsModel)
        self.model.show_query(self.journal, self.filters.query(self.text()))
        self._sync_indicator()

    def start(self) -> None:
        super().start()
        self.load_facets()

    def view_state(self) -> dict[str, Any]:
        return {**self.filters.state(), "text": self.search.text().strip()}

    def apply_view(self, view: dict[str, Any]) -> None:
        """Show the runs a saved view selects (one query)."""
        text = view.get("text")
        self.search.blockSignals(True)
        self.search.setText(text if isinstance(text, str) else "")
        self.search.blockSignals(False)
        self.filters.apply_state(view)
        self.apply_query()

    def current_run_id(self) -> str:
        """The id of the run under the cursor ("" when none is)."""
        index = self.table.currentIndex()
        key = index.siblingAtColumn(COL_STATUS).data(KEY_ROLE) if index.isValid() else None
        return str(key) if key else ""

    def load_facets(self) -> None:
        runs = self.journal.runs
        self.ctx.runner.coalesce(
            "facets",
            lambda: (runs.agents(), runs.projects()),
            on_done=self._on_facets,
            on_error=self._on_failed,
            owner=self,
        )

    def _on_facets(self, result: tuple[list[str], list[str]]) -> None:
        self.filters.set_facets(*result)

    def refreshed(self) -> None:
        self.load_facets()

    @Slot()
    def _sync_indicator(self) -> None:
        q = self.model.query  # type: ignore[attr-defined]
        column = next((c for c, key in SORT_OF.items() if key == q.sort), -1)
        header = self.table.horizontalHeader()
        header.blockSignals(True)
        header.setSortIndicator(
            column, Qt.SortOrder.DescendingOrder if q.descending else Qt.SortOrder.AscendingOrder
        )
        header.blockSignals(False)

    @Slot(int, Qt.SortOrder)
    def _on_header_sort(self, _column: int, _order: Qt.SortOrder) -> None:
        QTimer.singleShot(0, self._sync_indicator)  # unsortable columns snap back

    @Slot()
    def export_csv(self) -> None:
        self.exporter.runs_csv(self.filters.query(self.text()))


class RunsPage(QWidget):
    """The page the main window shows: the run list, or one run."""

    def __init__(self, ctx: PageContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.journal = ctx.journal
        self.list = RunList(ctx, self)
        self.model = self.list.model
        self.table = self.list.table
        self.detail = RunDetail(ctx, self)
        self.stack = QStackedWidget(self)
        self.stack.addWidget(self.list)
        self.stack.addWidget(self.detail)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 8, 0)
        layout.addWidget(self.stack)
        self.table.activated.connect(self._on_activated)
        self.detail.back.connect(self.show_list)
        self.detail.open_run.connect(self.show_run)
        self.stack.currentChanged.connect(ctx.registry.refresh)  # list or run commands
        self._tick = QTimer(self)
        self._tick.setInterval(TICK_MS)
        self._tick.timeout.connect(self._on_tick)

    def start(self) -> None:
        self.list.start()
        self._tick.start()

    def on_changes(self, cs: ChangeSet) -> None:
        self.list.on_changes(cs)
        self.detail.on_changes(cs)

    def focus_list(self) -> None:
        if self.stack.currentWidget() is self.list:
            self.list.focus_list()
        else:
            self.detail.events_pane.table.setFocus()

    # ------------------------------------------------------------ navigation
    def show_run(self, run_id: str, sequence: int | None = None) -> None:
        """Show one run in full (from the list, the inbox, a parent or child link), at event
        ``sequence`` when given."""
        self.detail.show_run(run_id, sequence)
        self.stack.setCurrentWidget(self.detail)
        row = self.model.row_of(run_id)
        if row >= 0:
            self.table.selectRow(row)

    @Slot()
    def show_list(self) -> None:
        self.stack.setCurrentWidget(self.list)
        self.list.focus_list()

    def showing_run(self) -> bool:
        return self.stack.currentWidget() is self.detail

    @Slot(QModelIndex)
    def _on_activated(self, index: QModelIndex) -> None:
        run_id = index.siblingAtColumn(COL_STATUS).data(KEY_ROLE)
        if run_id:
            self.show_run(str(run_id))

    @Slot()
    def _on_tick(self) -> None:
        if self.isVisible() and not self.showing_run():
            self.model.tick()
