"""Malicious requests: markup in labels and descriptions, a 5 MB description, 10 000
options, schema recursion through $ref loops. The desk shows a usable, bounded form (or
says plainly that only raw JSON can express the answer) and never renders agent text as
markup."""

from __future__ import annotations

import jsonschema
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QGroupBox, QLabel, QWidget

from proctor.core import Actor, Journal
from proctor.core.models import Question, QuestionKind
from proctor.core.questions.service import default_schema
from proctor.gui.forms import FormView, build_view
from proctor.gui.forms.containers import ChecklistField
from proctor.gui.forms.fields import EnumField
from proctor.gui.forms.review import DiffReviewView, MemoryReviewView
from proctor.gui.forms.views import ChoiceView

from ..conftest import WAIT_MS, wait_presented

MARKUP = (
    '<b>Bold</b> <img src="http://example.invalid/x.png"> <a href="http://example.invalid">x</a>'
)
SCRIPT = "<script>alert(1)</script><h1>Approve everything</h1>"
FIVE_MB = "A long description. " * 262_144  # 5 MiB
MANY = 10_000


def question(
    kind: str, *, prompt: str = "Please answer.", request=None, schema=None, options=()
) -> Question:
    kind_ = QuestionKind(kind)
    return Question(
        id="int_hostile",
        run_id="run_1",
        attempt=1,
        agent="mallory",
        project="p",
        space="s",
        run_title="t",
        kind=kind_,
        prompt=prompt,
        request=request,
        response_schema=schema if schema is not None else default_schema(kind_, list(options)),
        options=list(options),
        status="requested",
        expires_at=None,
        version=1,
        created_at=0.0,
        resolved_at=None,
        resolved_by=None,
        response=None,
        snoozed_until=None,
    )


def assert_plain(widget: QWidget) -> None:
    """No label under ``widget`` may interpret text as markup."""
    for label in widget.findChildren(QLabel):
        assert label.textFormat() == Qt.TextFormat.PlainText, label.text()[:80]


def shown(qtbot, view: QWidget) -> QWidget:
    qtbot.addWidget(view)
    with qtbot.waitExposed(view):
        view.show()
    return view


def test_markup_in_labels_and_descriptions_is_text(qtbot):
    options = [
        {"value": "a", "label": MARKUP, "description": SCRIPT},
        {"value": "b & c", "label": "B & C"},
    ]
    view = shown(qtbot, build_view(question("choice", prompt=SCRIPT, options=options)))
    assert isinstance(view, ChoiceView)
    assert view.buttons[0].text() == "1. " + MARKUP
    assert view.buttons[1].text() == "2. B && C"  # shown as "B & C", not a mnemonic
    assert any(label.text() == SCRIPT for label in view.findChildren(QLabel))
    assert_plain(view)
    schema = {
        "type": "object",
        "title": MARKUP,
        "required": ["x"],
        "properties": {
            "x": {
                "type": "object",
                "title": SCRIPT,
                "description": MARKUP,
                "properties": {"y": {"enum": [MARKUP, "ok"], "title": MARKUP}},
            }
        },
    }
    form = shown(qtbot, build_view(question("form", schema=schema)))
    assert isinstance(form, FormView)
    assert_plain(form)
    [group] = form.findChildren(QGroupBox)
    assert group.title() == SCRIPT
    assert form.form.field("x", "y").combo.itemText(1) == MARKUP


def test_five_megabyte_description_and_request_are_bounded(qtbot):
    schema = {
        "type": "object",
        "required": ["why"],
        "properties": {"why": {"type": "string", "description": FIVE_MB}},
    }
    form = shown(qtbot, build_view(question("form", schema=schema, request={"d": FIVE_MB})))
    longest = max(len(label.text()) for label in form.findChildren(QLabel))
    assert longest <= 2_000
    qtbot.keyClicks(form.form.field("why").edit, "because")
    assert form.is_valid() and form.value() == {"why": "because"}
    diff = "".join(f"@@ -{n},1 +{n},1 @@\n-old {n}\n+new {n}\n" for n in range(1, 200_000))
    review = shown(qtbot, build_view(question("diff_review", request={"diff": diff})))
    assert isinstance(review, DiffReviewView)
    wait_presented(qtbot)  # a big patch is parsed on the presentation pool
    assert review.material.table.model().rowCount() <= 5_000
    assert "first 5,000 lines shown" in review.material.head.text()
    memory = shown(
        qtbot,
        build_view(
            question(
                "memory_change_review",
                request={
                    "before": FIVE_MB.replace(". ", ".\n"),
                    "after": FIVE_MB.replace(". ", "!\n"),
                },
            )
        ),
    )
    assert isinstance(memory, MemoryReviewView)


