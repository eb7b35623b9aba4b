"""Journal.recording: the change-feed rows a caller's own writes committed, exactly."""

from __future__ import annotations

import threading

import pytest

from proctor.core import Actor, Journal, errors


def open_(path, who: str = "coder") -> Journal:
    return Journal.open(path, actor=Actor.agent(who))


def test_recording_holds_exactly_the_rows_the_write_committed(tmp_path):
    path = tmp_path / "j.db"
    with open_(path) as j:
        run = j.runs.start("p", "t", agent="coder")
        before = j.changes.latest()
        written: list = []
        with j.recording(written):
            approval = j.approvals.request(run.id, {"tool": "x", "args": {}}, reason="r")
        feed = j.changes.since(before).changes
        assert [c.model_dump() for c in written] == [c.model_dump() for c in feed]
        assert approval.id in {c.entity_id for c in written}


def test_recording_leaves_out_other_threads_and_other_processes(tmp_path):
    path = tmp_path / "j.db"
    with open_(path) as j, open_(path, "other") as other:
        run = j.runs.start("p", "t", agent="coder")
        written: list = []
        with j.recording(written):
            other.runs.start("p", "theirs", agent="other")  # another process
            elsewhere = threading.Thread(target=lambda: j.runs.start("p", "thread", agent="c"))
            elsewhere.start()
            elsewhere.join()
            mine = j.approvals.request(run.id, {"tool": "x", "args": {}}, reason="r")
        assert written and {c.entity_id for c in written if c.entity_kind == "approval"} \
            == {mine.id}
        assert all(c.run_id == run.id for c in written)


def test_a_refused_write_records_nothing_and_after_the_block_nothing_is_kept(tmp_path):
    path = tmp_path / "j.db"
    with open_(path) as agent, Journal.open(path, actor=Actor.operator("alice")) as j:
        run = agent.runs.start("p", "t", agent="coder")
        approval = agent.approvals.request(run.id, {"tool": "x", "args": {}}, reason="r")
        written: list = []
        with j.recording(written), pytest.raises(errors.StaleVersion):
            j.approvals.decide(approval.id, True, expected_version=approval.version + 5)
        assert written == []
        j.approvals.decide(approval.id, True, expected_version=approval.version)  # outside
        assert written == []


def test_a_write_that_raises_after_its_commit_still_records_its_rows(tmp_path):
    path = tmp_path / "j.db"
    with open_(path) as j:
        run = j.runs.start("p", "t", agent="coder")
        before = j.changes.latest()
        written: list = []

        def write(tx) -> None:
            tx.changed("run", run.id, run.id)
            tx.raise_after_commit(errors.ValidationError("said after the commit"))

        with j.recording(written), pytest.raises(errors.ValidationError):
            j.write(write)
        assert [c.seq for c in written] == [c.seq for c in j.changes.since(before).changes]
        assert len(written) == 1
