"""`proctor completion SHELL` prints a working completion script built from the parser."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest


def script(shell: str) -> str:
    return subprocess.run(
        [sys.executable, "-m", "proctor", "completion", shell],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_bash_completes_subcommands_and_their_flags(tmp_path):
    path = tmp_path / "proctor.bash"
    path.write_text(script("bash"))

    def complete(*words: str) -> list[str]:
        probe = (
            f"source {path}; COMP_WORDS=(proctor {' '.join(words)}); "
            f'COMP_CWORD={len(words)}; COMP_LINE="proctor {" ".join(words)}"; '
            f'COMP_POINT=${{#COMP_LINE}}; _shtab_proctor; printf "%s\\n" "${{COMPREPLY[@]}}"'
        )
        done = subprocess.run(["bash", "-c", probe], capture_output=True, text=True, timeout=60)
        return done.stdout.split()

    assert {"approve", "answer"} <= set(complete("a"))
    assert "--reason" in complete("deny", "--r")


def test_zsh_and_tcsh_scripts_are_printed():
    assert "#compdef proctor" in script("zsh")
    assert "complete proctor" in script("tcsh")
