"""`proctor comment ID TEXT` and `proctor comments ID`, and the thread under `proctor show
ID`: two operators comment on one approval (one of them from a script, reading standard
input), hostile text is printed escaped, and nothing is written for an unknown id, empty
text or text over the limit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from proctor.core import Actor, Journal

from .test_ops import read

PAY = {"tool": "payments.send", "args": {"account": "acme", "amount": 9000}}


def ask(journal: Path) -> str:
    with Journal.open(journal, actor=Actor.agent("payer")) as agent:
        run = agent.runs.start("billing", "pay invoices")
        return agent.approvals.request(run.id, PAY, reason="invoice 7").id


def script(journal: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """`proctor` as a script: its own process, standard input from a pipe, no terminal."""
    env = {**os.environ, "PROCTOR_JOURNAL": str(journal), "PROCTOR_CONFIG": os.devnull}
    return subprocess.run(
        [sys.executable, "-m", "proctor", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=120,
    )


def test_two_operators_comment_and_show_prints_the_thread(cli, journal: Path) -> None:
    approval = ask(journal)
    first = cli("comment", approval, "who is acme?", "--as", "alice")
    assert first.rc == 0, first.err
    assert first.out.startswith(f"commented on approval {approval} (#1, cmt_")
    second = script(journal, "comment", approval, "-", "--as", "bob", stdin="our vendor\n")
    assert second.returncode == 0, second.stderr
    assert "(#2, cmt_" in second.stdout
    hostile = "\x1b[2Jrm -rf \u202eevil\u202c\nline two"
    assert cli("comment", approval, hostile, "--as", "alice").rc == 0

    shown = cli("show", approval).out
    assert "comments (3):" in shown
    assert "operator:alice" in shown and "operator:bob" in shown
    assert "who is acme?" in shown and "our vendor" in shown
    assert "\x1b" not in shown and "\u202e" not in shown  # escaped, never terminal code
    listed = json.loads(cli("comments", approval, "--json").out)
    assert [(c["seq"], c["author"]) for c in listed] == [
        (1, "operator:alice"),
        (2, "operator:bob"),
        (3, "operator:alice"),
    ]
    assert listed[2]["text"] == hostile.strip()
    assert json.loads(cli("show", approval, "--json").out)["comments"][1]["text"] == "our vendor"
    assert read(journal, lambda j: j.approvals.get(approval).status.value) == "pending"
    done = script(journal, "verify")
    assert done.returncode == 0, done.stdout + done.stderr


def test_nothing_is_written_for_a_bad_comment(cli, journal: Path) -> None:
    approval = ask(journal)
    missing = cli("comment", "apr_nothing", "hello")
    assert missing.rc == 1 and "apr_nothing" in missing.err
    empty = cli("comment", approval, "   ")
    assert empty.rc == 2
    long = cli("comment", approval, "x" * 20_001)
    assert long.rc == 1 and "too long" in long.err
    assert cli("comments", approval).out.startswith("no comments on ")
    assert read(journal, lambda j: j.comments.thread(approval)) == []
