"""A memory change review is shown like a memory conflict: a word diff against the entry's
current content, with the proposal's source, trust and sensitivity (issue 16, item 9)."""

from __future__ import annotations

from proctor.core import Actor, Journal
from proctor.gui.widgets.text_diff import INSERT

from ..conftest import WAIT_MS
from ..data import agent

NOW = "Deploys happen on Tuesdays and Thursdays."
PROPOSED = "Deploys happen on Tuesdays, except during the release freeze."


def ask_change(path, *, stale_before: bool = True, **extra) -> tuple[str, str]:
    with agent(path, "coder") as a:
        run = a.runs.start("webshop", "Learn the deploy rules", agent="coder")
        entry = a.memory.add(
            "project", "webshop", "Deploy days", "Deploys happen on Tuesdays.", run_id=run.id
        )
    with Journal.open(path, actor=Actor.operator("bob")) as bob:  # changed since the agent read it
        bob.memory.replace(entry.id, NOW, expected_version=entry.version, reason="thursdays too")
    with agent(path, "coder") as a:
        qid = a.questions.ask(
            run.id,
            "memory_change_review",
            "Update what I remember?",
            request={
                "entry_id": entry.id,
                "title": "Deploy days",
                "before": "Deploys happen on Tuesdays." if stale_before else NOW,
                "after": PROPOSED,
                **extra,
            },
        ).id
    return qid, entry.id


def open_material(qtbot, window, qid: str):
    model = window.inbox.model
    qtbot.waitUntil(lambda: model.row_of(f"question:{qid}") >= 0, timeout=WAIT_MS)
    window.inbox.set_current_row(model.row_of(f"question:{qid}"))
    pane = window.inbox.detail
    qtbot.waitUntil(
        lambda: (
            pane.current() is not None
            and pane.current().view is not None
            and pane.current().entity is not None
            and pane.current().entity.id == qid
        ),
        timeout=WAIT_MS,
    )
    material = pane.current().view.material
    qtbot.waitUntil(lambda: material.change is not None, timeout=WAIT_MS)
    return material


def test_memory_change_is_a_diff_against_the_entry_now(qtbot, journal_path, open_desk):
    qid, _entry_id = ask_change(
        journal_path,
        trust="model_inferred",
        sensitivity="personal",
        source="coder's summary of the wiki",
    )
    window = open_desk(journal_path)
    material = open_material(qtbot, window, qid)
    assert material.current.text() == NOW  # the entry now, not the agent's stale "before"
    assert material.proposed.text() == PROPOSED
    assert "version 2" in material.current_title.text()
    inserted = "".join(text for op, text in material.proposed.marked() if op == INSERT)
    assert "except during the release freeze" in inserted
    deleted = "".join(text for op, text in material.current.marked() if op != INSERT)
    assert "and Thursdays" in deleted
    assert material.field_value("Trust") == ("operator edited", "model inferred")
    assert material.field_value("Sensitivity") == ("normal", "personal")
    assert "coder's summary of the wiki" in material.field_value("Source")[1]


def test_proposal_without_trust_says_it_is_unconfirmed(qtbot, journal_path, open_desk):
    qid, _ = ask_change(journal_path, stale_before=False)
    window = open_desk(journal_path)
    material = open_material(qtbot, window, qid)
    assert "not confirmed by a person" in material.field_value("Trust")[1]
    assert material.field_value("Sensitivity")[1] == "normal (unchanged)"
    assert material.field_value("Source")[1].startswith("coder")
