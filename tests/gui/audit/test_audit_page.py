"""The Audit page: who did what, filters and search in SQL, the entry whole with copy,
chain verification naming the first broken link, CSV export, opening the entry's run."""

from __future__ import annotations

import csv
import json
import sqlite3

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication

from proctor.core import Actor, Journal
from proctor.gui.audit.page import AuditModel
from proctor.gui.infra.tasks import TaskRunner
from proctor.gui.widgets.export import SaveDialog

from ..conftest import WAIT_MS
from ..runs.test_runs_page import open_page
from ..widgets.test_models import guarded, loaded


def audit_page(qtbot, window):
    return open_page(qtbot, window, "audit")


def actions(page) -> list[str]:
    return [page.model.item(r).action for r in range(page.model.rowCount())]


def settle(qtbot, page, check) -> None:
    qtbot.waitUntil(lambda: not page.model.is_loading() and check(), timeout=WAIT_MS)


def decide_some(path, ids) -> None:
    with Journal.open(path, actor=Actor.operator("bob")) as bob:
        bob.approvals.decide(
            ids["payment"], False, expected_version=1, reason="invoice amount looks wrong"
        )
        bob.runs.request_cancel(
            ids["run2"],
            "rotating by hand instead",
            expected_version=bob.runs.get(ids["run2"]).version,
        )


def test_filters_and_search(qtbot, populated, open_desk):
    path, ids = populated
    decide_some(path, ids)
    page = audit_page(qtbot, open_desk(path))
    assert actions(page)[:2] == ["run.cancel_requested", "approval.denied"]
    qtbot.waitUntil(lambda: page.actor.findData("operator:bob") >= 0, timeout=WAIT_MS)
    page.actor.setCurrentIndex(page.actor.findData("operator:bob"))
    settle(qtbot, page, lambda: actions(page) == ["run.cancel_requested", "approval.denied"])
    page.actor.setCurrentIndex(0)
    page.search.setText("LOOKS WRONG")  # reasons are searched, case-insensitively
    settle(qtbot, page, lambda: actions(page) == ["approval.denied"])
    page.search.setText('"cancel_requested":true')  # and the before/after JSON
    settle(qtbot, page, lambda: actions(page) == ["run.cancel_requested"])
    page.search.clear()
    page.entity.setCurrentIndex(page.entity.findData("effect"))
    settle(qtbot, page, lambda: set(actions(page)) == {"effect.ambiguous"})
    page.entity.setCurrentIndex(0)
    page.show_run_entries(ids["run2"])
    settle(
        qtbot,
        page,
        lambda: (
            page.model.rowCount() > 0
            and all(page.model.item(r).run_id == ids["run2"] for r in range(page.model.rowCount()))
        ),
    )


def test_the_source_column_and_filter(qtbot, populated, open_desk):
    path, ids = populated
    decide_some(path, ids)  # bob denied at the desk (the default source)
    with Journal.open(path, actor=Actor.operator("carol")) as carol:
        carol.effects.resolve(
            ids["effect"],
            "committed",
            reason="seen in the mailer log",
            expected_version=carol.effects.get(ids["effect"]).version,
            source="cli",
        )
    page = audit_page(qtbot, open_desk(path))
    source = [
        page.model.headerData(c, Qt.Orientation.Horizontal) for c in range(page.model.columnCount())
    ].index("Source")
    assert page.model.headerData(page.stretch_column, Qt.Orientation.Horizontal) == "Change"

    def shown() -> dict[str, str]:
        return {
            page.model.item(r).action: page.model.index(r, source).data()
            for r in range(page.model.rowCount())
        }

    settle(qtbot, page, lambda: "effect.resolved_committed" in shown())
    assert shown()["effect.resolved_committed"] == "cli"
    assert shown()["approval.denied"] == "desk"
    assert shown()["run.cancel_requested"] == "desk"  # request_cancel's default source
    qtbot.waitUntil(lambda: page.source.findData("cli") >= 0, timeout=WAIT_MS)
    page.source.setCurrentIndex(page.source.findData("cli"))
    settle(qtbot, page, lambda: list(shown()) == ["effect.resolved_committed"])
    page.table.selectRow(0)
    assert "operator:carol (from cli)" in page.detail.facts.text()
    page.source.setCurrentIndex(page.source.findData("desk"))
    settle(qtbot, page, lambda: set(shown().values()) == {"desk"} and "approval.denied" in shown())


