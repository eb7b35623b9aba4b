"""Answer views: one per interaction type, each producing a response for the schema.

A view shows the editors for one interaction and says what the answer is
(``value()``), whether it is valid (the view's own rules, then the agent's JSON Schema
with ``jsonschema``), and when the operator asked to submit. A kind's dedicated view is
used only when the agent's schema fits it (``fits``); otherwise the generic schema form
is shown, below the kind's material (the diff, the conflict, the memory change).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any, ClassVar

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QButtonGroup,
    QCheckBox,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QRadioButton,
    QVBoxLayout,
    QWidget,
)

from proctor.core.models import Question, QuestionKind

from ..infra.i18n import tr
from ..widgets.labels import plain_label, plain_tip, reserve_lines, section
from .fields import button_text, filter_list, list_text, option_label
from .form import SchemaForm
from .schema import MISSING
from .validate import Checker, Problem

BUTTONS_MAX = 50  # options shown as radio buttons / check boxes; more go in a list
DESCRIPTION_MAX = 400


def props(schema: Any) -> dict:
    p = schema.get("properties") if isinstance(schema, dict) else None
    return p if isinstance(p, dict) else {}


def enum_of(schema: Any, key: str, fallback: list[Any]) -> list[Any]:
    sub = props(schema).get(key)
    if isinstance(sub, dict):
        values = sub.get("enum")
        if not isinstance(values, list) and isinstance(sub.get("items"), dict):
            values = sub["items"].get("enum")
        if isinstance(values, list):
            return values
    return fallback


def request_dict(question: Question) -> dict:
    return question.request if isinstance(question.request, dict) else {}


def text_of(value: Any, limit: int = 2_000_000) -> str:
    """Agent material as text, bounded (a non-string is shown as JSON)."""
    if value is None:
        return ""
    if not isinstance(value, str):
        import json

        value = json.dumps(value, indent=2, ensure_ascii=False, default=str)
    return value if len(value) <= limit else value[:limit] + "\n… (cut)"


def problem_line(parent: QWidget) -> QLabel:
    """The view's problem line: its room kept, shown or not (the fields and buttons below
    never move when a problem comes or goes); one line, the whole text in its tooltip."""
    label = reserve_lines(plain_label(parent=parent, name="FieldError", selectable=False))
    label.setStyleSheet("color: #c62828;")
    label.hide()
    return label


class AnswerView(QWidget):
    """Base of the per-type answer views.

    Signals:
        edited(): the answer changed.
        valid_changed(bool): the answer became valid / invalid.
        submit_requested(): the operator asked to submit (Ctrl+Enter).
    """

    edited = Signal()
    valid_changed = Signal(bool)
    submit_requested = Signal()
    KEYS: ClassVar[frozenset[str]] = frozenset()
    MAIN: ClassVar[str] = ""

    def __init__(self, question: Question, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.question = question
        self.schema = question.response_schema
        self.checker = Checker(self.schema)
        self._valid = False
        self._server: list[Problem] = []
        self.touched = False  # problems are shown once the operator has changed something
        self.problem = problem_line(self)
        self.layout_ = QVBoxLayout(self)
        self.layout_.setContentsMargins(0, 0, 0, 0)
        submit = QShortcut(QKeySequence("Ctrl+Return"), self)
        submit.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        submit.activated.connect(self.submit_requested)
        enter = QShortcut(QKeySequence("Ctrl+Enter"), self)
        enter.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        enter.activated.connect(self.submit_requested)

    @classmethod
    def fits(cls, schema: Any) -> bool:
        """Whether this view can produce every answer the schema asks for."""
        if not isinstance(schema, dict) or schema.get("type") != "object":
            return False
        names = set(props(schema))
        required = schema.get("required", [])
        return (
            cls.MAIN in names
            and names <= cls.KEYS
            and isinstance(required, list)
            and set(required) <= names
        )

    # -- the answer
    def value(self) -> Any:
        raise NotImplementedError

    def view_problems(self) -> list[Problem]:
        """Rules of the view itself (e.g. a comment is needed to request changes)."""
        return []

    def current_problems(self) -> list[Problem]:
        own = self.view_problems()
        if own:
            return own
        value = self.value()
        if value is MISSING:
            return [Problem((), "required")]
        return self.checker.problems(value) + self._server

    def problem_texts(self) -> list[str]:
        return [f"{p.where}: {p.message}" for p in self.current_problems()]

    def is_valid(self) -> bool:
        return self._valid

    def untouched(self) -> None:
        """Start quiet: problems show after the first change (the submit hint says them)."""
        self.touched = False
        self.check()

    def check(self) -> None:
        found = self.current_problems()
        shown = found if self.touched or self._server else []
        text = "; ".join(f"{p.where}: {p.message}" if p.path else p.message for p in shown[:6])
        self.problem.setText(text)
        self.problem.setToolTip(plain_tip(text))
        self.problem.setVisible(bool(text))
        if (not found) != self._valid:
            self._valid = not found
            self.valid_changed.emit(self._valid)

    @Slot()
    def changed(self) -> None:
        self._server = []
        self.touched = True
        self.check()
        self.edited.emit()

    @Slot(int, bool)
    def choice_toggled(self, _id: int, checked: bool) -> None:
        """A button group's idToggled: the answer changed once the new button is on."""
        if checked:
            self.changed()

    def show_server_problem(self, field: str, message: str) -> None:
        self._server = [Problem(tuple(p for p in field.split("/") if p), message)]
        self.check()

    def add_note(self) -> QLineEdit | None:
        """The optional "Note to the agent" line, added when the schema has a note."""
        if "note" not in props(self.schema):
            return None
        note = QLineEdit(self)
        note.setAccessibleName(tr("Note to the agent"))
        note.setPlaceholderText(tr("Note to the agent (optional)"))
        note.textChanged.connect(self.changed)
        self.layout_.addWidget(note)
        return note

    def before_submit(self) -> Callable[[], Any] | None:
        """Work to do off the GUI thread before the answer is sent (e.g. store a secret)."""
        return None

    def submitted(self) -> None:
        """The answer was accepted: forget anything sensitive."""

    # -- drafts and focus
    def draft(self) -> Any:
        return self.value()

    def restore(self, draft: Any) -> None:
        pass

    def focus_primary(self) -> None:
        self.setFocus()


