"""Export a run and import it into a fresh journal: same ids, sequences, times and digests
(issue 8). Broken or conflicting imports write nothing. CSV exports of runs and audit."""

from __future__ import annotations

import csv
import io
import json
import shutil

import pytest

from proctor.cli import main as cli_main
from proctor.core import Actor, Journal, errors
from proctor.core.audit.verify import verify
from proctor.core.ops.transfer import (
    AUDIT_CSV,
    RUN_CSV,
    export_run,
    import_run,
    read_export,
    write_audit_csv,
    write_run_json,
    write_run_jsonl,
    write_runs_csv,
)

from .helpers import raw, row_counts

TABLES = (
    "runs",
    "attempts",
    "events",
    "tool_calls",
    "approvals",
    "interactions",
    "decisions",
    "effects",
    "receipts",
)


@pytest.fixture
def journal_path(tmp_path, busy_template):
    path = tmp_path / "busy.db"
    shutil.copy2(busy_template[0], path)
    return path


@pytest.fixture
def busy(busy_template):
    return busy_template[1]


@pytest.fixture
def fresh(tmp_path, template_journal):
    path = tmp_path / "fresh.db"
    shutil.copy2(template_journal, path)
    with Journal.open(path, actor=Actor.operator("importer")) as j:
        yield j


def rows_of(path, run_id: str) -> dict[str, list[tuple]]:
    """Every row of the run in every imported table, as stored (raw SQLite)."""
    out = {}
    with raw(path) as conn:
        for table in TABLES:
            key = "id" if table == "runs" else "run_id"
            out[table] = sorted(
                conn.execute(f'SELECT * FROM "{table}" WHERE {key} = ?', (run_id,)).fetchall(),
                key=repr,
            )
    return out


def test_json_round_trip_reproduces_every_row_and_digest(
    operator, busy, journal_path, fresh, tmp_path
):
    for run_id in busy["runs"]:
        out = tmp_path / f"{run_id}.json"
        with out.open("w", encoding="utf-8") as f:
            count = write_run_json(operator, run_id, f)
        assert count == operator.runs.get(run_id).last_sequence
        report = import_run(fresh, read_export(out))
        assert report.verify is not None and report.verify.ok, report.verify
        assert rows_of(fresh.path, run_id) == rows_of(journal_path, run_id)
    assert verify(fresh).ok
    imported = fresh.audit.list().items
    assert {a.action for a in imported} == {"run.imported"}
    assert {a.entity_id for a in imported} == set(busy["runs"])


def test_an_export_from_before_effect_digests_still_imports_and_verifies(
    operator, busy, journal_path, fresh
):
    """A bundle written before 0005 has no ``effects.action_digest``: it is made from the
    action the effect carries, and the imported run verifies as the original does."""
    run_id = busy["runs"][0]  # consumed an approval into effect fx-1
    bundle = export_run(operator, run_id)
    for effect in bundle["tables"]["effects"]:
        del effect["action_digest"]
    assert bundle["tables"]["effects"]
    report = import_run(fresh, bundle)
    assert report.verify.ok, report.verify.problems
    assert rows_of(fresh.path, run_id) == rows_of(journal_path, run_id)
    assert not fresh.effects.get("fx-1").tampered


def test_an_export_from_before_any_added_column_imports_with_its_absence(operator, busy, fresh):
    """Generated over db.ADDED_COLUMNS: a bundle whose rows lack every column a later
    revision added (what an older Proctor wrote: no hold, no retry asked, no waiter stamp)
    imports, each such column holding what an older journal means by its absence."""
    from proctor.core.storage import db

    run_id = busy["runs"][0]
    bundle = export_run(operator, run_id)
    stripped = set()
    for table, rows in [("runs", [bundle["run"]]), *bundle["tables"].items()]:
        added = set(db.ADDED_COLUMNS.get(table, {})) - {"action_digest"}  # made from the row
        for row in rows:
            for col in added & set(row):
                del row[col]
                stripped.add((table, col))
    assert {("approvals", "hold_until"), ("runs", "retry_requested")} <= stripped
    report = import_run(fresh, bundle)
    assert report.verify.ok, report.verify.problems
    with raw(fresh.path) as conn:
        for table, col in stripped:
            key = "id" if table == "runs" else "run_id"
            values = {
                v
                for (v,) in conn.execute(
                    f'SELECT "{col}" FROM "{table}" WHERE {key} = ?', (run_id,)
                )
            }
            assert values <= {None, 0}, (table, col, values)


def test_streamed_json_equals_the_in_memory_export(operator, busy):
    run_id = busy["runs"][0]
    buf = io.StringIO()
    write_run_json(operator, run_id, buf)
    streamed, whole = json.loads(buf.getvalue()), export_run(operator, run_id)
    assert streamed["events"] == whole["events"] and streamed["tables"] == whole["tables"]
    assert streamed["run"] == whole["run"]


