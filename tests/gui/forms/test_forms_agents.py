"""End to end, per interaction type: an agent PROCESS asks, the operator answers through
the real widgets of the desk, and the agent process receives exactly the submitted value.
Also: cancel while the form is open, drafts across items, secrets never in the journal."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import threading
from pathlib import Path

import keyring
import pytest
from keyring.backend import KeyringBackend
from keyring.backends import fail
from PySide6.QtCore import QPoint, Qt

from proctor.core import Actor, Journal
from proctor.gui.forms.credentials import CredentialView
from proctor.sim.content import RELEASE_FORM

from ..conftest import WAIT_MS
from ..data import expire_later
from ..driver import Desk as DeskDriver

AGENT_SCRIPT = r"""
import json, sys
from proctor.core import Actor, Journal
journal, spec = sys.argv[1], json.loads(sys.argv[2])
j = Journal.open(journal, actor=Actor.agent("asker"))
run = j.runs.start("shop", "forms test run", agent="asker")
q = j.interactions.ask(run.id, spec["kind"], spec["prompt"], request=spec.get("request"),
                       response_schema=spec.get("schema"), options=spec.get("options"),
                       expires_in=spec.get("expires_in"))
print("ASKED", q.id, flush=True)
done = j.interactions.wait(q.id, timeout=60, poll=0.02)
print("RESULT", json.dumps({"status": done.status.value, "response": done.response}), flush=True)
j.close()
"""

DIFF = (
    "--- a/docs/quickstart.md\n+++ b/docs/quickstart.md\n@@ -1,6 +1,6 @@\n # Quick start\n"
    " \n Install the CLI:\n \n-    pip install acme\n+    pipx install acme\n \n"
    "-Then run `acme init`.\n+Then run `acme init` and follow the prompts.\n"
)
OURS = "def total(lines):\n    return sum(Decimal(l) for l in lines)\n"
THEIRS = "def total(lines):\n    return round(sum(lines), 2)\n"


class AskingAgent:
    """A separate Python process that asks one question and prints the answer it gets."""

    def __init__(self, journal: Path, spec: dict) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", AGENT_SCRIPT, str(journal), json.dumps(spec)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.lines: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))

    def line(self, qtbot, prefix: str) -> str:
        qtbot.waitUntil(lambda: any(x.startswith(prefix) for x in self.lines), timeout=WAIT_MS)
        return next(x for x in self.lines if x.startswith(prefix))[len(prefix) + 1 :]

    def result(self, qtbot) -> dict:
        return json.loads(self.line(qtbot, "RESULT"))

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(10)


class MemoryKeyring(KeyringBackend):
    priority = 1  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.secrets: dict[tuple[str, str], str] = {}

    def set_password(self, service: str, username: str, password: str) -> None:
        self.secrets[(service, username)] = password

    def get_password(self, service: str, username: str) -> str | None:
        return self.secrets.get((service, username))

    def delete_password(self, service: str, username: str) -> None:
        self.secrets.pop((service, username), None)


@pytest.fixture
def keyring_backend():
    """set(backend): the OS keyring the desk sees (deterministic; no system probing)."""

    def use(backend: KeyringBackend) -> KeyringBackend:
        keyring.set_keyring(backend)
        CredentialView.keyring_known = None
        return backend

    use(fail.Keyring())
    yield use
    keyring.set_keyring(fail.Keyring())
    CredentialView.keyring_known = None


class Desk:
    """The desk over one journal, and the agents asking it questions."""

    def __init__(self, qtbot, path: Path, open_desk) -> None:
        self.qtbot, self.path, self._open = qtbot, path, open_desk
        self.window = None
        self.agents: list[AskingAgent] = []

    def open(self):
        if self.window is None:
            self.window = self._open(self.path)
        return self.window

    def ask(self, spec: dict):
        """An agent process asks (the desk opens meanwhile) -> (agent, window, detail)."""
        agent = AskingAgent(self.path, spec)
        self.agents.append(agent)
        window = self.open()
        qid = agent.line(self.qtbot, "ASKED")
        return agent, window, open_question(self.qtbot, window, qid)

    def ask_here(self, spec: dict):
        """Asked from this process (for tests about the desk's side only) -> detail."""
        with Journal.open(self.path, actor=Actor.agent("asker")) as j:
            run = j.runs.start("shop", "forms test run", agent="asker")
            qid = j.questions.ask(
                run.id,
                spec["kind"],
                spec["prompt"],
                request=spec.get("request"),
                response_schema=spec.get("schema"),
                options=spec.get("options"),
                expires_in=spec.get("expires_in"),
            ).id
        return open_question(self.qtbot, self.open(), qid)

    def ask_read_only(self, spec: dict):
        """Asked here, looked at by a desk that opened the journal read-only -> detail."""
        with Journal.open(self.path, actor=Actor.agent("asker")) as j:
            run = j.runs.start("shop", "forms test run", agent="asker")
            qid = j.questions.ask(run.id, spec["kind"], spec["prompt"]).id
        self.window = self._open(self.path, read_only=True)
        return open_question(self.qtbot, self.window, qid)

    def stop(self) -> None:
        for agent in self.agents:
            agent.stop()


@pytest.fixture
def desk(qtbot, journal_path, open_desk, keyring_backend):
    d = Desk(qtbot, journal_path, open_desk)
    yield d
    d.stop()


@pytest.fixture
def ask(desk):
    return desk.ask


def open_question(qtbot, window, qid: str):
    return DeskDriver(qtbot, window).open_question(qid)


def send(qtbot, detail) -> None:
    DeskDriver(qtbot, detail.window()).answer(detail)


def click(qtbot, button) -> None:
    """Click a check box / radio button on its indicator (its centre may be empty space)."""
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton, pos=QPoint(8, button.height() // 2))


def radio(view, text: str):
    from PySide6.QtWidgets import QRadioButton

    [button] = [b for b in view.findChildren(QRadioButton) if b.text().startswith(text)]
    return button


# ---------------------------------------------------------------- one test per type


def test_question_ctrl_enter_sends_text(qtbot, ask):
    agent, window, detail = ask({"kind": "question", "prompt": "Which staging database?"})
    view = detail.view
    assert not detail.submit_button.isEnabled()  # empty answer: "must not be empty"
    view.edit.setFocus()
    qtbot.keyClicks(view.edit, "Use stg-db-3; stg-db-2 is read-only.")
    qtbot.waitUntil(window.isActiveWindow)
    qtbot.keyClick(view.edit, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    result = agent.result(qtbot)
    assert result == {
        "status": "resolved",
        "response": {"text": "Use stg-db-3; stg-db-2 is read-only."},
    }


def test_choice_number_key_and_note(qtbot, ask):
    options = [
        {"value": "fix", "label": "Fix them before merging", "description": "Costs a day."},
        {
            "value": "quarantine",
            "label": "Quarantine them",
            "description": "Open an issue <b>now</b>.",
        },
        {"value": "retry", "label": "Re-run CI"},
    ]
    agent, window, detail = ask(
        {"kind": "choice", "prompt": "Three tests fail on CI.", "options": options}
    )
    view = detail.view
    assert [b.text() for b in view.buttons] == [
        "1. Fix them before merging",
        "2. Quarantine them",
        "3. Re-run CI",
    ]
    qtbot.waitUntil(window.isActiveWindow)
    view.buttons[0].setFocus()
    qtbot.keyClick(view.buttons[0], Qt.Key.Key_2)
    assert view.buttons[1].isChecked()
    qtbot.keyClicks(view.note, "see the runbook")
    send(qtbot, detail)
    assert agent.result(qtbot)["response"] == {"choice": "quarantine", "note": "see the runbook"}


def test_form_from_schema(qtbot, ask):
    agent, _window, detail = ask(
        {
            "kind": "form",
            "prompt": "Release details, please.",
            "request": {"branch": "release/4.2"},
            "schema": RELEASE_FORM,
        }
    )
    form = detail.view.form
    qtbot.keyClicks(form.field("version").edit, "4.2")
    assert form.field("version").problem_text().startswith("must match the pattern")
    assert not detail.submit_button.isEnabled()
    qtbot.keyClicks(form.field("version").edit, ".1")
    qtbot.keyClicks(form.field("release_date").edit, "2026-02-03")
    channels = form.field("channels")
    click(qtbot, channels.boxes[0])
    click(qtbot, channels.boxes[1])
    click(qtbot, form.field("notify_customers").box)
    rollout = form.field("rollout_percent").edit
    assert rollout.text() == "10"  # the default, pre-filled
    rollout.selectAll()
    qtbot.keyClicks(rollout, "25")
    qtbot.keyClicks(form.field("notes").edit, "Rounding fix & new CLI.")
    send(qtbot, detail)
    assert agent.result(qtbot)["response"] == {
        "version": "4.2.1",
        "release_date": "2026-02-03",
        "channels": ["stable", "beta"],
        "notify_customers": True,
        "rollout_percent": 25,
        "notes": "Rounding fix & new CLI.",
    }


def test_confirmation_spells_out_consequence_and_declines(qtbot, ask):
    agent, _window, detail = ask(
        {
            "kind": "confirmation",
            "prompt": "Delete 280 stale preview environments?",
            "request": {"count": 280, "consequence": "280 environments are deleted for good."},
        }
    )
    view = detail.view
    assert view.consequence.text() == "280 environments are deleted for good."
    click(qtbot, radio(view, "No"))
    qtbot.keyClicks(view.note, "keep the last ten")
    send(qtbot, detail)
    assert agent.result(qtbot)["response"] == {"confirmed": False, "note": "keep the last ten"}


def test_diff_review_request_changes_needs_comment(qtbot, ask):
    agent, _window, detail = ask(
        {
            "kind": "diff_review",
            "prompt": "Review my change.",
            "request": {"path": "docs/quickstart.md", "diff": DIFF},
        }
    )
    view = detail.view
    table = view.material.table
    model = table.model()
    texts = [model.index(r, 3).data() for r in range(model.rowCount())]
    assert "    pipx install acme" in texts
    assert "+    pipx install acme" in view.material.unified.toPlainText()
    view.material.tabs.setCurrentIndex(1)  # the unified tab
    click(qtbot, radio(view, "Request changes"))
    assert not detail.submit_button.isEnabled()  # a comment is needed to request changes
    qtbot.keyClicks(view.comment, "Keep pip for CI images.")
    send(qtbot, detail)
    assert agent.result(qtbot)["response"] == {
        "verdict": "request_changes",
        "comment": "Keep pip for CI images.",
    }


def test_merge_conflict_edit_merged_result(qtbot, ask):
    agent, _window, detail = ask(
        {
            "kind": "merge_conflict",
            "prompt": "Which side wins?",
            "request": {
                "path": "src/total.py",
                "base": "def total():\n",
                "ours": OURS,
                "theirs": THEIRS,
                "ours_ref": "fix/rounding",
                "theirs_ref": "main",
            },
        }
    )
    view = detail.view
    click(qtbot, radio(view, "Edit a merged result"))
    assert view.merged.toPlainText() == OURS  # starts from ours
    from PySide6.QtWidgets import QPushButton

    [theirs] = [b for b in view.findChildren(QPushButton) if b.text() == "Theirs"]
    qtbot.mouseClick(theirs, Qt.MouseButton.LeftButton)
    view.merged.setFocus()
    qtbot.keyClick(view.merged, Qt.Key.Key_Home, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClicks(view.merged, "# merged by hand ")
    send(qtbot, detail)
    assert agent.result(qtbot)["response"] == {
        "resolution": "merged",
        "merged": "# merged by hand " + THEIRS,
    }


def test_credential_binding_typed_reference(qtbot, ask):
    agent, _window, detail = ask(
        {
            "kind": "credential_binding",
            "prompt": "Stripe key?",
            "request": {
                "service": "stripe",
                "scopes": ["refunds:write"],
                "suggested": ["vault://shop/stripe"],
            },
        }
    )
    view = detail.view
    qtbot.waitUntil(lambda: view.keyring_note.text().startswith("Cannot store secrets"))
    assert not view.new_secret.isEnabled()  # no OS keyring here: refuse to store a secret
    assert view.refs.itemText(0) == "vault://shop/stripe"
    qtbot.keyClicks(view.refs.lineEdit(), "vault://team/stripe-refunds")
    send(qtbot, detail)
    assert agent.result(qtbot)["response"] == {"credential_ref": "vault://team/stripe-refunds"}


def test_memory_change_review_edit_then_accept(qtbot, ask):
    agent, _window, detail = ask(
        {
            "kind": "memory_change_review",
            "prompt": "Update memory?",
            "request": {
                "title": "Deploy days",
                "scope": "project:shop",
                "before": "Deploys happen on Tuesdays.",
                "after": "Deploys happen on Tuesdays and Thursdays.",
            },
        }
    )
    view = detail.view
    click(qtbot, radio(view, "Edit, then accept"))
    view.content.setFocus()
    qtbot.keyClick(view.content, Qt.Key.Key_End, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClicks(view.content, " Never on Fridays.")
    send(qtbot, detail)
    assert agent.result(qtbot)["response"] == {
        "verdict": "edit",
        "content": "Deploys happen on Tuesdays and Thursdays. Never on Fridays.",
    }


# ---------------------------------------------------------------- secrets


def test_new_secret_goes_to_keyring_never_to_journal(
    qtbot, ask, keyring_backend, journal_path, caplog
):
    caplog.set_level(logging.DEBUG)
    memory = keyring_backend(MemoryKeyring())
    secret = "sk_live_51HxQ2eZvKYlo2C9aQ7TopSecret"
    agent, _window, detail = ask(
        {"kind": "credential_binding", "prompt": "Stripe key?", "request": {"service": "stripe"}}
    )
    view = detail.view
    qtbot.waitUntil(view.new_secret.isEnabled)
    click(qtbot, view.new_secret)
    qtbot.keyClicks(view.name, "stripe-live")
    qtbot.keyClicks(view.secret, secret)
    assert secret not in json.dumps(view.value()) and secret not in json.dumps(view.draft())
    send(qtbot, detail)
    assert agent.result(qtbot)["response"] == {"credential_ref": "keyring://proctor/stripe-live"}
    assert memory.secrets == {("proctor", "stripe-live"): secret}
    with Journal.open(journal_path, actor=Actor.operator("auditor"), read_only=True) as j:
        audit = json.dumps([e.model_dump(mode="json") for e in j.audit.list(limit=500).items])
        answered = j.questions.get(detail.entity.id).response
    assert answered == {"credential_ref": "keyring://proctor/stripe-live"}
    assert "interaction.answered" in audit and secret not in audit
    for path in journal_path.parent.iterdir():
        if path.name.startswith(journal_path.name):
            assert secret.encode() not in path.read_bytes(), path.name
    assert secret not in caplog.text


def test_pasting_a_secret_as_reference_is_refused(qtbot, desk):
    detail = desk.ask_here({"kind": "credential_binding", "prompt": "Key?"})
    view = detail.view
    qtbot.keyClicks(view.refs.lineEdit(), "sk_live_51HxQ2eZvKYlo2C9aQ")
    assert not detail.submit_button.isEnabled()
    assert "looks like a secret" in view.problem.text()


# ---------------------------------------------------------------- lifecycle


def test_closed_before_anything_was_typed_does_not_speak_of_what_you_typed(
    qtbot, ask, journal_path
):
    """An untouched text form is ``{"text": ""}``: withdrawn (or answered elsewhere) then,
    the line says so without "What you typed is kept below" (seen on proctor demo)."""
    _agent, _window, detail = ask({"kind": "question", "prompt": "Which region?"})
    qid = detail.entity.id
    with Journal.open(journal_path, actor=Actor.agent("asker")) as j:
        j.questions.withdraw(qid, "found it myself")
    qtbot.waitUntil(lambda: detail.entity.status.value == "cancelled", timeout=WAIT_MS)
    assert "withdrew" in detail.closed.text() and "What you typed" not in detail.closed.text()


def test_withdrawn_while_typing_keeps_the_text(qtbot, ask, journal_path):
    agent, _window, detail = ask({"kind": "question", "prompt": "Which region?"})
    qtbot.keyClicks(detail.view.edit, "eu-west-1, because of GDPR")
    qid = detail.entity.id
    with Journal.open(journal_path, actor=Actor.agent("asker")) as j:
        j.questions.withdraw(qid, "found it myself")
    qtbot.waitUntil(lambda: detail.entity.status.value == "cancelled", timeout=WAIT_MS)
    assert detail.closed.isVisible()
    assert "withdrew" in detail.closed.text() and "What you typed is kept" in detail.closed.text()
    assert detail.view.edit.toPlainText() == "eu-west-1, because of GDPR"
    assert not detail.submit_button.isEnabled()
    qtbot.mouseClick(detail.copy_button, Qt.MouseButton.LeftButton)
    from PySide6.QtGui import QGuiApplication

    assert json.loads(QGuiApplication.clipboard().text()) == {"text": "eu-west-1, because of GDPR"}
    assert agent.result(qtbot)["status"] == "cancelled"


def test_draft_survives_switching_items(qtbot, desk):
    detail = desk.ask_here({"kind": "question", "prompt": "First?"})
    window = desk.window
    first_id = detail.entity.id
    qtbot.keyClicks(detail.view.edit, "half an answer")
    detail = desk.ask_here({"kind": "form", "prompt": "Second?", "schema": RELEASE_FORM})
    assert detail.entity.id != first_id
    qtbot.keyClicks(detail.view.form.field("version").edit, "1.2.3")
    second_id = detail.entity.id
    detail = open_question(qtbot, window, first_id)
    assert detail.view.edit.toPlainText() == "half an answer"
    detail = open_question(qtbot, window, second_id)
    assert detail.view.form.field("version").edit.text() == "1.2.3"


def test_answer_refused_by_store_shows_at_field(qtbot, desk, monkeypatch):
    """The store is the authority: a refusal naming a field lands next to it."""
    from proctor.core import errors

    detail = desk.ask_here({"kind": "question", "prompt": "Why?"})
    qtbot.keyClicks(detail.view.edit, "because")
    journal = detail.ctx.journal

    def refuse(*_a, **_k):
        raise errors.ValidationError("text: too short for policy", field="text")

    monkeypatch.setattr(journal.unguarded.questions, "answer", refuse)
    send(qtbot, detail)
    qtbot.waitUntil(lambda: "too short for policy" in detail.view.problem.text(), timeout=WAIT_MS)
    assert detail.view.edit.toPlainText() == "because"


def test_expired_while_typing_keeps_the_text(qtbot, desk):
    detail = desk.ask_here({"kind": "question", "prompt": "Quick one?", "expires_in": 3600})
    qtbot.keyClicks(detail.view.edit, "too late")
    assert expire_later(desk.path) == 1  # expires while the operator types
    qtbot.waitUntil(lambda: detail.closed.isVisible(), timeout=WAIT_MS)
    assert "expired" in detail.closed.text() and "What you typed is kept" in detail.closed.text()
    assert not detail.submit_button.isEnabled()
    qtbot.waitUntil(lambda: detail.entity.status.value == "expired", timeout=WAIT_MS)
    assert detail.view.edit.toPlainText() == "too late"


def test_read_only_desk_cannot_answer(qtbot, desk):
    detail = desk.ask_read_only({"kind": "question", "prompt": "Anyone?"})
    qtbot.keyClicks(detail.view.edit, "me")
    assert detail.view.is_valid() and not detail.submit_button.isEnabled()
    assert "read-only" in detail.hint.text()