def test_the_selected_entry_whole_and_copied(qtbot, populated, open_desk):
    path, ids = populated
    decide_some(path, ids)
    window = open_desk(path)
    page = audit_page(qtbot, window)
    page.table.selectRow(1)
    entry = page.detail.entry
    assert entry.action == "approval.denied"
    assert "reason: invoice amount looks wrong" in page.detail.facts.text()
    assert page.detail.before.json_text() and page.detail.after.json_text()
    page.detail.copy_button.click()
    copied = json.loads(QGuiApplication.clipboard().text())
    assert copied["id"] == entry.id and copied["digest"] == entry.digest
    qtbot.mouseClick(page.detail.run_button, Qt.MouseButton.LeftButton)
    assert window.current_page_id() == "runs"
    qtbot.waitUntil(
        lambda: window.runs.detail.title.text() == "Rotate database credentials", timeout=WAIT_MS
    )


def test_verify_chain_ok_then_broken_at_the_tampered_entry(qtbot, populated, open_desk):
    path, ids = populated
    decide_some(path, ids)
    page = audit_page(qtbot, open_desk(path))
    with qtbot.waitSignal(page.verified, timeout=WAIT_MS) as ok:
        page.verify_button.click()
    assert ok.args[0].ok and "The audit chain verifies" in page.chain.text()
    conn = sqlite3.connect(str(path), isolation_level=None)
    for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'"):
        conn.execute(f'DROP TRIGGER "{name}"')
    conn.execute("UPDATE audit SET reason = 'nothing to see' WHERE sequence = 2")
    conn.close()
    with qtbot.waitSignal(page.verified, timeout=WAIT_MS) as broken:
        page.verify_button.click()
    report = broken.args[0]
    assert not report.ok
    chain = [p for p in report.problems if p.what == "audit chain broken"]
    assert chain and chain[0].where.startswith("audit #2 ")
    assert any(p.what == "trigger missing" for p in report.problems)
    assert "The audit chain is broken" in page.message.text()


def test_export_the_filtered_log_as_csv(qtbot, populated, open_desk, tmp_path, monkeypatch):
    path, ids = populated
    decide_some(path, ids)
    page = audit_page(qtbot, open_desk(path))
    qtbot.waitUntil(lambda: page.actor.findData("operator:bob") >= 0, timeout=WAIT_MS)
    page.actor.setCurrentIndex(page.actor.findData("operator:bob"))
    settle(qtbot, page, lambda: page.model.rowCount() == 2)
    out = tmp_path / "audit.csv"
    monkeypatch.setattr(SaveDialog, "ask", classmethod(lambda cls, *a: str(out)))
    page.export_button.click()
    qtbot.waitUntil(lambda: "Wrote 2 audit entries" in page.message.text(), timeout=WAIT_MS)
    rows = list(csv.DictReader(out.open(encoding="utf-8")))
    assert [r["action"] for r in rows] == ["run.cancel_requested", "approval.denied"]
    assert rows[1]["reason"] == "invoice amount looks wrong"


def test_audit_model_passes_the_model_tester(qtbot, qtmodeltester, populated):
    path, ids = populated
    decide_some(path, ids)
    runner, journal = TaskRunner(), guarded(path)
    model = AuditModel(runner)
    qtmodeltester.check(model)
    model.show(journal, text="rotating")
    loaded(qtbot, model)
    assert model.rowCount() == 1
    model.show(journal, action_prefix="approval.", entity_kind="approval")
    loaded(qtbot, model)
    qtmodeltester.check(model)
    assert {model.item(r).entity_kind for r in range(model.rowCount())} == {"approval"}
    runner.shutdown()
