"""`proctor open proctor://…`: a malformed or foreign link is a usage error (exit 2, one
sentence on stderr) found before anything of Qt is imported; a good one opens the desk on
the journal chosen as every other command chooses it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from proctor.core import Journal

# `python -m proctor ARGV`, writing the modules it held at exit to $MODULES_OUT
RUN = (
    "import atexit, json, os, runpy, sys\n"
    "out = os.environ['MODULES_OUT']\n"
    "atexit.register(lambda: open(out, 'w').write(json.dumps(sorted(sys.modules))))\n"
    "sys.argv = ['proctor', *sys.argv[1:]]\n"
    "runpy.run_module('proctor', run_name='__main__', alter_sys=True)\n"
)


def proctor(tmp_path: Path, *argv: str) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    out = tmp_path / "modules.json"
    env = {k: v for k, v in os.environ.items() if k != "PROCTOR_JOURNAL"}
    proc = subprocess.run(
        [sys.executable, "-c", RUN, *argv],
        capture_output=True,
        text=True,
        timeout=120,
        env={**env, "MODULES_OUT": str(out), "PROCTOR_STATE_DIR": str(tmp_path / "state")},
    )
    return proc, set(json.loads(out.read_text()))


@pytest.mark.parametrize(
    "url",
    [
        "proctor://item/apr_1;touch${IFS}/tmp/pwned",
        "proctor://item/apr 1",
        "proctor://item/12\u202e345",
        "proctor://item/%E2%80%AE",  # an escaped bidi override
        "proctor://run/" + "x" * 5000,
        "proctor://rule/rule_1",
        "proctor://item/",
        "proctor:item",
    ],
)
def test_a_malformed_link_exits_2_without_starting_qt(tmp_path, url):
    journal = tmp_path / "j.db"
    Journal.open(journal).close()
    proc, modules = proctor(tmp_path, "open", url, "--journal", str(journal))
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("proctor open: error: ")
    assert len(proc.stderr.splitlines()) == 1
    assert "\u202e" not in proc.stderr
    assert not {m for m in modules if m.split(".")[0] == "PySide6"}
    assert not (Path("/tmp/pwned")).exists()


def test_a_foreign_url_is_not_taken_for_a_link(tmp_path):
    """https://… is not ours: it is read as a server journal's URL, as before links."""
    proc, _ = proctor(tmp_path, "open", "https://example.invalid/item/apr_1", "--journal", "x")
    assert proc.returncode == 2
    assert "--journal goes with a link" in proc.stderr


def test_a_link_with_no_journal_known_says_which_journal(tmp_path):
    proc, modules = proctor(tmp_path, "open", "proctor://item/apr_1")
    assert proc.returncode == 2
    assert "which journal?" in proc.stderr
    assert not {m for m in modules if m.split(".")[0] == "PySide6"}