class QuestionView(AnswerView):
    """A free-text answer; Ctrl+Enter submits."""

    KEYS = frozenset({"text"})
    MAIN = "text"

    def __init__(self, question: Question, parent: QWidget | None = None) -> None:
        super().__init__(question, parent)
        self.edit = QPlainTextEdit(self)
        self.edit.setAccessibleName(tr("Your answer"))
        self.edit.setPlaceholderText(tr("Your answer  (Ctrl+Enter sends it)"))
        self.edit.setTabChangesFocus(True)
        self.edit.setMinimumHeight(110)
        self.edit.textChanged.connect(self.changed)
        self.layout_.addWidget(section("Your answer", self))
        self.layout_.addWidget(self.edit)
        self.layout_.addWidget(self.problem)
        self.check()

    def value(self) -> Any:
        return {"text": self.edit.toPlainText()}

    def restore(self, draft: Any) -> None:
        if isinstance(draft, dict):
            self.edit.setPlainText(str(draft.get("text", "")))

    def focus_primary(self) -> None:
        self.edit.setFocus()


def choice_options(question: Question) -> list[dict]:
    """Options as dicts with value, label, description (plain strings become values)."""
    raw = list(question.options or [])
    if not raw:
        raw = enum_of(question.response_schema, "choice", [])
    out = []
    for option in raw:
        if isinstance(option, dict) and "value" in option:
            out.append(
                {
                    "value": option["value"],
                    "label": str(option.get("label") or option_label(option["value"])),
                    "description": str(option.get("description") or ""),
                }
            )
        else:
            out.append({"value": option, "label": option_label(option), "description": ""})
    return out


