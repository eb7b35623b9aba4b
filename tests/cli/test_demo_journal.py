"""`proctor demo-journal`: deterministic for a seed, and every kind of item is in it."""

from __future__ import annotations

import io
import json
from collections import Counter
from pathlib import Path
from subprocess import Popen

import pytest

from proctor.cmd_sim import ProgressBar
from proctor.core import Journal, QuestionKind, SafetyClass


def fingerprint(path: Path) -> tuple[list, str]:
    """Every run's id, status and chain head, and the audit chain head."""
    with Journal.open(path, read_only=True) as j:
        heads, cursor = [], None
        while True:
            page = j.runs.list(limit=500, cursor=cursor, newest_first=False)
            for run in page.items:
                last = j.runs.events(run.id, descending=True, limit=1)[0]
                heads.append((run.id, run.status.value, run.last_sequence, last.digest))
            cursor = page.next_cursor
            if cursor is None:
                break
        return heads, j.audit.list(limit=1).items[0].digest


@pytest.mark.slow
def test_small_demo_is_deterministic(
    cli, demo_template: tuple[Path, dict], demo_twin: tuple[Path, Popen]
) -> None:
    template, summary = demo_template
    twin, proc = demo_twin
    out, err = proc.communicate(timeout=900)
    assert proc.returncode == 0, err
    assert {k: v for k, v in json.loads(out).items() if k not in ("path", "seconds", "bytes")} == {
        k: v for k, v in summary.items() if k not in ("path", "seconds", "bytes")
    }
    assert fingerprint(twin) == fingerprint(template)
    verified = cli("verify", twin)
    assert verified.rc == 0 and verified.out.startswith("ok: ")


def test_small_demo_has_every_kind_of_item(demo_template: tuple[Path, dict]) -> None:
    template, summary = demo_template
    assert 200 <= summary["runs"] <= 400
    assert all(n > 0 for n in summary["pending"].values()), summary["pending"]
    with Journal.open(template, read_only=True) as j:
        items = j.inbox.list(limit=1000).items
        classes = {i.safety_class for i in items if i.kind.value == "approval"}
        assert classes == {c.value for c in SafetyClass}
        open_kinds = {j.questions.get(i.id).kind for i in items if i.kind.value == "question"}
        assert open_kinds == set(QuestionKind)
        runs = j.runs.list(limit=1000).items
        assert {r.status.value for r in runs} >= {
            "completed",
            "failed",
            "cancelled",
            "waiting_for_user",
            "interrupted",
        }
        assert any(r.parent_run_id for r in runs) and any(r.current_attempt > 1 for r in runs)
        history = Counter()
        for run in runs:
            for a in j.approvals.for_run(run.id):
                history[f"approval {a.status.value}"] += 1
                history["consumed"] += a.consumed_at is not None
                history["by rule"] += bool(a.decided_by and a.decided_by.startswith("rule:"))
            for q in j.questions.for_run(run.id):
                history[f"question {q.status.value}"] += 1
        for needed in (
            "approval approved",
            "approval denied",
            "approval pending",
            "consumed",
            "by rule",
            "question resolved",
            "question requested",
        ):
            assert history[needed] > 0, (needed, history)
        committed = j.effects.list(status=["committed"], limit=5).items
        assert committed and j.effects.receipts(committed[0].key)
        entries = j.memory.list(limit=500)
        assert any(len(j.memory.history(e.id)) > 1 for e in entries)
        assert {e.scope.value for e in entries} == {"project", "space", "user"}
        resolved = [
            r
            for s in ("accepted_local", "accepted_incoming", "dismissed")
            for r in j.memory.conflicts(status=s)
        ]
        assert resolved
        rules = j.approvals.rules(active_only=False)
        assert any(r.revoked_at for r in rules) and any(r.active for r in rules)


def test_demo_journal_refuses_an_existing_file(cli, journal: Path) -> None:
    result = cli("demo-journal", journal)
    assert result.rc == 1 and "already exists" in result.err and "--force" in result.err


def test_progress_bar_reports_on_a_plain_stream() -> None:
    stream = io.StringIO()
    bar = ProgressBar("building", stream)
    bar(1, 10, "100 events")
    bar(2, 10, "200 events")  # throttled: not a terminal
    bar(10, 10, "1,000 events")
    lines = stream.getvalue().splitlines()
    assert len(lines) == 2 and "1/10 runs" in lines[0]
    assert "100%" in lines[1] and "10/10 runs" in lines[1] and "1,000 events" in lines[1]
