"""Errors are sentences, never tracebacks: every command walked with bad paths, files of
the wrong kind, wrong argument types and missing journals gets one line naming what is wrong
(and a hint), and the documented exit code (1 refused, 2 usage, 3 journal unusable).

Each case runs `proctor` in a separate process, as a user would: a traceback anywhere on
stderr fails it.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from proctor.core import Actor, Journal

from .conftest import OPERATOR


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("bad")
    good = root / "journal.db"
    with Journal.open(good, actor=Actor.agent("bot")) as agent:
        run = agent.runs.start("shop", "a run")
        agent.runs.append_event(run.id, "step", {"n": 1})
    notes = root / "notes.txt"
    notes.write_text("shopping: milk, eggs\n")
    binary = root / "random.bin"
    binary.write_bytes(bytes(range(256)) * 16)
    foreign = root / "foreign.db"
    conn = sqlite3.connect(foreign)
    conn.execute("CREATE TABLE t (x)")
    conn.commit()
    conn.close()
    folder = root / "a folder"
    folder.mkdir()
    json_list = root / "list.json"
    json_list.write_text("[1, 2, 3]")
    return {
        "good": good,
        "notes": notes,
        "binary": binary,
        "foreign": foreign,
        "folder": folder,
        "missing": root / "missing.db",
        "json_list": json_list,
        "nowhere": root / "no such folder" / "out.json",
        "run": run.id,
        "root": root,
    }


def proctor(*args: object, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """`proctor ARGS` in a separate process, as a user runs it."""
    env = {**os.environ, "PROCTOR_CONFIG": os.devnull, "PROCTOR_OPERATOR": OPERATOR}
    env.pop("PROCTOR_JOURNAL", None)
    env.pop("PROCTOR_DEBUG", None)
    env["QT_QPA_PLATFORM"] = "offscreen"
    return subprocess.run(
        [sys.executable, "-m", "proctor", *map(str, args)],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


@pytest.fixture
def in_process(capsys, monkeypatch):
    """`proctor ARGS` in this process (fast; an uncaught exception fails the test as a
    traceback would), returning the same shape as ``proctor``."""
    from proctor.cli import main

    monkeypatch.setenv("PROCTOR_CONFIG", os.devnull)
    monkeypatch.setenv("PROCTOR_OPERATOR", OPERATOR)
    monkeypatch.delenv("PROCTOR_JOURNAL", raising=False)
    monkeypatch.delenv("PROCTOR_DEBUG", raising=False)

    def run(*args: object, cwd: Path) -> subprocess.CompletedProcess:
        monkeypatch.chdir(cwd)
        capsys.readouterr()
        try:
            code = main([str(a) for a in args])
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else 1
        out, err = capsys.readouterr()
        return subprocess.CompletedProcess(args, code, out, err)

    return run


def contents(folder: Path) -> dict[str, bytes]:
    """Every file's bytes (a reader may touch a journal's -shm and -wal: not compared)."""
    return {
        p.name: p.read_bytes()
        for p in folder.iterdir()
        if p.is_file() and not p.name.endswith(("-shm", "-wal"))
    }


NOT_A_JOURNAL = "not a Proctor journal"
# (name, argv with {placeholders}, exit code, words the message must contain)
CASES = [
    ("open a text file", ["open", "{notes}"], 3, NOT_A_JOURNAL),
    ("open random bytes", ["open", "{binary}"], 3, NOT_A_JOURNAL),
    ("open another program's database", ["open", "{foreign}"], 3, NOT_A_JOURNAL),
    ("open a folder", ["open", "{folder}"], 3, "is a folder"),
    ("open a missing file", ["open", "{missing}"], 3, "no journal at"),
    ("inbox of a text file", ["inbox", "--journal", "{notes}"], 3, NOT_A_JOURNAL),
    ("runs of random bytes", ["runs", "--journal", "{binary}"], 3, NOT_A_JOURNAL),
    ("show in a foreign database", ["show", "x", "--journal", "{foreign}"], 3, NOT_A_JOURNAL),
    ("verify a text file", ["verify", "{notes}"], 3, NOT_A_JOURNAL),
    ("verify a folder", ["verify", "{folder}"], 3, "is a folder"),
    ("verify a missing file", ["verify", "{missing}"], 3, "no journal at"),
    (
        "approve in a missing journal",
        ["approve", "apr_x", "--journal", "{missing}"],
        3,
        "no journal at",
    ),
    ("no journal named", ["inbox"], 2, "which journal"),
    ("simulate a text file", ["simulate", "{notes}", "--duration", "1"], 3, NOT_A_JOURNAL),
    ("mcp on a text file", ["mcp", "{notes}"], 3, NOT_A_JOURNAL),
    ("mcp on a folder", ["mcp", "{folder}"], 3, "is a folder"),
    (
        "export-run to a missing folder",
        ["export-run", "{run}", "--journal", "{good}", "-o", "{nowhere}"],
        2,
        "does not exist",
    ),
    (
        "export to a missing folder",
        ["export", "{run}", "--journal", "{good}", "-o", "{nowhere}"],
        2,
        "does not exist",
    ),
    (
        "export-runs to a missing folder",
        ["export-runs", "--journal", "{good}", "-o", "{nowhere}"],
        2,
        "does not exist",
    ),
    (
        "export-audit to a missing folder",
        ["export-audit", "--journal", "{good}", "-o", "{nowhere}"],
        2,
        "does not exist",
    ),
    (
        "export-audit to a folder",
        ["export-audit", "--journal", "{good}", "-o", "{folder}"],
        2,
        "is a folder",
    ),
    (
        "export-run of an unknown run",
        ["export-run", "run_nope", "--journal", "{good}"],
        1,
        "does not exist",
    ),
    (
        "import a text file",
        ["import", "{notes}", "--journal", "{root}/new.db"],
        1,
        "not a Proctor export",
    ),
    (
        "import a journal (binary)",
        ["import", "{good}", "--journal", "{root}/new.db"],
        1,
        "not a Proctor export",
    ),
    (
        "import a JSON list",
        ["import", "{json_list}", "--journal", "{root}/new.db"],
        1,
        "not a Proctor export",
    ),
    (
        "import a missing file",
        ["import", "{missing}", "--journal", "{root}/new.db"],
        2,
        "cannot read",
    ),
    ("import a folder", ["import", "{folder}", "--journal", "{root}/new.db"], 2, "cannot read"),
    (
        "import into a text file",
        ["import", "{notes}", "--journal", "{notes}"],
        1,
        "not a Proctor export",
    ),
    (
        "answer from a missing file",
        ["answer", "int_x", "--json", "@{missing}", "--journal", "{good}"],
        2,
        "cannot read",
    ),
    (
        "answer with bad JSON",
        ["answer", "int_x", "--json", "{{nope", "--journal", "{good}"],
        2,
        "not valid JSON",
    ),
    (
        "merge from a missing file",
        [
            "resolve-memory",
            "rec_x",
            "merge",
            "--content-file",
            "{missing}",
            "--reason",
            "r",
            "--journal",
            "{good}",
        ],
        2,
        "cannot read",
    ),
    (
        "evidence from a folder",
        [
            "resolve-effect",
            "k",
            "failed",
            "--reason",
            "r",
            "--evidence",
            "@{folder}",
            "--journal",
            "{good}",
        ],
        2,
        "cannot read",
    ),
    ("a negative limit", ["inbox", "--limit", "-5", "--journal", "{good}"], 2, "1 or more"),
    (
        "a limit that is no number",
        ["runs", "--limit", "ten", "--journal", "{good}"],
        2,
        "not a whole number",
    ),
    (
        "a negative sequence",
        ["timeline", "{run}", "--after", "-1", "--journal", "{good}"],
        2,
        "0 or more",
    ),
    (
        "a timeout that is no number",
        ["inbox", "--timeout", "soon", "--journal", "{good}"],
        2,
        "number of seconds",
    ),
    ("verify an unknown run", ["verify", "{good}", "--run", "run_nope"], 1, "does not exist"),
    (
        "timeline of an unknown run",
        ["timeline", "run_nope", "--journal", "{good}"],
        1,
        "does not exist",
    ),
    ("demo-journal onto a folder", ["demo-journal", "{folder}"], 2, "is a folder"),
    ("demo-journal onto a file", ["demo-journal", "{notes}"], 1, "already exists"),
    (
        "a malformed cursor",
        ["inbox", "--cursor", "!!", "--journal", "{good}"],
        1,
        "malformed page cursor",
    ),
]


@pytest.mark.parametrize(
    ("argv", "code", "words"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_every_error_is_a_sentence_with_its_exit_code(files, in_process, argv, code, words) -> None:
    args = [a.format(**files) for a in argv]
    before = contents(files["root"])
    done = in_process(*args, cwd=files["root"])
    assert "Traceback" not in done.stderr and "Traceback" not in done.stdout, done.stderr
    assert done.returncode == code, (done.returncode, done.stderr)
    message = [line for line in done.stderr.splitlines() if "error" in line]
    assert message, done.stderr
    assert message[-1].startswith(("proctor ", f"usage: proctor {argv[0]}")), done.stderr
    assert words in done.stderr, done.stderr
    if NOT_A_JOURNAL in words:  # a file that never was a journal: no advice to restore it
        assert "backup" not in done.stderr and "damaged" not in done.stderr
    after = contents(files["root"])
    assert {k: v for k, v in after.items() if k in before} == before  # nothing was changed


@pytest.mark.parametrize("name", ["notes", "binary", "foreign"])
def test_proctor_open_on_a_file_that_is_no_journal_says_so_in_a_new_process(files, name) -> None:
    """As a user runs it: no Qt, no traceback, no dialog; exit 3 as the README says."""
    done = proctor("open", files[name], cwd=files["root"])
    assert done.returncode == 3, done.stderr
    assert "Traceback" not in done.stderr and "qt." not in done.stderr.lower()
    assert f"{files[name]} is " in done.stderr and NOT_A_JOURNAL in done.stderr
    assert "backup" not in done.stderr


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_an_unreadable_journal_or_answer_file_is_a_sentence(files, tmp_path) -> None:
    locked = tmp_path / "locked.db"
    locked.write_bytes(files["good"].read_bytes())
    locked.chmod(0)
    done = proctor("inbox", "--journal", locked)
    assert done.returncode == 3 and "Traceback" not in done.stderr
    assert "cannot be read" in done.stderr or "permission" in done.stderr.lower()
    answer = tmp_path / "answer.json"
    answer.write_text("{}")
    answer.chmod(0)
    done = proctor("answer", "int_x", "--json", f"@{answer}", "--journal", files["good"])
    assert done.returncode == 2 and "cannot read" in done.stderr


def test_an_unexpected_failure_is_a_sentence_and_the_traceback_is_on_demand(
    files, monkeypatch, capsys
) -> None:
    from proctor import cmd_ops
    from proctor.cli import main

    def broken(*_a: object, **_k: object) -> None:
        raise RuntimeError("something nobody expected")

    monkeypatch.setattr(cmd_ops.render, "runs", broken)
    monkeypatch.delenv("PROCTOR_DEBUG", raising=False)
    assert main(["runs", "--journal", str(files["good"])]) == 1
    err = capsys.readouterr().err
    assert "unexpected error: RuntimeError: something nobody expected" in err
    assert "PROCTOR_DEBUG=1" in err
    monkeypatch.setenv("PROCTOR_DEBUG", "1")
    with pytest.raises(RuntimeError):
        main(["runs", "--journal", str(files["good"])])
