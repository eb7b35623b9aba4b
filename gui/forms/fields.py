"""Editors for single values of a schema plan: text, enum, date, number, boolean, JSON.

Every editor is a ``Field``: it knows its plan node, gives its ``value()`` (``MISSING``
when an optional field is empty), takes ``set_value()``, reports problems it can see on
its own (``local_problems``: "not a number", "not valid JSON") and shows the problems
routed to it under the editor. Agent text (titles, descriptions, enum values) is shown
as plain text only.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from typing import Any
from urllib.parse import urlsplit

from PySide6.QtCore import QDate, Signal, Slot
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QButtonGroup,
    QCalendarWidget,
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLineEdit,
    QListWidget,
    QMenu,
    QPlainTextEdit,
    QRadioButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
    QWidgetAction,
)

from ..infra.i18n import tr
from ..widgets.fmt import visible
from ..widgets.labels import plain_label, plain_tip, reserve_lines
from .schema import MISSING, RADIO_MAX, Node, describe
from .validate import Problem

OPTION_TEXT_MAX = 200


def list_text(text: str, limit: int = OPTION_TEXT_MAX) -> str:
    """Agent text for an option's line (a list row, a name): one line, bounded, control,
    bidi and invisible characters shown as escapes (the one display function's rule)."""
    line = visible(" ".join(str(text).split()))
    return line if len(line) <= limit else line[: limit - 1] + "…"


def button_text(text: str, limit: int = OPTION_TEXT_MAX) -> str:
    """Agent text for a button/check box: ``list_text``, '&' shown (not a mnemonic)."""
    return list_text(text, limit).replace("&", "&&")


def option_label(value: Any) -> str:
    text = visible(describe(value))
    return text if len(text) <= OPTION_TEXT_MAX else text[: OPTION_TEXT_MAX - 1] + "…"


def filter_list(items: QListWidget, text: str) -> None:
    """Hide the rows of a list whose text does not contain ``text`` (any case)."""
    needle = text.lower()
    for n in range(items.count()):
        item = items.item(n)
        item.setHidden(bool(needle) and needle not in item.text().lower())


class Field(QWidget):
    """Base of every editor.

    Signals:
        changed(): the operator changed the value (or set_value did).
    """

    changed = Signal()

    def __init__(self, node: Node, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.node = node
        self.error = plain_label(parent=self, name="FieldError", selectable=False)
        self.error.setStyleSheet("color: #c62828;")
        reserve_lines(self.error)  # its line is kept while hidden: no field below moves
        self.error.hide()
        self.column = QVBoxLayout(self)
        self.column.setContentsMargins(0, 0, 0, 0)
        self.column.setSpacing(2)

    def finish(self, editor: QWidget | Any) -> None:
        """Put the editor (widget or layout) above the error line."""
        if isinstance(editor, QWidget):
            self.column.addWidget(editor)
        else:
            self.column.addLayout(editor)
        self.column.addWidget(self.error)

    # -- values
    def value(self) -> Any:
        raise NotImplementedError

    def set_value(self, value: Any) -> None:
        raise NotImplementedError

    def empty(self) -> Any:
        """The value of an empty editor: left out, or null when the schema allows it."""
        return None if self.node.nullable else MISSING

    def or_empty(self, value: Any) -> Any:
        """A container's value, or the empty value when it holds nothing and is optional."""
        return self.empty() if not value and not self.node.required else value

    def apply_default(self) -> None:
        if self.node.default is not MISSING:
            self.set_value(self.node.default)

    def local_problems(self) -> list[Problem]:
        return []

    # -- problems
    def is_blank(self) -> bool:
        """Nothing typed (an empty required field then just says "required")."""
        return False

    def show_problems(self, problems: list[Problem]) -> None:
        """Show the problems of this field (paths relative to it)."""
        own = list(dict.fromkeys(p.message for p in problems))
        if own and self.node.required and self.is_blank():
            own = ["required"]
        self.error.setText("; ".join(own))
        self.error.setToolTip(plain_tip("; ".join(own)) if own else "")
        self.error.setVisible(bool(own))
        self.setAccessibleDescription("; ".join(own))

    def problem_text(self) -> str:
        return self.error.text() if not self.error.isHidden() else ""

    def field_at(self, path: tuple[str, ...]) -> Field | None:
        return self if not path else None

    def focus(self) -> None:
        self.setFocus()

    def fields(self) -> list[Field]:
        return [self]

    @Slot()
    def _on_edit(self) -> None:
        self.changed.emit()


class LineField(Field):
    """One line of text; also email, uri, date and date-time (with pickers)."""

    PLACEHOLDERS = {  # noqa: RUF012 - a constant table, never mutated
        "email": "name@example.com",
        "uri": "https://…",
        "date": "YYYY-MM-DD",
        "datetime": "YYYY-MM-DDThh:mm:ss+00:00",
    }

    def __init__(self, node: Node, parent: QWidget | None = None) -> None:
        super().__init__(node, parent)
        self.edit = QLineEdit(self)
        self.edit.setAccessibleName(node.label)
        examples = node.schema.get("examples")
        hint = self.PLACEHOLDERS.get(node.kind, "")
        if isinstance(examples, list) and examples and isinstance(examples[0], str | int):
            hint = f"e.g. {str(examples[0])[:80]}"
        self.edit.setPlaceholderText(hint)
        longest = node.schema.get("maxLength")
        if isinstance(longest, int) and longest > 0:
            self.edit.setMaxLength(min(longest + 1, 32767))  # one over: the validator says so
        self.edit.textChanged.connect(self._on_edit)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.edit, 1)
        if node.kind in ("date", "datetime"):
            row.addWidget(self._calendar_button())
        if node.kind == "datetime":
            now = QToolButton(self)
            now.setText(tr("Now"))
            now.setAccessibleName(tr("{label}: now").format(label=node.label))
            now.clicked.connect(self._now)
            row.addWidget(now)
        self.finish(row)
        self.apply_default()

    def _calendar_button(self) -> QToolButton:
        button = QToolButton(self)
        button.setText(tr("Pick…"))
        button.setAccessibleName(tr("{label}: pick a date").format(label=self.node.label))
        button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        menu = QMenu(button)
        self.calendar = QCalendarWidget(menu)
        self.calendar.clicked.connect(self._picked)
        holder = QWidgetAction(menu)
        holder.setDefaultWidget(self.calendar)
        menu.addAction(holder)
        button.setMenu(menu)
        self._menu = menu
        return button

    @Slot(QDate)
    def _picked(self, date: QDate) -> None:
        day = date.toString("yyyy-MM-dd")
        if self.node.kind == "date":
            self.edit.setText(day)
        else:
            rest = self.edit.text()[10:] if len(self.edit.text()) > 10 else "T09:00:00+00:00"
            self.edit.setText(day + rest)
        self._menu.hide()

    @Slot()
    def _now(self) -> None:
        self.edit.setText(dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat())

    def value(self) -> Any:
        text = self.edit.text()
        if text:
            return text
        if self.node.kind == "string" and self.node.required and not self.node.nullable:
            return ""
        return self.empty()

    def set_value(self, value: Any) -> None:
        self.edit.setText("" if value is None or value is MISSING else str(value))

    def is_blank(self) -> bool:
        return not self.edit.text()

    def local_problems(self) -> list[Problem]:
        text = self.edit.text().strip()
        if not text:
            return []
        if self.node.kind == "datetime" and not is_datetime(text):
            return [Problem((), "not a date and time with a zone, e.g. 2026-02-03T09:00:00Z")]
        if self.node.kind == "uri" and not is_uri(text):
            return [Problem((), "not a full address, e.g. https://example.com/page")]
        if self.node.kind == "email" and not re.fullmatch(r"[^@\s]+@[^@\s]+\.[^@\s]+", text):
            return [Problem((), "not an email address, e.g. name@example.com")]
        return []

    def focus(self) -> None:
        self.edit.setFocus()


def is_datetime(text: str) -> bool:
    try:
        value = dt.datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return False
    return value.tzinfo is not None and "T" in text.upper()


def is_uri(text: str) -> bool:
    parts = urlsplit(text)
    return bool(parts.scheme) and bool(parts.netloc or parts.path) and " " not in text


class TextField(Field):
    """Several lines of text."""

    def __init__(self, node: Node, parent: QWidget | None = None) -> None:
        super().__init__(node, parent)
        self.edit = QPlainTextEdit(self)
        self.edit.setAccessibleName(node.label)
        self.edit.setTabChangesFocus(True)
        self.edit.setMinimumHeight(64)
        self.edit.setMaximumHeight(140)
        self.edit.textChanged.connect(self._on_edit)
        self.finish(self.edit)
        self.apply_default()

    def is_blank(self) -> bool:
        return not self.edit.toPlainText()

    def value(self) -> Any:
        text = self.edit.toPlainText()
        if text:
            return text
        return "" if self.node.required and not self.node.nullable else self.empty()

    def set_value(self, value: Any) -> None:
        self.edit.setPlainText("" if value is None or value is MISSING else str(value))

    def focus(self) -> None:
        self.edit.setFocus()


class EnumField(Field):
    """Radio buttons for a few short values, a combo box for more."""

    def __init__(self, node: Node, parent: QWidget | None = None) -> None:
        super().__init__(node, parent)
        self.values = list(node.options)
        short = all(len(option_label(v)) <= 40 for v in self.values)
        self.radios: QButtonGroup | None = None
        self.combo: QComboBox | None = None
        if len(self.values) <= RADIO_MAX and short:
            self._build_radios()
        else:
            self._build_combo()
        self.apply_default()

    def _build_radios(self) -> None:
        self.radios = QButtonGroup(self)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        for n, value in enumerate(self.values):
            radio = QRadioButton(button_text(option_label(value)), self)
            radio.setAccessibleName(f"{self.node.label}: {option_label(value)}")
            self.radios.addButton(radio, n)
            row.addWidget(radio)
        row.addStretch(1)
        self.radios.idToggled.connect(self._on_toggled)
        self.finish(row)

    def _build_combo(self) -> None:
        self.combo = QComboBox(self)
        self.combo.setAccessibleName(self.node.label)
        self.combo.setMaxVisibleItems(20)
        self.combo.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.combo.setMinimumContentsLength(24)
        self.combo.addItem(tr("— choose —"))
        self.combo.addItems([option_label(v) for v in self.values])
        self.combo.currentIndexChanged.connect(self._on_edit)
        self.finish(self.combo)
        if self.node.cut_options:
            note = plain_label(
                tr(
                    "{cut_options:,} more values are not listed; use raw JSON to give one of them."
                ).format(cut_options=self.node.cut_options),
                self,
                name="Muted",
            )
            self.column.insertWidget(1, note)

    @Slot(int, bool)
    def _on_toggled(self, _id: int, checked: bool) -> None:
        if checked:
            self.changed.emit()

    def index(self) -> int:
        if self.radios is not None:
            return self.radios.checkedId()
        assert self.combo is not None
        return self.combo.currentIndex() - 1

    def value(self) -> Any:
        n = self.index()
        return self.values[n] if 0 <= n < len(self.values) else self.empty()

    def set_value(self, value: Any) -> None:
        n = next(
            (i for i, v in enumerate(self.values) if v == value and type(v) is type(value)), -1
        )
        if self.radios is not None:
            checked = self.radios.checkedButton()
            if n >= 0:
                self.radios.button(n).setChecked(True)
            elif checked is not None:
                self.radios.setExclusive(False)
                checked.setChecked(False)
                self.radios.setExclusive(True)
                self.changed.emit()
        elif self.combo is not None:
            self.combo.setCurrentIndex(n + 1)

    def pick(self, n: int) -> None:
        """Choose the n-th value (tests and number keys)."""
        self.set_value(self.values[n])

    def focus(self) -> None:
        if self.combo is not None:
            self.combo.setFocus()
        elif self.radios is not None and self.radios.buttons():
            (self.radios.checkedButton() or self.radios.buttons()[0]).setFocus()


class NumberField(Field):
    """A number or a whole number typed as text (bounds and problems shown, never clamped)."""

    def __init__(self, node: Node, parent: QWidget | None = None) -> None:
        super().__init__(node, parent)
        self.edit = QLineEdit(self)
        self.edit.setAccessibleName(node.label)
        self.edit.setPlaceholderText(number_hint(node))
        self.edit.textChanged.connect(self._on_edit)
        self.finish(self.edit)
        self.apply_default()

    def parse(self) -> Any:
        text = self.edit.text().strip().replace("_", "")
        if not text:
            return self.empty()
        try:
            if self.node.kind == "integer":
                return int(text)
            number = float(text)
        except ValueError:
            return None
        if number != number or number in (float("inf"), float("-inf")):
            return None
        return (
            int(number)
            if number.is_integer() and "." not in text and "e" not in text.lower()
            else number
        )

    def value(self) -> Any:
        return self.parse()

    def is_blank(self) -> bool:
        return not self.edit.text().strip()

    def set_value(self, value: Any) -> None:
        self.edit.setText("" if value is None or value is MISSING else str(value))

    def local_problems(self) -> list[Problem]:
        if self.edit.text().strip() and self.parse() is None:
            word = "a whole number" if self.node.kind == "integer" else "a number"
            return [Problem((), f"not {word}")]
        return []

    def focus(self) -> None:
        self.edit.setFocus()


def number_hint(node: Node) -> str:
    s = node.schema
    word = "a whole number" if node.kind == "integer" else "a number"
    low = s.get("minimum", s.get("exclusiveMinimum"))
    high = s.get("maximum", s.get("exclusiveMaximum"))
    if low is not None and high is not None:
        return f"{word} from {low} to {high}"
    if low is not None:
        return f"{word}, at least {low}"
    if high is not None:
        return f"{word}, at most {high}"
    return word


class BoolField(Field):
    def __init__(self, node: Node, parent: QWidget | None = None, *, text: str = "Yes") -> None:
        super().__init__(node, parent)
        self.box = QCheckBox(button_text(text), self)
        self.box.setAccessibleName(node.label)
        self.box.toggled.connect(self._on_edit)
        self.finish(self.box)
        self.apply_default()

    def value(self) -> Any:
        return self.box.isChecked()

    def set_value(self, value: Any) -> None:
        self.box.setChecked(bool(value) if value is not MISSING else False)

    def focus(self) -> None:
        self.box.setFocus()


class ConstField(Field):
    def __init__(self, node: Node, parent: QWidget | None = None) -> None:
        super().__init__(node, parent)
        self.const = node.schema.get("const")
        self.finish(
            plain_label(
                tr("Always {const}").format(const=option_label(self.const)), self, name="Muted"
            )
        )

    def value(self) -> Any:
        return self.const

    def set_value(self, value: Any) -> None:
        pass


class JsonField(Field):
    """Raw JSON for a part of the schema the form cannot express."""

    def __init__(self, node: Node, parent: QWidget | None = None) -> None:
        super().__init__(node, parent)
        if node.reason:
            self.column.addWidget(
                plain_label(
                    tr("Typed as JSON: {reason}.").format(reason=node.reason), self, name="Muted"
                )
            )
        self.edit = QPlainTextEdit(self)
        self.edit.setAccessibleName(tr("{label} (JSON)").format(label=node.label))
        self.edit.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.edit.setTabChangesFocus(True)
        self.edit.setMinimumHeight(60)
        self.edit.setMaximumHeight(160)
        self.edit.setPlaceholderText(tr('JSON, e.g. {"key": "value"}'))
        self.edit.textChanged.connect(self._on_edit)
        self.finish(self.edit)
        self.apply_default()

    def parse(self) -> tuple[Any, str]:
        text = self.edit.toPlainText().strip()
        if not text:
            return self.empty(), ""
        try:
            return json.loads(text), ""
        except ValueError as exc:
            return MISSING, f"not valid JSON: {exc}"

    def value(self) -> Any:
        return self.parse()[0]

    def set_value(self, value: Any) -> None:
        self.edit.setPlainText(
            "" if value is MISSING else json.dumps(value, indent=2, ensure_ascii=False)
        )

    def local_problems(self) -> list[Problem]:
        problem = self.parse()[1]
        return [Problem((), problem)] if problem else []

    def focus(self) -> None:
        self.edit.setFocus()