class ChoiceView(AnswerView):
    """Options with labels and descriptions, one or several; keys 1-9 pick, wherever the
    focus is in the window while the view is shown, except in a field that takes typing
    (the application's ``TypingGuard``), and while the host's ``number_keys`` says so."""

    KEYS = frozenset({"choice", "note"})
    MAIN = "choice"

    def __init__(self, question: Question, parent: QWidget | None = None) -> None:
        super().__init__(question, parent)
        self.options = choice_options(question)
        sub = props(self.schema).get("choice", {})
        self.multi = isinstance(sub, dict) and sub.get("type") == "array"
        self.buttons: list[QRadioButton | QCheckBox] = []
        self.group = QButtonGroup(self)
        self.group.setExclusive(not self.multi)
        self.list: QListWidget | None = None
        self.number_keys: Callable[[], bool] = lambda: True  # the host's single-key switch
        hint = "Pick any that apply" if self.multi else "Pick one"
        keys = "  (keys 1–9 pick)" if self.options else ""
        self.layout_.addWidget(section(f"{hint}{keys}", self))
        if len(self.options) <= BUTTONS_MAX:
            self._build_buttons()
        else:
            self._build_list()
        self.note = self.add_note()
        self.layout_.addWidget(self.problem)
        for n in range(1, 10):  # anywhere in the window while shown (the list just clicked)
            key = QShortcut(QKeySequence(str(n)), self)  # never in a field: TypingGuard
            key.setContext(Qt.ShortcutContext.WindowShortcut)
            key.activated.connect(partial(self._on_number, n - 1))
        self.check()

    def _build_buttons(self) -> None:
        for n, option in enumerate(self.options):
            number = f"{n + 1}. " if n < 9 else ""
            text = button_text(number + option["label"])
            button: QRadioButton | QCheckBox = (
                QCheckBox(text, self) if self.multi else QRadioButton(text, self)
            )
            button.setAccessibleName(list_text(option["label"])[:200])
            self.group.addButton(button, n)
            self.buttons.append(button)
            self.layout_.addWidget(button)
            if option["description"]:
                desc = option["description"]
                desc = desc if len(desc) <= DESCRIPTION_MAX else desc[:DESCRIPTION_MAX] + "…"
                help_text = plain_label(desc, self, name="Muted")
                help_text.setContentsMargins(24, 0, 0, 4)
                self.layout_.addWidget(help_text)
        self.group.idToggled.connect(self._on_toggled)

    def _build_list(self) -> None:
        self.filter = QLineEdit(self)
        self.filter.setPlaceholderText(
            tr("Filter {options:,} options").format(options=len(self.options))
        )
        self.filter.setAccessibleName(tr("Filter the options"))
        self.filter.textChanged.connect(self._on_filter)
        self.list = QListWidget(self)
        self.list.setAccessibleName(tr("Options"))
        self.list.setUniformItemSizes(True)
        self.list.setMinimumHeight(200)
        for option in self.options:
            item = QListWidgetItem(list_text(option["label"]))  # escaped as the buttons are
            if self.multi:
                item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
                item.setCheckState(Qt.CheckState.Unchecked)
            self.list.addItem(item)
        self.list.itemSelectionChanged.connect(self.changed)
        self.list.itemChanged.connect(self.changed)
        self.layout_.addWidget(self.filter)
        self.layout_.addWidget(self.list)

    @Slot(str)
    def _on_filter(self, text: str) -> None:
        assert self.list is not None
        filter_list(self.list, text)

    @Slot(int, bool)
    def _on_toggled(self, _id: int, _checked: bool) -> None:
        self.changed()

    def _on_number(self, n: int) -> None:
        if self.number_keys():
            self.pick(n)

    def pick(self, n: int) -> None:
        """Choose option n (toggle it when several may be chosen)."""
        if not 0 <= n < len(self.options):
            return
        if self.list is not None:
            item = self.list.item(n)
            if self.multi:
                on = item.checkState() == Qt.CheckState.Checked
                item.setCheckState(Qt.CheckState.Unchecked if on else Qt.CheckState.Checked)
            else:
                self.list.setCurrentRow(n)
            return
        button = self.buttons[n]
        button.setChecked(not button.isChecked() if self.multi else True)
        button.setFocus()

    def chosen(self) -> list[int]:
        if self.list is not None:
            if self.multi:
                return [
                    n
                    for n in range(self.list.count())
                    if self.list.item(n).checkState() == Qt.CheckState.Checked
                ]
            return [self.list.row(i) for i in self.list.selectedItems()]
        return [n for n, b in enumerate(self.buttons) if b.isChecked()]

    def value(self) -> Any:
        picked = [self.options[n]["value"] for n in self.chosen()]
        out: dict[str, Any] = {}
        if self.multi:
            out["choice"] = picked
        elif picked:
            out["choice"] = picked[0]
        if self.note is not None and self.note.text():
            out["note"] = self.note.text()
        return out

    def restore(self, draft: Any) -> None:
        if not isinstance(draft, dict):
            return
        wanted = draft.get("choice")
        wanted = wanted if isinstance(wanted, list) else [wanted]
        for n, option in enumerate(self.options):
            if option["value"] in wanted and n not in self.chosen():
                self.pick(n)
        if self.note is not None:
            self.note.setText(str(draft.get("note", "")))

    def focus_primary(self) -> None:
        if self.list is not None:
            self.list.setFocus()
        elif self.buttons:
            self.buttons[0].setFocus()


