"""The Runs page's "Custom range…": pick when the shown runs started, from … to (local
time, to the minute). OK stays disabled, with a message saying why, until "from" is before
"to". Keyboard: Tab moves from → to → OK, Enter accepts, Escape cancels."""

from __future__ import annotations

import time

from PySide6.QtCore import QDateTime, Signal, Slot
from PySide6.QtWidgets import (
    QDateTimeEdit,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from ..infra.i18n import tr
from ..widgets.labels import plain_label

FORMAT = "yyyy-MM-dd HH:mm"
DAY = 86_400


def minute(ts: float) -> float:
    """``ts`` rounded down to its minute (what the editors show)."""
    return float(int(ts) // 60 * 60)


def range_text(since: float, until: float) -> str:
    """How the filter menu shows a chosen range."""

    def show(ts: float) -> str:
        return QDateTime.fromSecsSinceEpoch(int(ts)).toString(FORMAT)

    return f"{show(since)} – {show(until)}"


def date_edit(name: str, ts: float, parent: QWidget) -> QDateTimeEdit:
    edit = QDateTimeEdit(QDateTime.fromSecsSinceEpoch(int(ts)), parent)
    edit.setDisplayFormat(FORMAT)
    edit.setCalendarPopup(True)
    edit.setAccessibleName(name)
    return edit


class RangeDialog(QDialog):
    """Signals:
    chosen(float, float): accepted with this range (since, until; epoch seconds).
    """

    chosen = Signal(float, float)

    def __init__(self, parent: QWidget | None, since: float, until: float) -> None:
        super().__init__(parent)
        self.setWindowTitle(tr("Runs started between"))
        self.start = date_edit("Runs started from (date and time)", since, self)
        self.end = date_edit("Runs started before (date and time)", until, self)
        self.problem = plain_label(parent=self, name="Muted", selectable=False)
        self.problem.setAccessibleName(tr("Why the range cannot be used"))
        buttons = QDialogButtonBox(self)
        self.ok: QPushButton = buttons.addButton(
            "Show these runs", QDialogButtonBox.ButtonRole.AcceptRole
        )
        self.ok.setDefault(True)
        self.ok.setAutoDefault(True)
        buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form = QFormLayout()
        form.addRow(tr("&From:"), self.start)
        form.addRow(tr("&To:"), self.end)
        layout = QVBoxLayout(self)
        layout.addWidget(
            plain_label(
                tr(
                    "Show the runs started in this range (local time; "
                    "from inclusive, to exclusive)."
                ),
                self,
                selectable=False,
            )
        )
        layout.addLayout(form)
        layout.addWidget(self.problem)
        layout.addWidget(buttons)
        self.setTabOrder(self.start, self.end)
        self.setTabOrder(self.end, self.ok)
        self.start.dateTimeChanged.connect(self._check)
        self.end.dateTimeChanged.connect(self._check)
        self._check()
        self.start.setFocus()

    def value(self) -> tuple[float, float]:
        return (
            float(self.start.dateTime().toSecsSinceEpoch()),
            float(self.end.dateTime().toSecsSinceEpoch()),
        )

    def is_valid(self) -> bool:
        since, until = self.value()
        return since < until

    @Slot()
    def _check(self) -> None:
        valid = self.is_valid()
        self.ok.setEnabled(valid)
        self.problem.setText("" if valid else tr("“From” must be before “To”."))

    def accept(self) -> None:
        if not self.is_valid():  # Enter on an editor while the range is wrong
            return
        super().accept()
        self.chosen.emit(*self.value())


def initial_range(
    current: tuple[float, float] | None, now: float | None = None
) -> tuple[float, float]:
    """What the dialog starts with: the range chosen before, or the last 24 hours."""
    if current is not None:
        return current
    end = minute(now or time.time()) + 60
    return end - DAY, end
