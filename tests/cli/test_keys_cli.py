"""`proctor keys init|show|export|retire` on a throwaway key folder (0600-file store)."""

from __future__ import annotations

import json

from proctor.cli import main
from proctor.core.decisions.trust import Trust


def test_keys_init_show_export_retire(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PROCTOR_KEYS_DIR", str(tmp_path / "keys"))
    monkeypatch.setenv("PROCTOR_KEY_STORE", "file")
    assert main(["keys", "show", "--as", "erin"]) == 1  # none yet
    assert "keys init" in capsys.readouterr().err
    assert main(["keys", "init", "--as", "erin"]) == 0
    made = capsys.readouterr().out
    assert "(made now)" in made and "weaker" in made
    fingerprint = made.split("fingerprint: ")[1].splitlines()[0]
    assert main(["keys", "show", "--as", "erin"]) == 0
    assert fingerprint in capsys.readouterr().out
    assert main(["keys", "retire", "--as", "erin"]) == 0
    assert fingerprint in capsys.readouterr().out
    assert main(["keys", "init", "--as", "erin"]) == 0
    capsys.readouterr()
    assert main(["keys", "export", "--as", "erin"]) == 0
    trust = Trust.from_document(json.loads(capsys.readouterr().out))
    assert trust.problem is None and len(trust.keys) == 2
    assert sorted(k.retired_at is None for k in trust.keys.values()) == [False, True]
