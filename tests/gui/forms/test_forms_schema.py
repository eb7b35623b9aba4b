"""Schema coverage: a table of JSON Schemas -> the generated form, filled through its
widgets, gives a value that validates; invalid input is refused with a message at the
field. Plus the plan's bounds ($ref loops, size) and the raw JSON tab."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import jsonschema
import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QToolButton

from proctor.gui.forms.containers import ArrayField, ChecklistField, MapField
from proctor.gui.forms.fields import EnumField, JsonField
from proctor.gui.forms.form import RAW_TAB, SchemaForm
from proctor.gui.forms.schema import plan

# ---------------------------------------------------------------- actions on a form


def editor(form: SchemaForm, path: tuple[str, ...]):
    found = form.field(*path)
    assert found is not None, f"no field at {path}"
    return found


def T(path: tuple[str, ...], text: str):
    """Type text into the field's editor, replacing what was there."""

    def act(form: SchemaForm, qtbot) -> None:
        edit = editor(form, path).edit
        edit.setFocus()
        edit.selectAll()
        qtbot.keyClicks(edit, text)

    return act


def CLEAR(path: tuple[str, ...]):
    def act(form: SchemaForm, qtbot) -> None:
        edit = editor(form, path).edit
        edit.setFocus()
        edit.selectAll()
        qtbot.keyClick(edit, Qt.Key.Key_Delete)

    return act


def C(path: tuple[str, ...], n: int):
    """Choose enum value n (click the radio button, or pick it in the combo box)."""

    def act(form: SchemaForm, qtbot) -> None:
        field_ = editor(form, path)
        assert isinstance(field_, EnumField)
        if field_.radios is not None:
            click(qtbot, field_.radios.button(n))
        else:
            field_.combo.setCurrentIndex(n + 1)

    return act


def X(path: tuple[str, ...], n: int):
    """Tick (or untick) item n of a checklist, or the check box of a boolean."""

    def act(form: SchemaForm, qtbot) -> None:
        field_ = editor(form, path)
        if isinstance(field_, ChecklistField):
            if field_.boxes:
                click(qtbot, field_.boxes[n])
            else:
                on = field_.checked()[n]
                field_.set_checked(n, not on)
        else:
            click(qtbot, field_.box)

    return act


def ADD(path: tuple[str, ...]):
    def act(form: SchemaForm, qtbot) -> None:
        field_ = editor(form, path)
        assert isinstance(field_, ArrayField | MapField)
        qtbot.mouseClick(field_.add_button, Qt.MouseButton.LeftButton)

    return act


def KEY(path: tuple[str, ...], row: int, name: str):
    """Name entry ``row`` of a map."""

    def act(form: SchemaForm, qtbot) -> None:
        field_ = editor(form, path)
        assert isinstance(field_, MapField)
        qtbot.keyClicks(field_.rows[row][1], name)

    return act


def DOWN(path: tuple[str, ...], row: int):
    def act(form: SchemaForm, qtbot) -> None:
        field_ = editor(form, path)
        assert isinstance(field_, ArrayField)
        line = field_.rows[row][0]
        [down] = [b for b in line.findChildren(QToolButton) if b.property("role") == "Move down"]
        qtbot.mouseClick(down, Qt.MouseButton.LeftButton)

    return act


def RAW(text: str):
    def act(form: SchemaForm, qtbot) -> None:
        if form.supported:
            form.tabs.setCurrentIndex(RAW_TAB)
        form.raw.clear()
        qtbot.keyClicks(form.raw, text)

    return act


