"""Editors that hold other editors: objects (grouped sections), lists (add, remove,
reorder within min/max items), checklists (arrays of enum values) and maps (key/value
rows). ``make_field(node)`` builds the editor tree for a schema plan."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import (
    QCheckBox,
    QGroupBox,
    QHBoxLayout,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from ..infra.i18n import tr
from ..widgets.labels import plain_label
from .fields import (
    BoolField,
    ConstField,
    EnumField,
    Field,
    JsonField,
    LineField,
    NumberField,
    TextField,
    button_text,
    filter_list,
    option_label,
)
from .schema import MISSING, Node
from .validate import Problem

CHECKBOX_MAX = 12  # an enum array with more values becomes a filterable checklist
HELP_MAX = 600


def make_field(node: Node, parent: QWidget | None = None) -> Field:
    classes: dict[str, type[Field]] = {
        "object": ObjectField,
        "map": MapField,
        "array": ArrayField,
        "checklist": ChecklistField,
        "text": TextField,
        "enum": EnumField,
        "number": NumberField,
        "integer": NumberField,
        "boolean": BoolField,
        "const": ConstField,
        "json": JsonField,
    }
    return classes.get(node.kind, LineField)(node, parent)


def title_label(node: Node, parent: QWidget) -> QWidget:
    text = node.label + (" *" if node.required else "")
    label = plain_label(text, parent, name="FieldTitle", selectable=False)
    label.setAccessibleName(f"{node.label}{' (required)' if node.required else ''}")
    return label


def help_label(node: Node, parent: QWidget) -> QWidget | None:
    text = node.description.strip()
    if not text:
        return None
    if len(text) > HELP_MAX:
        text = text[: HELP_MAX - 1] + "…"
    return plain_label(text, parent, name="Muted")


def split(problems: list[Problem], key: str) -> list[Problem]:
    return [Problem(p.path[1:], p.message) for p in problems if p.path[:1] == (key,)]


class ObjectField(Field):
    """Named fields, one row each (title with a required mark, editor, help text)."""

    def __init__(self, node: Node, parent: QWidget | None = None, *, root: bool = False) -> None:
        super().__init__(node, parent)
        self.named: dict[str, Field] = {}
        box: QWidget = QWidget(self) if root else QGroupBox(button_text(node.label), self)
        box.setAccessibleName(node.label)
        inner = QVBoxLayout(box)
        if root:
            inner.setContentsMargins(0, 0, 0, 0)
        inner.setSpacing(4)
        for child in node.children:
            field = make_field(child, box)
            field.changed.connect(self.changed)
            self.named[child.name] = field
            if not isinstance(field, ObjectField):
                inner.addWidget(title_label(child, box))
            helper = help_label(child, box)
            if helper is not None and isinstance(field, ObjectField):
                inner.addWidget(helper)
            inner.addWidget(field)
            if helper is not None and not isinstance(field, ObjectField):
                inner.addWidget(helper)
        self.finish(box)
        self.apply_default()

    def value(self) -> Any:
        out = {name: f.value() for name, f in self.named.items()}
        return self.or_empty({k: v for k, v in out.items() if v is not MISSING})

    def set_value(self, value: Any) -> None:
        if not isinstance(value, dict):
            return
        for name, field in self.named.items():
            if name in value:
                field.set_value(value[name])

    def local_problems(self) -> list[Problem]:
        return [
            Problem((name, *p.path), p.message)
            for name, f in self.named.items()
            for p in f.local_problems()
        ]

    def show_problems(self, problems: list[Problem]) -> None:
        for name, field in self.named.items():
            field.show_problems(split(problems, name))
        mine = [p for p in problems if not p.path or p.path[0] not in self.named]
        super().show_problems(
            [Problem((), f"{p.path[0]}: {p.message}" if p.path else p.message) for p in mine]
        )

    def field_at(self, path: tuple[str, ...]) -> Field | None:
        if not path:
            return self
        child = self.named.get(path[0])
        return child.field_at(path[1:]) if child is not None else None

    def fields(self) -> list[Field]:
        return [self] + [f for c in self.named.values() for f in c.fields()]

    def focus(self) -> None:
        for field in self.named.values():
            if not isinstance(field, ConstField):
                field.focus()
                return


class ArrayField(Field):
    """A list of editors of one kind: add, remove, move up/down; min/max items kept."""

    def __init__(self, node: Node, parent: QWidget | None = None) -> None:
        super().__init__(node, parent)
        assert node.item is not None
        self.low = int(node.schema.get("minItems", 0) or 0)
        high = node.schema.get("maxItems")
        self.high = int(high) if isinstance(high, int) else None
        self.rows: list[tuple[QWidget, Field]] = []
        self.holder = QVBoxLayout()
        self.holder.setContentsMargins(0, 0, 0, 0)
        self.add_button = QPushButton(
            button_text(f"Add {node.item.label.lower()}" if node.item.title else "Add item"), self
        )
        self.add_button.setAccessibleName(tr("{label}: add an item").format(label=node.label))
        self.add_button.clicked.connect(self._on_add)
        outer = QVBoxLayout()
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addLayout(self.holder)
        row = QHBoxLayout()
        row.addWidget(self.add_button)
        row.addStretch(1)
        outer.addLayout(row)
        self.finish(outer)
        if node.default is not MISSING:
            self.apply_default()
        else:
            for _ in range(min(self.low, 50)):
                self.add_row()
        self._update_buttons()

    def add_row(self, value: Any = MISSING) -> Field:
        assert self.node.item is not None
        line = QWidget(self)
        layout = QHBoxLayout(line)
        layout.setContentsMargins(0, 0, 0, 0)
        field = make_field(self.node.item, line)
        if value is not MISSING:
            field.set_value(value)
        field.changed.connect(self.changed)
        layout.addWidget(field, 1)
        for text, name, slot in (
            ("↑", "Move up", self._on_up),
            ("↓", "Move down", self._on_down),
            ("✕", "Remove", self._on_remove),
        ):
            button = QToolButton(line)
            button.setText(text)
            button.setAccessibleName(tr("{name} item").format(name=name))
            button.setToolTip(name)
            button.setProperty("role", name)
            button.clicked.connect(slot)
            layout.addWidget(button, 0, Qt.AlignmentFlag.AlignTop)
        self.rows.append((line, field))
        self.holder.addWidget(line)
        self._update_buttons()
        return field

    def _row_of(self, button: object) -> int:
        for n, (line, _field) in enumerate(self.rows):
            if isinstance(button, QWidget) and button.parent() is line:
                return n
        return -1

    @Slot()
    def _on_add(self) -> None:
        self.add_row().focus()
        self.changed.emit()

    @Slot()
    def _on_remove(self) -> None:
        self.remove_row(self._row_of(self.sender()))

    def remove_row(self, n: int) -> None:
        if not 0 <= n < len(self.rows) or len(self.rows) <= self.low:
            return
        line, _field = self.rows.pop(n)
        self.holder.removeWidget(line)
        line.deleteLater()
        self._update_buttons()
        self.changed.emit()

    @Slot()
    def _on_up(self) -> None:
        self.move_row(self._row_of(self.sender()), -1)

    @Slot()
    def _on_down(self) -> None:
        self.move_row(self._row_of(self.sender()), 1)

    def move_row(self, n: int, step: int) -> None:
        m = n + step
        if not (0 <= n < len(self.rows) and 0 <= m < len(self.rows)):
            return
        self.rows[n], self.rows[m] = self.rows[m], self.rows[n]
        for line, _field in self.rows:
            self.holder.removeWidget(line)
        for line, _field in self.rows:
            self.holder.addWidget(line)
        self._update_buttons()
        self.changed.emit()

    def _update_buttons(self) -> None:
        self.add_button.setEnabled(self.high is None or len(self.rows) < self.high)
        for n, (line, _field) in enumerate(self.rows):
            for button in line.findChildren(QToolButton):
                role = button.property("role")
                if role == "Remove":
                    button.setEnabled(len(self.rows) > self.low)
                elif role == "Move up":
                    button.setEnabled(n > 0)
                elif role == "Move down":
                    button.setEnabled(n < len(self.rows) - 1)

    def value(self) -> Any:
        return self.or_empty([None if (v := f.value()) is MISSING else v for _line, f in self.rows])

    def set_value(self, value: Any) -> None:
        if not isinstance(value, list):
            return
        while self.rows:
            line, _field = self.rows.pop()
            self.holder.removeWidget(line)
            line.deleteLater()
        for item in value[:500]:
            self.add_row(item)
        self._update_buttons()
        self.changed.emit()

    def local_problems(self) -> list[Problem]:
        return [
            Problem((str(n), *p.path), p.message)
            for n, (_line, f) in enumerate(self.rows)
            for p in f.local_problems()
        ]

    def show_problems(self, problems: list[Problem]) -> None:
        for n, (_line, field) in enumerate(self.rows):
            field.show_problems(split(problems, str(n)))
        super().show_problems(
            [
                p
                for p in problems
                if not p.path or not p.path[0].isdigit() or int(p.path[0]) >= len(self.rows)
            ]
        )

    def field_at(self, path: tuple[str, ...]) -> Field | None:
        if not path:
            return self
        if path[0].isdigit() and int(path[0]) < len(self.rows):
            return self.rows[int(path[0])][1].field_at(path[1:])
        return None

    def fields(self) -> list[Field]:
        return [self] + [g for _line, f in self.rows for g in f.fields()]

    def focus(self) -> None:
        if self.rows:
            self.rows[0][1].focus()
        else:
            self.add_button.setFocus()


class ChecklistField(Field):
    """An array of enum values: check boxes, or a filterable checklist for many values."""

    def __init__(self, node: Node, parent: QWidget | None = None) -> None:
        super().__init__(node, parent)
        self.values = list(node.options)
        self.boxes: list[QCheckBox] = []
        self.list: QListWidget | None = None
        if len(self.values) <= CHECKBOX_MAX:
            row = QVBoxLayout()
            row.setContentsMargins(0, 0, 0, 0)
            for value in self.values:
                box = QCheckBox(button_text(option_label(value)), self)
                box.setAccessibleName(f"{node.label}: {option_label(value)}")
                box.toggled.connect(self._on_edit)
                self.boxes.append(box)
                row.addWidget(box)
            self.finish(row)
        else:
            self.finish(self._build_list())
        self.apply_default()

    def _build_list(self) -> QWidget:
        holder = QWidget(self)
        layout = QVBoxLayout(holder)
        layout.setContentsMargins(0, 0, 0, 0)
        self.filter = QLineEdit(holder)
        self.filter.setPlaceholderText(
            tr("Filter {values:,} values").format(values=len(self.values))
        )
        self.filter.setAccessibleName(tr("{label}: filter").format(label=self.node.label))
        self.filter.textChanged.connect(self._on_filter)
        self.list = QListWidget(holder)
        self.list.setAccessibleName(self.node.label)
        self.list.setUniformItemSizes(True)
        self.list.setMaximumHeight(220)
        for value in self.values:
            item = QListWidgetItem(option_label(value))
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Unchecked)
            self.list.addItem(item)
        self.list.itemChanged.connect(self._on_edit)
        layout.addWidget(self.filter)
        layout.addWidget(self.list)
        return holder

    @Slot(str)
    def _on_filter(self, text: str) -> None:
        assert self.list is not None
        filter_list(self.list, text)

    def checked(self) -> list[bool]:
        if self.list is not None:
            return [
                self.list.item(n).checkState() == Qt.CheckState.Checked
                for n in range(self.list.count())
            ]
        return [b.isChecked() for b in self.boxes]

    def set_checked(self, n: int, on: bool) -> None:
        if self.list is not None:
            self.list.item(n).setCheckState(
                Qt.CheckState.Checked if on else Qt.CheckState.Unchecked
            )
        else:
            self.boxes[n].setChecked(on)

    def value(self) -> Any:
        picked = [v for v, on in zip(self.values, self.checked(), strict=True) if on]
        return self.or_empty(picked)

    def set_value(self, value: Any) -> None:
        chosen = value if isinstance(value, list) else []
        for n, v in enumerate(self.values):
            self.set_checked(n, v in chosen)

    def focus(self) -> None:
        if self.list is not None:
            self.list.setFocus()
        elif self.boxes:
            self.boxes[0].setFocus()


class MapField(Field):
    """Free named entries: a key and a value per row."""

    def __init__(self, node: Node, parent: QWidget | None = None) -> None:
        super().__init__(node, parent)
        assert node.item is not None
        self.rows: list[tuple[QWidget, QLineEdit, Field]] = []
        self.holder = QVBoxLayout()
        self.holder.setContentsMargins(0, 0, 0, 0)
        self.add_button = QPushButton(tr("Add entry"), self)
        self.add_button.setAccessibleName(tr("{label}: add an entry").format(label=node.label))
        self.add_button.clicked.connect(self._on_add)
        outer = QVBoxLayout()
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addLayout(self.holder)
        outer.addWidget(self.add_button, 0, Qt.AlignmentFlag.AlignLeft)
        self.finish(outer)
        if node.default is not MISSING:
            self.apply_default()
        elif node.schema.get("minProperties"):
            self.add_row()

    def add_row(self, key: str = "", value: Any = MISSING) -> tuple[QLineEdit, Field]:
        assert self.node.item is not None
        line = QWidget(self)
        layout = QHBoxLayout(line)
        layout.setContentsMargins(0, 0, 0, 0)
        name = QLineEdit(key, line)
        name.setPlaceholderText(tr("name"))
        name.setAccessibleName(tr("{label}: entry name").format(label=self.node.label))
        name.textChanged.connect(self._on_edit)
        field = make_field(self.node.item, line)
        if value is not MISSING:
            field.set_value(value)
        field.changed.connect(self.changed)
        remove = QToolButton(line)
        remove.setText("✕")
        remove.setAccessibleName(tr("Remove entry"))
        remove.clicked.connect(self._on_remove)
        layout.addWidget(name, 1)
        layout.addWidget(field, 2)
        layout.addWidget(remove, 0, Qt.AlignmentFlag.AlignTop)
        self.rows.append((line, name, field))
        self.holder.addWidget(line)
        return name, field

    @Slot()
    def _on_add(self) -> None:
        self.add_row()[0].setFocus()
        self.changed.emit()

    @Slot()
    def _on_remove(self) -> None:
        sender = self.sender()
        for n, (line, _name, _field) in enumerate(self.rows):
            if isinstance(sender, QWidget) and sender.parent() is line:
                self.rows.pop(n)
                self.holder.removeWidget(line)
                line.deleteLater()
                self.changed.emit()
                return

    def value(self) -> Any:
        out = {}
        for _line, name, field in self.rows:
            value = field.value()
            if name.text().strip():
                out[name.text().strip()] = None if value is MISSING else value
        return self.or_empty(out)

    def set_value(self, value: Any) -> None:
        if not isinstance(value, dict):
            return
        while self.rows:
            line, _name, _field = self.rows.pop()
            self.holder.removeWidget(line)
            line.deleteLater()
        for key, item in list(value.items())[:500]:
            self.add_row(str(key), item)
        self.changed.emit()

    def local_problems(self) -> list[Problem]:
        keys = [n.text().strip() for _l, n, _f in self.rows if n.text().strip()]
        if len(keys) != len(set(keys)):
            return [Problem((), "two entries have the same name")]
        return [
            Problem((name.text().strip(), *p.path), p.message)
            for _l, name, f in self.rows
            for p in f.local_problems()
        ]

    def show_problems(self, problems: list[Problem]) -> None:
        keys = {name.text().strip(): field for _l, name, field in self.rows}
        for key, field in keys.items():
            field.show_problems(split(problems, key))
        super().show_problems(
            [
                Problem((), f"{p.path[0]}: {p.message}" if p.path else p.message)
                for p in problems
                if not p.path or p.path[0] not in keys
            ]
        )

    def field_at(self, path: tuple[str, ...]) -> Field | None:
        if not path:
            return self
        for _line, name, field in self.rows:
            if name.text().strip() == path[0]:
                return field.field_at(path[1:])
        return None

    def fields(self) -> list[Field]:
        return [self] + [g for _l, _n, f in self.rows for g in f.fields()]
