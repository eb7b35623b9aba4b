"""Damage inside a content page is damage (issue 32, item 12): bytes of a stored row flipped
in the closed file (SQLite's integrity check still passes: the page's structure is intact)
make its text bad UTF-8 or its JSON unparsable. `proctor show`, `deny` and `approve` say
"the journal is damaged at …" (never "a bug in Proctor"), `verify` names the place, `inbox`
still lists the item and names it damaged, and nothing is decided on a journal known to be
damaged."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from proctor.core import Actor, Journal, errors

MARK = b'"sessionsXYZ"'
DAMAGE = {  # the same length: only bytes inside the row change
    "bad-utf8": b'"sessions\xffYZ"',
    "bad-json": b'"sessionsXYZ}',
}


def damaged_journal(path: Path, how: str) -> tuple[str, str]:
    """A journal with two pending approvals; the first one's action is damaged in the file."""
    with Journal.open(path, actor=Actor.agent("bot")) as agent:
        run = agent.runs.start("shop", "migrate")
        bad = agent.approvals.request(
            run.id, {"tool": "db.migrate", "args": {"table": "sessionsXYZ"}}, reason="go"
        )
        good = agent.approvals.request(run.id, {"tool": "db.vacuum"}, reason="tidy")
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    data = path.read_bytes()
    assert data.count(MARK) == 1  # the action's text (the event's payload is JSON-escaped)
    path.write_bytes(data.replace(MARK, DAMAGE[how]))
    return bad.id, good.id


def decisions_in(path: Path) -> int:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return conn.execute("SELECT count(*) FROM decisions").fetchone()[0]
    finally:
        conn.close()


@pytest.fixture(params=sorted(DAMAGE))
def damaged(request, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, str, str]:
    path = tmp_path / "j.db"
    bad, good = damaged_journal(path, request.param)
    monkeypatch.setenv("PROCTOR_JOURNAL", str(path))
    monkeypatch.setenv("PROCTOR_OPERATOR", "tester")
    monkeypatch.setenv("PROCTOR_CONFIG", os.devnull)
    return path, bad, good


def test_the_cli_names_damage_as_damage(cli, damaged: tuple[Path, str, str]) -> None:
    path, bad, good = damaged
    for args in (("show", bad), ("deny", bad, "--reason", "no"), ("approve", bad, "--yes")):
        result = cli(*args)
        assert result.rc == 3, (args, result.err)
        assert "the journal is damaged at" in result.err and "its action" in result.err
        assert "bug in Proctor" not in result.err and "SELECT" not in result.err
        assert "proctor verify" in result.err
    assert decisions_in(path) == 0
    listed = cli("inbox")
    assert listed.rc == 0 and bad in listed.out and good in listed.out
    [line] = [li for li in listed.out.splitlines() if bad in li]
    assert "(damaged:" in line


def test_verify_reports_the_damaged_place(cli, damaged: tuple[Path, str, str]) -> None:
    path, bad, _good = damaged
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"  # SQLite sees none
    conn.close()
    report = cli("verify")
    assert report.rc == 1, report.out + report.err
    assert f"FAILED: damaged at approvals {bad}, its action" in report.out
    assert "bug in Proctor" not in report.err


def test_nothing_is_decided_on_a_journal_known_damaged(damaged: tuple[Path, str, str]) -> None:
    """The desk keeps its journal open: once a read found damage, a decision on another,
    healthy item is refused too (nothing is written to a file known to be damaged)."""
    path, bad, good = damaged
    with Journal.open(path, actor=Actor.operator("dana")) as j:
        healthy = j.approvals.get(good)
        with pytest.raises(errors.Damaged):
            j.approvals.get(bad)
        with pytest.raises(errors.Damaged) as refused:
            j.approvals.decide(good, False, expected_version=healthy.version, reason="no")
        assert "nothing is decided on a journal known to be damaged" in str(refused.value)
    assert decisions_in(path) == 0


def test_the_decode_scan_reads_a_page_at_a_time(
    damaged: tuple[Path, str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """No read of verify's decode scan holds a snapshot for a whole table (issue 33 review,
    17): with a page of one row, every table is read a row per read, and the damage in a
    later page is still named."""
    from proctor.core.audit import verify as verify_module

    path, bad, _good = damaged
    monkeypatch.setattr(verify_module, "BATCH", 1)
    with Journal.open(path, actor=Actor.operator("dana")) as j:
        reads: list[int] = []
        real_read = j.read

        def read(fn):  # counts the rows each read returns (a scan that streams returns none)
            out = real_read(fn)
            reads.append(len(out) if isinstance(out, list) else 10**9)
            return out

        monkeypatch.setattr(j, "read", read)
        problems: list = []
        verify_module._verify_decodes(j, problems)
    assert [p.where for p in problems] == [f"approvals {bad}, its action"]
    assert reads and max(reads) <= 1, reads
