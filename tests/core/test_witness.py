"""A -wal deleted before its checkpoint leaves a shorter journal that agrees with itself
(issue 17 item 7, [hostile]): the head witness a desk keeps beside it lets the next open and
`proctor verify` name the lost tail; an agent that opens the journal meanwhile gets a typed
disk I/O error with a sentence, not a traceback. No checkpoint is taken before the -wal goes:
the agent is another process, and so is what deletes the file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from proctor.core import Journal, errors
from proctor.core.audit.verify import verify
from proctor.core.audit.witness import HeadWitness, journal_id, witness_path

pytestmark = pytest.mark.sqlite_only  # the witness is a file beside the journal's file

AGENT = """
import json, sys
from proctor.core import Actor, Journal, errors
try:
    with Journal.open(sys.argv[1], actor=Actor.agent("bot")) as j:
        run = j.runs.start("shop", "ship it")
        a = j.approvals.request(run.id, {"tool": "deploy"}, reason="ship")
        print(json.dumps({"run": run.id, "approval": a.id}))
except errors.ProctorError as err:
    print(json.dumps({"error": type(err).__name__, "message": err.message, "hint": err.hint}))
"""


def agent(path: Path) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", AGENT, str(path)], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0 and out.stderr == "", out.stderr
    return json.loads(out.stdout)


def desk_sees(desk: Journal, witness: HeadWitness, since: int) -> int:
    """What the desk's watcher does: read the change feed, note it, write the witness."""
    cs = desk.changes.since(since)
    witness.observe(cs.changes)
    witness.journal_id = journal_id(desk)
    assert witness.write(witness.snapshot())
    return cs.until


def open_desk(path: Path) -> Journal:
    """The desk's journal: it holds the -wal open and polls ``data_version`` on a read-only
    probe connection, as the desk's watcher does (that probe, closed last, cannot
    checkpoint: what only the deleted -wal held is gone when the desk lets go)."""
    desk = Journal.open(path, actor="dana")
    desk.changes.data_version()
    return desk


def delete_wal(path: Path) -> None:
    wal = Path(f"{path}-wal")
    assert wal.stat().st_size > 0  # the agent's commits are there, not checkpointed
    subprocess.run(["rm", str(wal)], check=True)


def test_a_lost_wal_tail_is_reported_by_the_next_open_and_verify(journal_path):
    desk = open_desk(journal_path)  # keeps the -wal from being checkpointed
    witness = HeadWitness(journal_path)
    seq = desk_sees(desk, witness, desk.changes.latest())
    first = agent(journal_path)  # an acknowledged request
    seq = desk_sees(desk, witness, seq)
    assert desk.approvals.get(first["approval"]).status == "pending"
    delete_wal(journal_path)
    desk.close()  # the last connection: what it checkpoints is the file's, not the tail
    with Journal.open(journal_path, actor="auditor", read_only=True) as j:
        assert j.changes.latest() < seq  # the tail is gone ...
        lost = j.lost_tail  # ... and the open says so
        assert lost is not None
        assert lost.last_seen == seq and lost.first_missing <= seq
        assert f"approval {first['approval']}" in lost.lost
        assert f"run {first['run']}" in lost.lost
        assert "missing change" in lost.sentence and "-wal" in lost.sentence
        report = verify(j)
    assert not report.ok
    problem = report.problems[0]
    assert problem.what == "changes missing"
    assert first["approval"] in problem.detail and "backup" in problem.detail


def test_later_writes_in_the_lost_sequences_do_not_hide_the_loss(journal_path):
    desk = open_desk(journal_path)
    witness = HeadWitness(journal_path)
    seq = desk_sees(desk, witness, desk.changes.latest())
    lost = agent(journal_path)
    desk_sees(desk, witness, seq)
    delete_wal(journal_path)
    desk.close()
    for _ in range(3):  # the journal grows past what the witness saw, with other changes
        agent(journal_path)
    with Journal.open(journal_path, actor="auditor") as j:
        assert j.changes.latest() > witness.change_seq
        assert j.lost_tail is not None and j.lost_tail.replaced
        assert f"approval {lost['approval']}" in j.lost_tail.lost
        assert "later writes" in j.lost_tail.sentence
        assert verify(j).problems[0].what == "changes missing"


def test_a_journal_ahead_of_its_witness_is_fine(journal_path):
    with Journal.open(journal_path, actor="dana") as desk:
        witness = HeadWitness(journal_path)
        seq = desk_sees(desk, witness, desk.changes.latest())
        agent(journal_path)
        desk_sees(desk, witness, seq)
    for _ in range(2):
        agent(journal_path)  # written after the desk closed: ahead of the witness
    with Journal.open(journal_path, actor="auditor") as j:
        assert j.lost_tail is None
        assert verify(j).ok


def test_another_journal_at_the_same_path_is_not_judged_by_the_old_witness(tmp_path):
    path = tmp_path / "journal.db"
    with Journal.open(path, actor="dana") as desk:
        witness = HeadWitness(path)
        seq = desk_sees(desk, witness, 0)
        agent(path)
        desk_sees(desk, witness, seq)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    with Journal.open(path, actor="dana") as fresh:  # a new journal, a new journal id
        assert fresh.lost_tail is None
        assert verify(fresh).ok


def test_an_unreadable_witness_is_ignored(journal_path):
    for junk in (
        "",
        "{",
        "[1, 2]",
        json.dumps({"proctor_head_witness": 1}),
        json.dumps({"proctor_head_witness": 1, "change_seq": "x", "seen_at": 0}),
        "\x00\xff",
    ):
        witness_path(journal_path).write_text(junk, encoding="latin-1")
        with Journal.open(journal_path, actor="dana") as j:
            assert j.lost_tail is None


def test_an_agent_opening_after_the_wal_was_deleted_gets_a_disk_io_error_sentence(journal_path):
    desk = Journal.open(journal_path, actor="dana")  # still holds the journal open
    try:
        desk.changes.latest()
        agent(journal_path)
        delete_wal(journal_path)
        got = agent(journal_path)  # a new agent process, while the desk holds the old -wal
    finally:
        desk.close()
    assert got.get("error") == "StoreIOError", got
    assert "-wal" in got["message"] and "deleted" in got["message"]
    assert "proctor verify" in got["hint"]
    assert isinstance(errors.StoreIOError("x"), errors.StoreError)