def consequence(question: Question) -> str:
    """What confirming means, in words (the agent's own words when it gave them)."""
    request = request_dict(question)
    for key in ("consequence", "consequences", "effect", "impact"):
        if isinstance(request.get(key), str) and request[key].strip():
            said = request[key].strip()
            return said if len(said) <= 2000 else said[:2000] + "…"
    prompt = " ".join(question.prompt.split())
    prompt = prompt if len(prompt) <= 300 else prompt[:300] + "…"
    text = (
        f"If you confirm, {question.agent} goes ahead with what it asked: “{prompt}”. "
        f"If you decline, it does not, and carries on without it."
    )
    facts = request_facts(request)
    return f"{text}\nIt concerns: {facts}" if facts else text


def request_facts(request: dict, limit: int = 400) -> str:
    """The request's short top-level values, e.g. "count: 280 · sample: a, b, c"."""
    parts = []
    for key, value in list(request.items())[:12]:
        if isinstance(value, list) and all(isinstance(v, str | int | float) for v in value):
            value = ", ".join(str(v) for v in value[:10]) + ("…" if len(value) > 10 else "")
        if isinstance(value, str | int | float) and not isinstance(value, bool):
            parts.append(f"{key}: {' '.join(str(value).split())[:120]}")
    text = " · ".join(parts)
    return text if len(text) <= limit else text[: limit - 1] + "…"


class ConfirmationView(AnswerView):
    """Yes or no, with the consequence spelled out."""

    KEYS = frozenset({"confirmed", "note"})
    MAIN = "confirmed"

    def __init__(self, question: Question, parent: QWidget | None = None) -> None:
        super().__init__(question, parent)
        self.layout_.addWidget(section("What confirming does", self))
        self.consequence = plain_label(consequence(question), self)
        self.consequence.setAccessibleName(tr("Consequence"))
        self.layout_.addWidget(self.consequence)
        self.group = QButtonGroup(self)
        self.yes = QRadioButton(tr("Yes — confirm, go ahead"), self)
        self.no = QRadioButton(tr("No — decline, do not do it"), self)
        for n, button in enumerate((self.yes, self.no)):
            self.group.addButton(button, n)
            self.layout_.addWidget(button)
        self.group.idToggled.connect(self.choice_toggled)
        self.note = self.add_note()
        self.layout_.addWidget(self.problem)
        self.check()

    def value(self) -> Any:
        out: dict[str, Any] = {}
        if self.group.checkedButton() is not None:
            out["confirmed"] = self.yes.isChecked()
        if self.note is not None and self.note.text():
            out["note"] = self.note.text()
        return out

    def view_problems(self) -> list[Problem]:
        if self.group.checkedButton() is None:
            return [Problem(("confirmed",), "choose yes or no")]
        return []

    def restore(self, draft: Any) -> None:
        if isinstance(draft, dict) and "confirmed" in draft:
            (self.yes if draft["confirmed"] else self.no).setChecked(True)
        if isinstance(draft, dict) and self.note is not None:
            self.note.setText(str(draft.get("note", "")))

    def focus_primary(self) -> None:
        self.yes.setFocus()


class FormView(AnswerView):
    """The generic schema form, optionally below the kind's material."""

    def __init__(
        self, question: Question, parent: QWidget | None = None, *, material: QWidget | None = None
    ) -> None:
        super().__init__(question, parent)
        self.material = material
        if material is not None:
            material.setParent(self)
            self.layout_.addWidget(material)
        self.layout_.addWidget(section("Your answer", self))
        self.form = SchemaForm(self.schema, self)
        self.form.edited.connect(self.changed)
        self.layout_.addWidget(self.form)
        self.layout_.addWidget(self.problem)
        self.check()

    @classmethod
    def fits(cls, schema: Any) -> bool:
        return True

    def value(self) -> Any:
        return self.form.value()

    def current_problems(self) -> list[Problem]:
        found = self.form.current_problems()
        return found + self._server

    def check(self) -> None:
        super().check()
        self.problem.hide()  # the form shows each problem at its field
        found = self.current_problems()
        self.form.display(found if self.touched or self._server else [])

    def draft(self) -> Any:
        return self.form.draft()

    def restore(self, draft: Any) -> None:
        if isinstance(draft, dict):
            self.form.restore(draft)

    def focus_primary(self) -> None:
        self.form.focus_first()


KIND_VIEWS: dict[QuestionKind, type[AnswerView]] = {
    QuestionKind.QUESTION: QuestionView,
    QuestionKind.CHOICE: ChoiceView,
    QuestionKind.CONFIRMATION: ConfirmationView,
    QuestionKind.FORM: FormView,
}
