"""The desk and the CLI enforce the same rules: a credential answer is a reference (the
desk's form says so with the core's words, before anything is sent)."""

from __future__ import annotations

import pytest

from proctor.core.questions.credentials import reference_problem
from proctor.gui.forms import build_view
from proctor.gui.forms.credentials import CredentialView

from ..data import agent


@pytest.fixture
def credential_question(journal_path):
    with agent(journal_path, "coder") as a:
        run = a.runs.start("webshop", "Refunds", agent="coder")
        return a.questions.ask(
            run.id, "credential_binding", "Which stripe key?", request={"service": "stripe"}
        )


@pytest.mark.parametrize(
    "typed",
    [
        "my stripe key",
        "sk_live_51HxYzAbC123dEfGhIjKlMnOp",
        "https://bot:hunter2@vault.example/stripe",
    ],
)
def test_desk_refuses_what_the_core_refuses(qtbot, credential_question, typed):
    view = build_view(credential_question)
    qtbot.addWidget(view)
    assert isinstance(view, CredentialView)
    qtbot.keyClicks(view.refs.lineEdit(), typed)
    assert not view.is_valid()
    assert reference_problem(typed) in view.problem.text()


def test_desk_accepts_a_reference(qtbot, credential_question):
    view = build_view(credential_question)
    qtbot.addWidget(view)
    qtbot.keyClicks(view.refs.lineEdit(), "vault://team/stripe-refunds")
    assert view.is_valid()
    assert view.value() == {"credential_ref": "vault://team/stripe-refunds"}
