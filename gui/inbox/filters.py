"""The inbox filter bar: kind, agent, project, safety class, age, text, sort, waited for,
snoozed.

The age filter is set only from the Overview (a bar of "waiting, by age": exactly the items
it counted, as of the moment it counted them); its one choice besides "Any age" says so."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QTimer, Signal, Slot
from PySide6.QtWidgets import QCheckBox, QComboBox, QHBoxLayout, QLineEdit, QWidget

from proctor.core.models import InboxFilter, InboxKind

from ..infra.i18n import tr
from ..widgets import fmt
from .mine import mine_combo, mine_filter, select_mine

SEARCH_DEBOUNCE_MS = 250
ANY = ""
WAITER = "waiter"  # the sort menu's "Agent waiting first" (its others: newest first or not)


def _combo(name: str, parent: QWidget, any_text: str) -> QComboBox:
    combo = QComboBox(parent)
    combo.setAccessibleName(name)
    combo.setToolTip(name)
    combo.addItem(any_text, ANY)
    combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
    return combo


class FilterBar(QWidget):
    """Signals:
    changed(InboxFilter): the operator changed a filter (search is debounced).
    """

    changed = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.search = QLineEdit(self)
        self.search.setPlaceholderText(tr("Search the inbox  ( / )"))
        self.search.setAccessibleName(tr("Search the inbox"))
        self.search.setClearButtonEnabled(True)
        self.search.setMinimumWidth(160)  # never squeezed to nothing by the menus
        self.kind = _combo("Kind", self, "All kinds")
        for kind, title in (
            (InboxKind.APPROVAL, "Approvals"),
            (InboxKind.QUESTION, "Questions"),
            (InboxKind.CONFLICT, "Memory conflicts"),
            (InboxKind.EFFECT, "Ambiguous effects"),
        ):
            self.kind.addItem(title, kind.value)
        self.agent = _combo("Agent", self, "All agents")
        self.project = _combo("Project", self, "All projects")
        self.safety = _combo("Safety class", self, "Any safety")
        self.age = _combo("Waiting since", self, "Any age")
        self.mine = mine_combo(self)  # whose: everyone's, waiting for me, ...
        self.operator = ""  # the desk's operator (the page sets it): whom "me" names
        self.sort = QComboBox(self)
        self.sort.setAccessibleName(tr("Sort order"))
        self.sort.addItem(tr("Newest first"), True)
        self.sort.addItem(tr("Oldest first"), False)
        self.sort.addItem(tr("Agent waiting first"), WAITER)  # then newest first
        self.waited = QCheckBox(tr("Agent waiting"), self)
        self.waited.setAccessibleName(tr("Show only requests an agent waits for now"))
        self.waited.setToolTip(
            tr("Show only the approvals and questions whose agent is waiting for them now")
        )
        self.snoozed = QCheckBox(tr("Snoozed"), self)
        self.snoozed.setAccessibleName(tr("Show snoozed items only"))
        self.snoozed.setToolTip(tr("Show only snoozed items (they are hidden otherwise)"))
        self._debounce = QTimer(self)
        self._debounce.setSingleShot(True)
        self._debounce.setInterval(SEARCH_DEBOUNCE_MS)
        self._debounce.timeout.connect(self._emit)
        self._connect()
        layout = self.row = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.search, 1)
        layout.addWidget(self.mine)
        for widget in (self.kind, self.agent, self.project, self.safety, self.age, self.sort):
            layout.addWidget(widget)
        layout.addWidget(self.waited)
        layout.addWidget(self.snoozed)
        self.age.setVisible(False)  # until the Overview sets an age

    def _connect(self) -> None:
        self.search.textChanged.connect(self._on_text)
        self.search.returnPressed.connect(self._emit)
        for combo in (
            self.mine,
            self.kind,
            self.agent,
            self.project,
            self.safety,
            self.age,
            self.sort,
        ):
            combo.currentIndexChanged.connect(self._emit)
        self.snoozed.toggled.connect(self._emit)
        self.waited.toggled.connect(self._emit)

    @Slot(str)
    def _on_text(self, _text: str) -> None:
        self._debounce.start()

    @Slot()
    def _emit(self) -> None:
        self._debounce.stop()
        self.changed.emit(self.value())

    def flush(self) -> None:
        """Apply typed search text now if it is still waiting for the debounce."""
        if self._debounce.isActive():
            self._emit()

    def value(self) -> InboxFilter:
        kind = self.kind.currentData()
        after, until = self.age.currentData() or (None, None)
        return InboxFilter(
            kinds=frozenset({InboxKind(kind)}) if kind else frozenset(),
            agent=self.agent.currentData() or None,
            project=self.project.currentData() or None,
            safety_class=self.safety.currentData() or None,
            text=self.search.text().strip() or None,
            snoozed=self.snoozed.isChecked(),
            waited=self.waited.isChecked(),
            newest_first=self.sort.currentData() is not False,
            sort="waiter" if self.sort.currentData() == WAITER else "age",
            created_after=after,
            created_until=until,
            **mine_filter(self.mine.currentData(), self.operator),
        )

    def state(self) -> dict[str, Any]:
        """The filters as a saved view keeps them (not the age: the Overview's alone)."""
        return {
            "text": self.search.text().strip(),
            "kind": self.kind.currentData() or "",
            "agent": self.agent.currentData() or "",
            "project": self.project.currentData() or "",
            "safety": self.safety.currentData() or "",
            "snoozed": self.snoozed.isChecked(),
            "newest_first": self.sort.currentData() is not False,
            "sort": "waiter" if self.sort.currentData() == WAITER else "age",
            "mine": self.mine.currentData() or "",
        }

    def apply_state(self, view: dict[str, Any]) -> None:
        """Select the filters of a saved view, then apply once (a value of the wrong type
        reads as "any"; a kind the desk does not know as all kinds)."""

        def text(key: str) -> str | None:
            value = view.get(key)
            return value if isinstance(value, str) and value else None

        kind = text("kind")
        self.show_only(
            kind=kind if kind in {k.value for k in InboxKind} else None,
            agent=text("agent"),
            project=text("project"),
            text=text("text"),
            safety=text("safety"),
            snoozed=view.get("snoozed") is True,
            newest_first=view.get("newest_first") is not False,
            waiter_first=view.get("sort") == "waiter",
            mine=view.get("mine"),
        )

    def show_only(
        self,
        *,
        kind: str | None = None,
        agent: str | None = None,
        project: str | None = None,
        text: str | None = None,
        age: tuple[str, float | None, float] | None = None,
        safety: str | None = None,
        snoozed: bool = False,
        newest_first: bool | None = None,
        waiter_first: bool = False,
        mine: object = None,
    ) -> None:
        """Select exactly these filters (None: any; by default the safety class any,
        snoozed items hidden, the sort as it is) and search ``text``, then apply once.
        ``waiter_first``: sort the requests an agent waits for now first (with
        ``newest_first``). ``mine``: whose items ("waiting_for", "for_groups_of",
        "assigned_to"; else everyone's).
        ``age``: (what to call it, created after, created until), as an Overview bar
        counted them."""
        self._set_age(age)
        select_mine(self.mine, mine)
        for combo, value in (
            (self.kind, kind),
            (self.agent, agent),
            (self.project, project),
            (self.safety, safety),
        ):
            combo.blockSignals(True)
            if value is not None and combo.findData(value) < 0:
                combo.addItem(fmt.bounded(value, 80), value)
            combo.setCurrentIndex(max(0, combo.findData(value)) if value is not None else 0)
            combo.blockSignals(False)
        self.search.blockSignals(True)
        self.search.setText(text or "")
        self.search.blockSignals(False)
        self.snoozed.blockSignals(True)
        self.snoozed.setChecked(snoozed)
        self.snoozed.blockSignals(False)
        if waiter_first or newest_first is not None:
            self.sort.blockSignals(True)
            wanted: object = WAITER if waiter_first else newest_first
            self.sort.setCurrentIndex(max(0, self.sort.findData(wanted)))
            self.sort.blockSignals(False)
        self._emit()

    def _set_age(self, age: tuple[str, float | None, float] | None) -> None:
        self.age.blockSignals(True)
        while self.age.count() > 1:
            self.age.removeItem(1)
        if age is not None:
            name, after, until = age
            self.age.addItem(name, (after, until))
            self.age.setCurrentIndex(1)
        else:
            self.age.setCurrentIndex(0)
        self.age.setVisible(age is not None)
        self.age.blockSignals(False)

    def set_facets(self, facets: dict[str, list[str]]) -> None:
        """Refill the agent/project/safety menus, keeping the current choices."""
        for combo, name in (
            (self.agent, "agent"),
            (self.project, "project"),
            (self.safety, "safety_class"),
        ):
            self._refill(combo, facets.get(name, []), name == "safety_class")

    @staticmethod
    def _refill(combo: QComboBox, values: list[str], pretty: bool) -> None:
        current = combo.currentData()
        wanted = sorted(set(values) | ({current} if current else set()))
        present = [combo.itemData(i) for i in range(1, combo.count())]
        if present == wanted:
            return
        combo.blockSignals(True)
        while combo.count() > 1:
            combo.removeItem(1)
        for value in wanted:
            combo.addItem(value.replace("_", " ") if pretty else fmt.bounded(value, 80), value)
        combo.setCurrentIndex(max(0, combo.findData(current)) if current else 0)
        combo.blockSignals(False)

    def focus_search(self) -> None:
        self.search.setFocus()
        self.search.selectAll()
