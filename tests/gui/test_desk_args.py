"""The desk's three entries (proctor-desk, ``python -m proctor.gui.shell.start``, ``python -m
proctor.gui.shell.app``) share one parser: none guesses an abbreviated option."""

from __future__ import annotations

import pytest

ENTRIES = {
    "launch": "proctor.gui.shell.preflight.check_or_explain",
    "start": "proctor.gui.shell.start.run_desk",
    "app": "proctor.gui.shell.app.run_desk",
}


@pytest.mark.parametrize("entry", sorted(ENTRIES))
@pytest.mark.parametrize("typed", ["--mig", "--read", "--a"])
def test_an_abbreviated_option_is_refused(entry, typed, tmp_path, monkeypatch, capsys):
    import importlib

    monkeypatch.setattr(ENTRIES[entry], lambda *a, **kw: pytest.fail("the desk started"))
    main = importlib.import_module(f"proctor.gui.shell.{entry}").main
    journal = tmp_path / "j.db"
    journal.touch()
    argv = [str(journal), typed] + (["olga"] if typed == "--a" else [])
    with pytest.raises(SystemExit) as done:
        main(argv)
    assert done.value.code == 2
    err = capsys.readouterr().err
    assert "unrecognized arguments" in err and typed in err
    assert "usage: proctor-desk" in err
