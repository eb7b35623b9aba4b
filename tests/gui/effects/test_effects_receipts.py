"""Receipts recorded so far and the partial result reach the operator: the agent records a
provider request id while the effect executes and a partial result when it loses track;
the inbox detail and the Effects page show both (and a receipt recorded while the page
shows the effect appears live)."""

from __future__ import annotations

from proctor.core import Actor, Journal
from proctor.core.models import EffectStatus

from ..conftest import WAIT_MS

OWNER = "payer@1"


def executing(path, key: str) -> str:
    with Journal.open(path, actor=Actor.agent("payer")) as a:
        run = a.runs.start("billing", "pay the supplier", agent="payer")
        a.runs.record_tool_call(run.id, "bank.transfer", {"amount": 120}, safety_class="financial")
        a.effects.reserve(
            key,
            tool="bank.transfer",
            run_id=run.id,
            safety_class="financial",
            action={"amount": 120, "to": "DE89 3704"},
            owner=OWNER,
        )
        a.effects.begin(key, owner=OWNER)
        return run.id


def receipt_so_far(path, key: str, external_id: str) -> None:
    with Journal.open(path, actor=Actor.agent("payer")) as a:
        a.effects.record_receipt(
            key,
            external_id=external_id,
            owner=OWNER,
            evidence={"provider_status": 202, "queue": "sepa-out"},
        )


def cells(view, row: int) -> list[str]:
    model = view.receipts
    return [model.data(model.index(row, c)) for c in range(model.columnCount())]


def test_inbox_detail_shows_receipts_so_far_and_the_partial_result(qtbot, journal_path, open_desk):
    executing(journal_path, "pay:1")
    receipt_so_far(journal_path, "pay:1", "req_42")
    with Journal.open(journal_path, actor=Actor.agent("payer")) as a:
        a.effects.mark_ambiguous(
            "pay:1",
            "the bank timed out after 30 s",
            owner=OWNER,
            partial_result={"status": "accepted", "batch": 7},
        )
    window = open_desk(journal_path)
    model = window.inbox.model
    qtbot.waitUntil(lambda: model.row_of("effect:pay:1") >= 0, timeout=WAIT_MS)
    window.inbox.set_current_row(model.row_of("effect:pay:1"))
    pane = window.inbox.detail
    qtbot.waitUntil(
        lambda: (
            pane.current() is not None
            and pane.current().entity is not None
            and pane.current().entity.key == "pay:1"
        ),
        timeout=WAIT_MS,
    )
    view = pane.current().view
    assert view.receipts.rowCount() == 1
    row = cells(view, 0)
    assert (row[1], row[2], row[3], row[4]) == ("progress", "executing", "req_42", "agent:payer")
    assert view.evidence.isVisibleTo(view)
    assert '"queue": "sepa-out"' in view.evidence.json_text()
    assert view.result.isVisibleTo(view)
    assert '"batch": 7' in view.result.json_text()
    assert view.result._title.text() == "Result so far (partial)"


def test_effects_page_shows_a_receipt_recorded_while_it_is_open(qtbot, journal_path, open_desk):
    executing(journal_path, "pay:2")
    window = open_desk(journal_path)
    window.go("effects")
    page = window.effects
    page.choose_filter("all")
    qtbot.waitUntil(lambda: page.model.row_of("pay:2") >= 0, timeout=WAIT_MS)
    page.table.setCurrentIndex(page.model.index(page.model.row_of("pay:2"), 0))
    qtbot.waitUntil(
        lambda: page.effect() is not None and page.effect().key == "pay:2", timeout=WAIT_MS
    )
    assert page.effect().status == EffectStatus.EXECUTING
    assert page.view.receipts.rowCount() == 0 and not page.view.evidence.isVisibleTo(page)
    receipt_so_far(journal_path, "pay:2", "req_77")
    qtbot.waitUntil(lambda: page.view.receipts.rowCount() == 1, timeout=WAIT_MS)
    assert cells(page.view, 0)[3] == "req_77"
    assert '"provider_status": 202' in page.view.evidence.json_text()