def test_sql_null_and_json_null_stay_apart(operator, agent, fresh, tmp_path):
    run = agent.runs.start("p", "nulls")
    running = agent.runs.record_tool_call(run.id, "t", {"a": 1})  # result is SQL NULL
    done = agent.runs.record_tool_call(run.id, "t", {"a": 2})
    agent.runs.finish_tool_call(done.id, "succeeded", result=None)  # result is JSON null
    bundle = export_run(operator, run.id)
    calls = {r["id"]: r for r in bundle["tables"]["tool_calls"]}
    assert calls[running.id]["_null"] == ["result"] and "_null" not in calls[done.id]
    import_run(fresh, bundle)
    with raw(fresh.path) as conn:
        stored = dict(conn.execute("SELECT id, result FROM tool_calls").fetchall())
    assert stored == {running.id: None, done.id: "null"}


def test_jsonl_events_alone_rebuild_the_run(operator, busy, journal_path, fresh, tmp_path):
    run_id = busy["runs"][0]  # completed
    out = tmp_path / "events.jsonl"
    with out.open("w", encoding="utf-8") as f:
        write_run_jsonl(operator, run_id, f)
    report = import_run(fresh, read_export(out))
    assert report.verify.ok and report.events == operator.runs.get(run_id).last_sequence
    original = rows_of(journal_path, run_id)
    copied = rows_of(fresh.path, run_id)
    assert copied["events"] == original["events"]
    assert copied["runs"] == original["runs"]
    theirs, ours = fresh.runs.get(run_id), operator.runs.get(run_id)
    assert (theirs.status, theirs.finished_at, theirs.last_sequence) == (
        ours.status,
        ours.finished_at,
        ours.last_sequence,
    )


def test_the_ops_export_jsonl_is_importable(busy, journal_path, fresh, tmp_path, capsys):
    run_id = busy["runs"][1]
    out = tmp_path / "ops.jsonl"
    assert cli_main(["export", run_id, "--journal", str(journal_path), "-o", str(out)]) == 0
    report = import_run(fresh, read_export(out))
    assert report.verify.ok
    assert rows_of(fresh.path, run_id)["events"] == rows_of(journal_path, run_id)["events"]


def test_an_existing_run_id_is_refused_and_nothing_written(operator, busy, journal_path):
    bundle = export_run(operator, busy["runs"][0])
    before = row_counts(journal_path)
    with pytest.raises(errors.NotAllowed, match="already exists"):
        import_run(operator, bundle)
    assert row_counts(journal_path) == before


def test_a_tampered_export_names_the_broken_event(operator, busy, fresh):
    bundle = export_run(operator, busy["runs"][0])
    bundle["events"][2]["payload"] = {"forged": True}
    before = row_counts(fresh.path)
    with pytest.raises(errors.DigestMismatch, match="#3"):
        import_run(fresh, bundle)
    assert row_counts(fresh.path) == before


def test_a_truncated_export_is_refused(operator, busy, fresh):
    bundle = export_run(operator, busy["runs"][0])
    bundle["events"].pop()
    with pytest.raises(errors.DigestMismatch, match="events end at #14"):
        import_run(fresh, bundle)


def test_unknown_columns_are_refused(operator, busy, fresh):
    bundle = export_run(operator, busy["runs"][0])
    bundle["run"]["colour"] = "red"
    with pytest.raises(errors.ValidationError, match="colour"):
        import_run(fresh, bundle)


def test_a_conflicting_effect_key_rolls_the_whole_import_back(operator, busy, fresh):
    run_id = busy["runs"][0]
    bundle = export_run(operator, run_id)
    other = Journal.open(fresh.path, actor=Actor.agent("x"))
    try:
        r = other.runs.start("p", "squatter")
        other.effects.reserve(bundle["tables"]["effects"][0]["key"], tool="t", run_id=r.id)
    finally:
        other.close()
    before = row_counts(fresh.path)
    with pytest.raises(errors.NotAllowed, match="conflicts"):
        import_run(fresh, bundle)
    assert row_counts(fresh.path) == before


def test_a_missing_parent_link_is_dropped_with_a_note(agent, operator, fresh):
    parent = agent.runs.start("p", "parent")
    child = agent.runs.start("p", "child", parent_run_id=parent.id)
    report = import_run(fresh, export_run(operator, child.id))
    assert report.verify.ok and any("parent run" in n for n in report.notes)
    assert fresh.runs.get(child.id).parent_run_id is None