def click(qtbot, button) -> None:
    """Click a check box / radio button on its indicator (its centre may be empty space)."""
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton, pos=QPoint(8, button.height() // 2))


@dataclass
class Case:
    id: str
    schema: dict
    fill: list = field(default_factory=list)
    expected: Any = None
    bad: list = field(default_factory=list)
    bad_at: tuple[str, ...] | None = None  # None: the message is above the form (raw JSON)
    says: str = ""


def obj(props: dict, required: list[str] | None = None, **extra: Any) -> dict:
    return {
        "type": "object",
        "properties": props,
        "required": required or list(props),
        "additionalProperties": False,
        **extra,
    }


S = {"type": "string"}
CASES = [
    Case(
        "string_min_length",
        obj({"name": {**S, "minLength": 2}}),
        [T(("name",), "Ada")],
        {"name": "Ada"},
        [T(("name",), "A")],
        ("name",),
        "at least 2 characters",
    ),
    Case(
        "string_max_length",
        obj({"code": {**S, "maxLength": 5}}),
        [T(("code",), "ABCDE")],
        {"code": "ABCDE"},
        [T(("code",), "ABCDEF")],
        ("code",),
        "at most 5 characters",
    ),
    Case(
        "string_pattern",
        obj({"version": {**S, "pattern": r"^\d+\.\d+\.\d+$"}}),
        [T(("version",), "1.2.3")],
        {"version": "1.2.3"},
        [T(("version",), "1.2")],
        ("version",),
        "must match the pattern",
    ),
    Case(
        "multi_line_text",
        obj({"notes": {**S, "maxLength": 1000, "minLength": 3}}),
        [T(("notes",), "line one")],
        {"notes": "line one"},
        [T(("notes",), "ab")],
        ("notes",),
        "at least 3 characters",
    ),
    Case(
        "optional_string_left_out",
        obj({"a": S, "b": S}, ["a"]),
        [T(("a",), "x")],
        {"a": "x"},
        [],
        None,
    ),
    Case(
        "enum_radio",
        obj({"color": {"enum": ["red", "green", "blue"]}}),
        [C(("color",), 1)],
        {"color": "green"},
    ),
    Case(
        "enum_combo",
        obj({"country": {"enum": ["DE", "FR", "NL", "BE", "AT", "CH", "IT"]}}),
        [C(("country",), 3)],
        {"country": "BE"},
    ),
    Case("enum_integers", obj({"level": {"enum": [1, 2, 3]}}), [C(("level",), 2)], {"level": 3}),
    Case(
        "format_date",
        obj({"day": {**S, "format": "date"}}),
        [T(("day",), "2026-02-03")],
        {"day": "2026-02-03"},
        [T(("day",), "2026-02-30")],
        ("day",),
        "not a valid date",
    ),
    Case(
        "format_date_time",
        obj({"at": {**S, "format": "date-time"}}),
        [T(("at",), "2026-02-03T09:00:00Z")],
        {"at": "2026-02-03T09:00:00Z"},
        [T(("at",), "2026-02-03 09:00")],
        ("at",),
        "date and time with a zone",
    ),
    Case(
        "format_email",
        obj({"to": {**S, "format": "email"}}),
        [T(("to",), "ada@example.com")],
        {"to": "ada@example.com"},
        [T(("to",), "ada")],
        ("to",),
        "not an email",
    ),
    Case(
        "format_uri",
        obj({"url": {**S, "format": "uri"}}),
        [T(("url",), "https://example.com/x")],
        {"url": "https://example.com/x"},
        [T(("url",), "example")],
        ("url",),
        "not a full address",
    ),
    Case(
        "integer_bounds",
        obj({"n": {"type": "integer", "minimum": 1, "maximum": 10}}),
        [T(("n",), "7")],
        {"n": 7},
        [T(("n",), "11")],
        ("n",),
        "at most 10",
    ),
    Case(
        "integer_not_a_number",
        obj({"n": {"type": "integer"}}),
        [T(("n",), "42")],
        {"n": 42},
        [T(("n",), "4x")],
        ("n",),
        "not a whole number",
    ),
    Case(
        "number_exclusive_minimum",
        obj({"amount": {"type": "number", "exclusiveMinimum": 0, "maximum": 5000}}),
        [T(("amount",), "49.9")],
        {"amount": 49.9},
        [T(("amount",), "0")],
        ("amount",),
        "more than 0",
    ),
    Case(
        "number_multiple_of",
        obj({"step": {"type": "number", "multipleOf": 0.5}}),
        [T(("step",), "2.5")],
        {"step": 2.5},
        [T(("step",), "2.3")],
        ("step",),
        "multiple of 0.5",
    ),
    Case("boolean", obj({"ok": {"type": "boolean"}}), [X(("ok",), 0)], {"ok": True}),
    Case(
        "defaults_prefilled",
        obj(
            {
                "rollout": {"type": "integer", "default": 10},
                "channel": {"enum": ["stable", "beta"], "default": "beta"},
                "notify": {"type": "boolean", "default": True},
                "name": {**S, "default": "x"},
            }
        ),
        [],
        {"rollout": 10, "channel": "beta", "notify": True, "name": "x"},
        [CLEAR(("rollout",)), T(("rollout",), "abc")],
        ("rollout",),
        "not a whole number",
    ),
    Case(
        "nested_object",
        obj({"owner": obj({"name": S, "email": {**S, "format": "email"}}, ["name"])}),
        [T(("owner", "name"), "Ada")],
        {"owner": {"name": "Ada"}},
        [T(("owner", "email"), "nope")],
        ("owner", "email"),
        "not an email",
    ),
    Case(
        "array_of_strings",
        obj(
            {
                "tags": {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": 3,
                    "items": {**S, "minLength": 1},
                }
            }
        ),
        [T(("tags", "0"), "a"), ADD(("tags",)), T(("tags", "1"), "b")],
        {"tags": ["a", "b"]},
        [ADD(("tags",))],
        ("tags", "2"),
        "required",
    ),
    Case(
        "array_reorder",
        obj({"steps": {"type": "array", "items": S}}),
        [
            ADD(("steps",)),
            T(("steps", "0"), "first"),
            ADD(("steps",)),
            T(("steps", "1"), "second"),
            DOWN(("steps",), 0),
        ],
        {"steps": ["second", "first"]},
    ),
    Case(
        "array_of_objects",
        obj(
            {
                "lines": {
                    "type": "array",
                    "minItems": 1,
                    "items": obj({"sku": S, "qty": {"type": "integer", "minimum": 1}}),
                }
            }
        ),
        [T(("lines", "0", "sku"), "A1"), T(("lines", "0", "qty"), "2")],
        {"lines": [{"sku": "A1", "qty": 2}]},
        [T(("lines", "0", "qty"), "0")],
        ("lines", "0", "qty"),
        "at least 1",
    ),
    Case(
        "enum_array_checklist",
        obj(
            {
                "channels": {
                    "type": "array",
                    "minItems": 1,
                    "uniqueItems": True,
                    "items": {"enum": ["stable", "beta", "internal"]},
                }
            }
        ),
        [X(("channels",), 0), X(("channels",), 2)],
        {"channels": ["stable", "internal"]},
        [X(("channels",), 0), X(("channels",), 2)],
        ("channels",),
        "at least 1 item",
    ),
    Case(
        "enum_array_long_list",
        obj({"regions": {"type": "array", "items": {"enum": [f"r{n}" for n in range(30)]}}}),
        [X(("regions",), 5), X(("regions",), 7)],
        {"regions": ["r5", "r7"]},
    ),
    Case(
        "map_of_strings",
        {"type": "object", "additionalProperties": {"type": "string"}, "minProperties": 1},
        [KEY((), 0, "env"), T(("env",), "prod")],
        {"env": "prod"},
        [ADD(()), KEY((), 1, "env")],
        (),
        "same name",
    ),
    Case(
        "const_is_sent",
        obj({"kind": {"const": "refund"}, "n": {"type": "integer"}}),
        [T(("n",), "3")],
        {"kind": "refund", "n": 3},
    ),
    Case(
        "nullable_type",
        obj({"ticket": {"type": ["string", "null"]}}),
        [T(("ticket",), "T-1")],
        {"ticket": "T-1"},
    ),
    Case(
        "type_inferred_from_properties",
        {"properties": {"a": {"type": "integer"}}, "required": ["a"]},
        [T(("a",), "1")],
        {"a": 1},
    ),
    Case(
        "ref_to_defs",
        {
            "$defs": {"addr": obj({"street": S, "city": S})},
            "type": "object",
            "properties": {"home": {"$ref": "#/$defs/addr"}},
            "required": ["home"],
        },
        [T(("home", "street"), "Main St 1"), T(("home", "city"), "Bonn")],
        {"home": {"street": "Main St 1", "city": "Bonn"}},
    ),
    Case(
        "recursive_ref_bounded",
        {
            "type": "object",
            "properties": {"name": S, "children": {"type": "array", "items": {"$ref": "#"}}},
            "required": ["name"],
        },
        [T(("name",), "root")],
        {"name": "root"},
    ),
    Case(
        "one_of_nested_is_json",
        obj({"target": {"oneOf": [{"type": "string"}, {"type": "integer"}]}}),
        [T(("target",), '"prod"')],
        {"target": "prod"},
        [T(("target",), "{")],
        ("target",),
        "not valid JSON",
    ),
    Case(
        "one_of_at_root_is_raw_json",
        {"oneOf": [{"type": "integer"}, {"type": "boolean"}]},
        [RAW("5")],
        5,
        [RAW('"five"')],
        None,
        "answer",
    ),
    Case(
        "any_of_object_raw_json",
        {"anyOf": [obj({"a": S}), obj({"b": {"type": "integer"}})]},
        [RAW('{"b": 2}')],
        {"b": 2},
        [RAW('{"b": "two"}')],
        None,
        "answer",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_schema_form_fills_and_refuses(qtbot, case: Case):
    form = SchemaForm(case.schema)
    qtbot.addWidget(form)
    with qtbot.waitExposed(form):
        form.show()
    for act in case.fill:
        act(form, qtbot)
    value = form.value()
    assert value == case.expected
    jsonschema.Draft202012Validator(case.schema).validate(value)
    assert form.is_valid(), form.problem_texts()
    if not case.bad:
        return
    for act in case.bad:
        act(form, qtbot)
    assert not form.is_valid()
    if case.bad_at is None:
        assert case.says in form.summary.text()
    else:
        assert case.says in editor(form, case.bad_at).problem_text()


def test_table_is_broad_enough():
    assert len(CASES) >= 25
    kinds = {n.kind for c in CASES for n in walk(plan(c.schema))}
    assert kinds >= {
        "object",
        "array",
        "checklist",
        "map",
        "string",
        "text",
        "enum",
        "date",
        "datetime",
        "email",
        "uri",
        "number",
        "integer",
        "boolean",
        "const",
        "json",
    }


def walk(node):
    yield node
    for child in node.children:
        yield from walk(child)
    if node.item is not None:
        yield from walk(node.item)


def test_raw_tab_and_form_carry_the_answer_both_ways(qtbot):
    schema = obj({"name": S, "n": {"type": "integer"}})
    form = SchemaForm(schema)
    qtbot.addWidget(form)
    qtbot.keyClicks(form.field("name").edit, "Ada")
    form.tabs.setCurrentIndex(RAW_TAB)
    assert '"name": "Ada"' in form.raw.toPlainText()
    form.raw.setPlainText('{"name": "Bob", "n": 4}')
    assert form.is_valid() and form.value() == {"name": "Bob", "n": 4}
    form.tabs.setCurrentIndex(0)
    assert form.field("name").edit.text() == "Bob"
    assert form.field("n").edit.text() == "4"
    assert form.value() == {"name": "Bob", "n": 4}


def test_server_refusal_lands_at_its_field(qtbot):
    form = SchemaForm(obj({"name": S}))
    qtbot.addWidget(form)
    qtbot.keyClicks(form.field("name").edit, "Ada")
    form.show_server_problem("name", "taken")
    assert form.field("name").problem_text() == "taken" and not form.is_valid()
    qtbot.keyClicks(form.field("name").edit, "!")
    assert form.is_valid()


def test_ref_loops_and_huge_schemas_are_bounded():
    loop = {
        "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}},
        "type": "object",
        "properties": {"x": {"$ref": "#/$defs/a"}},
    }
    node = plan(loop)
    assert node.kind == "object" and node.children[0].kind == "json"
    assert "refers to itself" in node.children[0].reason
    # a doubling $ref chain: 2**30 fields if expanded; refused with a clear reason
    defs = {
        f"d{n}": {
            "type": "object",
            "properties": {"l": {"$ref": f"#/$defs/d{n + 1}"}, "r": {"$ref": f"#/$defs/d{n + 1}"}},
        }
        for n in range(30)
    }
    defs["d30"] = {"type": "string"}
    huge = plan({"$defs": defs, "$ref": "#/$defs/d0"})
    assert huge.kind == "json" and "more than" in huge.reason
    deep: dict = {"type": "string"}
    for _ in range(200):
        deep = {"type": "object", "properties": {"x": deep}}
    assert plan(deep).kind == "object"  # bounded depth: the deep end is typed as JSON
    remote = plan({"type": "object", "properties": {"x": {"$ref": "https://x.invalid/s"}}})
    assert remote.children[0].kind == "json"


def test_cannot_render_says_so_and_raw_still_validates(qtbot):
    defs = {
        f"d{n}": {
            "type": "object",
            "properties": {"l": {"$ref": f"#/$defs/d{n + 1}"}, "r": {"$ref": f"#/$defs/d{n + 1}"}},
        }
        for n in range(30)
    }
    defs["d30"] = {"type": "string"}
    form = SchemaForm({"$defs": defs, "$ref": "#/$defs/d0"})
    qtbot.addWidget(form)
    assert not form.supported and form.tabs.count() == 1
    assert "cannot be shown as a form" in form.notice.text()
    form.raw.setPlainText('{"l": {"l": 3}}')
    assert not form.is_valid()
    form.raw.setPlainText('{"l": {"r": {}}}')
    assert form.is_valid()


def test_json_field_for_unsupported_part(qtbot):
    form = SchemaForm(obj({"x": {"allOf": [{"type": "integer"}, {"minimum": 2}]}}))
    qtbot.addWidget(form)
    assert isinstance(form.field("x"), JsonField)
    qtbot.keyClicks(form.field("x").edit, "1")
    assert "at least 2" in form.field("x").problem_text()
