"""The schema form: editors generated from a JSON Schema, and a raw JSON tab.

Validated with ``jsonschema`` as the operator types; each problem is shown next to its
field (or above the form when no field owns it). ``valid_changed`` drives the submit
button. When the schema cannot be expressed as a form (a ``oneOf`` at the top, recursion,
too many fields) only the raw JSON tab is offered, validated the same way.
"""

from __future__ import annotations

import json
from typing import Any

from PySide6.QtCore import Signal, Slot
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import QPlainTextEdit, QTabWidget, QVBoxLayout, QWidget

from ..infra.i18n import tr
from ..widgets.labels import plain_label, plain_tip, reserve_lines
from .containers import ObjectField, make_field
from .fields import Field
from .schema import MISSING, Node, plan
from .validate import Checker, Problem, canonical

FORM_TAB, RAW_TAB = 0, 1
RAW_MAX = 2_000_000  # characters of raw JSON accepted from the operator


class SchemaForm(QWidget):
    """Signals:
    edited(): the answer changed (typing, picking, switching tabs).
    valid_changed(bool): the answer became valid or invalid.
    """

    edited = Signal()
    valid_changed = Signal(bool)

    def __init__(
        self, schema: Any, parent: QWidget | None = None, *, title: str = "Answer"
    ) -> None:
        super().__init__(parent)
        self.schema = schema
        self.checker = Checker(schema)
        self.node: Node = plan(schema)
        self.node.title = self.node.title or title
        self.supported = self.node.kind != "json"
        self.tabs = QTabWidget(self)
        self.tabs.setAccessibleName(tr("Answer editor"))
        self.notice = plain_label(parent=self, name="Muted")
        self.notice.hide()
        self.summary = plain_label(parent=self, name="FieldError", selectable=False)
        self.summary.setStyleSheet("color: #c62828;")
        reserve_lines(self.summary)  # "3 problems to fix" coming and going moves nothing
        self.summary.hide()
        self.root: Field | None = None
        if self.supported:
            self.root = (
                ObjectField(self.node, self, root=True)
                if self.node.kind == "object"
                else make_field(self.node, self)
            )
            self.root.changed.connect(self._on_changed)
            page = QWidget(self)
            inner = QVBoxLayout(page)
            inner.addWidget(self.root)
            inner.addStretch(1)
            self.tabs.addTab(page, tr("Form"))
        self.raw = QPlainTextEdit(self)
        self.raw.setAccessibleName(tr("Raw JSON answer"))
        self.raw.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.raw.setTabChangesFocus(True)
        self.raw.setMinimumHeight(160)
        self.raw.setPlaceholderText(tr("The answer as JSON"))
        self.raw.textChanged.connect(self._on_changed)
        self.tabs.addTab(self.raw, tr("Raw JSON"))
        if not self.supported:
            self.notice.setText(
                tr(
                    "This answer cannot be shown as a form ({reason}). Type it "
                    "as raw JSON; it is checked against the agent's schema as "
                    "you type."
                ).format(reason=self.node.reason)
            )
            self.notice.show()
        self.tabs.currentChanged.connect(self._on_tab)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.notice)
        layout.addWidget(self.summary)
        layout.addWidget(self.tabs)
        self._valid = False
        self._syncing = False
        self._server: list[Problem] = []
        self.check()

    # ------------------------------------------------------------ value
    def raw_mode(self) -> bool:
        return not self.supported or self.tabs.currentIndex() == RAW_TAB

    def raw_value(self) -> tuple[Any, str]:
        text = self.raw.toPlainText()
        if len(text) > RAW_MAX:
            return MISSING, f"more than {RAW_MAX:,} characters"
        if not text.strip():
            return MISSING, "type the answer as JSON"
        try:
            return json.loads(text), ""
        except ValueError as exc:
            return MISSING, f"not valid JSON: {exc}"

    def value(self) -> Any:
        if self.raw_mode():
            return self.raw_value()[0]
        assert self.root is not None
        value = self.root.value()
        return {} if value is MISSING and self.node.kind in ("object", "map") else value

    def set_value(self, value: Any) -> None:
        if self.root is not None:
            self.root.set_value(value)
        self._syncing = True
        self.raw.setPlainText(json.dumps(value, indent=2, ensure_ascii=False))
        self._syncing = False
        self.check()

    def current_problems(self) -> list[Problem]:
        if self.raw_mode():
            value, problem = self.raw_value()
            if problem:
                return [Problem((), problem)]
        else:
            assert self.root is not None
            local = self.root.local_problems()
            if local:
                return local
            value = self.value()
            if value is MISSING:
                return [Problem((), "required")]
        return self.checker.problems(value)

    def is_valid(self) -> bool:
        return self._valid

    # ------------------------------------------------------------ checking
    def check(self) -> bool:
        found = self.current_problems() + self._server
        valid = not found
        self.display(found)
        if valid != self._valid:
            self._valid = valid
            self.valid_changed.emit(valid)
        return valid

    def display(self, found: list[Problem]) -> None:
        if self.raw_mode() or self.root is None:
            text = "; ".join(f"{p.where}: {p.message}" for p in found[:8])
            if self.root is not None:
                self.root.show_problems([])
        else:
            self.root.show_problems(found)
            text = f"{len(found)} problem{'s' if len(found) != 1 else ''} to fix" if found else ""
        self.summary.setText(text)
        self.summary.setToolTip(plain_tip(text) if text else "")
        self.summary.setVisible(bool(text))

    def show_server_problem(self, field: str, message: str) -> None:
        """The store refused the answer: show its message at the named field."""
        path = tuple(p for p in field.split("/") if p) if field else ()
        self._server = [Problem(path, message)]
        self.check()

    def problem_texts(self) -> list[str]:
        return [f"{p.where}: {p.message}" for p in self.current_problems() + self._server]

    @Slot()
    def _on_changed(self) -> None:
        if self._syncing:
            return
        self._server = []
        self.check()
        self.edited.emit()

    @Slot(int)
    def _on_tab(self, index: int) -> None:
        """Carry the answer across: form -> raw JSON, and raw JSON -> form when it parses."""
        if self.root is None:
            return
        self._syncing = True
        try:
            if index == RAW_TAB:
                value = self.root.value()
                if value is not MISSING:
                    self.raw.setPlainText(json.dumps(value, indent=2, ensure_ascii=False))
            else:
                value, problem = self.raw_value()
                if not problem:
                    self.root.set_value(value)
                    if not self._holds(value):
                        self._stay_raw(value)
                    elif self.supported:
                        self.notice.hide()
        finally:
            self._syncing = False
        self.check()
        self.edited.emit()

    def _holds(self, value: Any) -> bool:
        """Whether the form now holds exactly ``value`` (nothing typed was dropped)."""
        assert self.root is not None
        held = self.root.value()
        held = {} if held is MISSING and self.node.kind in ("object", "map") else held
        return canonical(held) == canonical(value)

    def _stay_raw(self, value: Any) -> None:
        """The form cannot hold what was typed as raw JSON (a key the schema does not allow,
        a value no editor takes): stay on the Raw JSON tab, as typed, and say why; the
        answer keeps the problems the core's check finds in it (never sent without the
        key in silence)."""
        self.tabs.blockSignals(True)
        self.tabs.setCurrentIndex(RAW_TAB)
        self.tabs.blockSignals(False)
        self.notice.setText(
            tr(
                "Kept as raw JSON: the form cannot hold all of this answer (it would drop "
                "what it has no field for). Fix it here; the problems are listed above."
            )
        )
        self.notice.show()

    # ------------------------------------------------------------ for views and tests
    def field(self, *path: str) -> Field | None:
        return self.root.field_at(tuple(path)) if self.root is not None else None

    def focus_first(self) -> None:
        if self.raw_mode():
            self.raw.setFocus()
        elif self.root is not None:
            self.root.focus()

    def draft(self) -> dict:
        value = self.value()
        return {
            "tab": self.tabs.currentIndex(),
            "raw": self.raw.toPlainText(),
            "value": None if value is MISSING else value,
        }

    def restore(self, draft: dict) -> None:
        if draft.get("value") is not None and self.root is not None:
            self.root.set_value(draft["value"])
        self._syncing = True
        self.raw.setPlainText(str(draft.get("raw", "")))
        self._syncing = False
        self.tabs.setCurrentIndex(int(draft.get("tab", 0)))
        self.check()