def test_cli_import_round_trip(busy, journal_path, tmp_path, template_journal, capsys):
    target = tmp_path / "target.db"
    shutil.copy2(template_journal, target)
    run_id = busy["runs"][2]
    out = tmp_path / "run.json"
    assert cli_main(["export-run", run_id, "--journal", str(journal_path), "-o", str(out)]) == 0
    assert cli_main(["import", str(out), "--journal", str(target), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["run_id"] == run_id and result["verify"]["ok"]
    assert rows_of(target, run_id) == rows_of(journal_path, run_id)
    assert cli_main(["import", str(out), "--journal", str(target)]) == 1
    assert "already exists" in capsys.readouterr().err


def test_runs_csv_follows_the_filter_and_guards_formulas(agent, operator, tmp_path):
    agent.runs.start("csvproj", '=HYPERLINK("http://x")')
    agent.runs.start("csvproj", "plain title")
    from proctor.core.audit.timeline import RunQuery

    buf = io.StringIO()
    assert (
        write_runs_csv(operator, RunQuery(project="csvproj", sort="title", descending=False), buf)
        == 2
    )
    rows = list(csv.reader(io.StringIO(buf.getvalue())))
    assert rows[0] == list(RUN_CSV)
    assert [r[1] for r in rows[1:]] == ['\'=HYPERLINK("http://x")', "plain title"]


def test_audit_csv_has_every_entry_newest_first(operator, busy):
    buf = io.StringIO()
    count = write_audit_csv(operator, buf)
    rows = list(csv.reader(io.StringIO(buf.getvalue())))
    assert rows[0] == list(AUDIT_CSV) and count == len(rows) - 1 == operator.audit.count()
    seqs = [int(r[0]) for r in rows[1:]]
    assert seqs == sorted(seqs, reverse=True)


def test_audit_csv_says_where_each_decision_was_made(agent, operator, clock):
    run = agent.runs.start("srcproj", "sources")
    asked = agent.approvals.request(
        run.id, {"tool": "mail.send", "args": {"to": "a@b"}}, reason="notify"
    )
    operator.approvals.decide(asked.id, True, expected_version=1, source="cli")
    agent.approvals.consume_and_reserve(asked.id, asked.action_digest, "fx-src", owner="w")
    agent.effects.begin("fx-src", owner="w")
    agent.effects.mark_ambiguous("fx-src", "provider timed out", owner="w")
    # same clock tick on purpose: the agent's entry is not paired with the operator's decision
    effect = operator.effects.get("fx-src")
    operator.effects.resolve(
        "fx-src", "committed", reason="seen in the outbox", expected_version=effect.version
    )
    buf = io.StringIO()
    write_audit_csv(operator, buf, run_id=run.id)
    rows = list(csv.DictReader(io.StringIO(buf.getvalue())))
    source = {r["action"]: r["source"] for r in rows}
    assert source["approval.approved"] == "cli"
    assert source["effect.resolved_committed"] == "desk"
    assert source["effect.ambiguous"] == ""  # recovery writes no decision row


def test_jsonl_rebuilds_attempts_the_agent_finished_and_a_cancel(
    agent, operator, fresh, journal_path, clock, tmp_path
):
    run = agent.runs.start("attempts", "finished attempts")
    clock.advance(1)
    agent.runs.finish_attempt(run.id, "failed", "rate limited")
    clock.advance(1)
    agent.runs.start_attempt(run.id, "retry")
    clock.advance(1)
    agent.runs.cancel(run.id, "operator asked")
    out = tmp_path / "events.jsonl"
    with out.open("w", encoding="utf-8") as f:
        write_run_jsonl(operator, run.id, f)
    assert import_run(fresh, read_export(out)).verify.ok
    rebuilt = [(a.status, a.error) for a in fresh.runs.attempts(run.id)]
    assert rebuilt == [("failed", "rate limited"), ("failed", "cancelled: operator asked")]
    assert rows_of(fresh.path, run.id)["attempts"] == rows_of(journal_path, run.id)["attempts"]


def test_an_export_from_before_answer_holds_still_imports_and_verifies(
    operator, busy, journal_path, fresh
):
    """A bundle written before 0014u has no ``interactions.hold_until`` nor ``taken_at``:
    its questions had no hold, and the imported run is the original."""
    bundles = [export_run(operator, run_id) for run_id in busy["runs"]]
    [bundle, *_] = [b for b in bundles if b["tables"].get("interactions")]
    for question in bundle["tables"]["interactions"]:
        del question["hold_until"], question["taken_at"]
    report = import_run(fresh, bundle)
    assert report.verify.ok, report.verify.problems
    run_id = bundle["run"]["id"]
    assert rows_of(fresh.path, run_id) == rows_of(journal_path, run_id)