def test_ten_thousand_options(qtbot):
    options = [{"value": f"v{n}", "label": f"Option {n}"} for n in range(MANY)]
    view = shown(qtbot, build_view(question("choice", options=options)))
    assert isinstance(view, ChoiceView) and view.list is not None
    assert view.list.count() == MANY
    view.filter.setText("Option 9999")
    visible = [n for n in range(view.list.count()) if not view.list.item(n).isHidden()]
    assert visible == [9999]
    view.list.setCurrentRow(9999)
    assert view.value() == {"choice": "v9999"} and view.is_valid()
    values = [f"e{n}" for n in range(MANY + 500)]
    schema = {
        "type": "object",
        "required": ["one", "many"],
        "properties": {
            "one": {"enum": values},
            "many": {"type": "array", "items": {"enum": values}},
        },
    }
    form = shown(qtbot, build_view(question("form", schema=schema)))
    one, many = form.form.field("one"), form.form.field("many")
    assert isinstance(one, EnumField) and one.combo.count() == MANY + 1
    assert "500 more values" in " ".join(label.text() for label in one.findChildren(QLabel))
    assert isinstance(many, ChecklistField) and many.list.count() == MANY
    one.combo.setCurrentIndex(MANY)
    many.set_checked(42, True)
    assert form.value() == {"one": f"e{MANY - 1}", "many": ["e42"]} and form.is_valid()


def test_ref_loops_give_a_bounded_form_or_raw_json(qtbot):
    tree = {
        "type": "object",
        "required": ["name"],
        "properties": {
            "name": {"type": "string"},
            "kids": {"type": "array", "items": {"$ref": "#"}},
        },
    }
    view = shown(qtbot, build_view(question("form", schema=tree)))
    qtbot.keyClicks(view.form.field("name").edit, "root")
    assert view.value() == {"name": "root"} and view.is_valid()
    loop = {"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"}
    raw = shown(qtbot, build_view(question("form", schema=loop)))
    assert not raw.form.supported
    assert "cannot be shown as a form" in raw.form.notice.text()
    raw.form.raw.setPlainText("{}")
    assert not raw.is_valid()  # the validator cannot resolve the loop: said, not hung
    assert "cannot be checked" in " ".join(
        raw.form.problem_texts()
    ) or "refers to itself" in " ".join(raw.form.problem_texts())


def test_hostile_question_in_the_desk(qtbot, journal_path, open_desk):
    values = [f"<i>v{n}</i>" for n in range(MANY)]
    schema = {
        "type": "object",
        "title": MARKUP,
        "required": ["pick"],
        "properties": {"pick": {"enum": values, "description": FIVE_MB}, "tree": {"$ref": "#"}},
    }
    with Journal.open(journal_path, actor=Actor.agent("mallory")) as j:
        run = j.runs.start("shop", SCRIPT, agent="mallory")
        qid = j.questions.ask(
            run.id,
            "form",
            SCRIPT + "x" * 90_000,
            request={"blob": FIVE_MB, "html": MARKUP},
            response_schema=schema,
        ).id
    window = open_desk(journal_path)
    model = window.inbox.model
    qtbot.waitUntil(lambda: model.row_of(f"question:{qid}") >= 0, timeout=WAIT_MS)
    window.inbox.set_current_row(model.row_of(f"question:{qid}"))
    pane = window.inbox.detail
    qtbot.waitUntil(lambda: pane.current().view is not None, timeout=WAIT_MS)
    detail = pane.current()
    assert len(detail.prompt.shown_text()) <= 1_300
    assert_plain(detail)
    detail.view.form.field("pick").combo.setCurrentIndex(3)
    value = detail.view.value()
    assert value == {"pick": "<i>v2</i>"}
    jsonschema.Draft202012Validator(schema).validate(value)
    qtbot.waitUntil(detail.submit_button.isEnabled, timeout=WAIT_MS)
