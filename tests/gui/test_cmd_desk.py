"""`proctor demo` and `proctor open` wiring (the desk itself is mocked here)."""

from __future__ import annotations

from proctor import cli, cmd_desk
from proctor.core import Journal


def test_open_refuses_a_missing_journal(tmp_path, capsys):
    assert cli.main(["open", str(tmp_path / "nope.db")]) == cmd_desk.EXIT_STORE
    assert "no journal at" in capsys.readouterr().err


def test_open_passes_read_only_and_operator(tmp_path, monkeypatch):
    path = tmp_path / "j.db"
    Journal.open(path).close()
    seen = {}
    monkeypatch.setattr(
        "proctor.gui.shell.app.run_desk", lambda p, **kw: seen.update(path=p, **kw) or 0
    )
    assert cli.main(["open", str(path), "--read-only", "--as", "carol"]) == 0
    assert seen.pop("frame") is not None  # the window shown first: the desk goes in it
    assert seen == {"path": path, "read_only": True, "operator": "carol", "old_schema": "ask"}
    assert cli.main(["open", str(path), "--migrate"]) == 0
    assert seen["old_schema"] == "migrate" and seen["read_only"] is False


def test_a_link_opens_the_desk_on_the_journal_with_the_link(tmp_path, monkeypatch):
    path = tmp_path / "j.db"
    Journal.open(path).close()
    seen: dict = {}
    monkeypatch.setattr(
        "proctor.gui.shell.app.run_desk", lambda p, **kw: seen.update(path=p, **kw) or 0
    )
    monkeypatch.setenv("PROCTOR_JOURNAL", str(path))
    assert cli.main(["open", "proctor://item/deploy%20prod%3B%20x"]) == 0
    assert seen["path"] == path
    assert seen["link"] == "proctor://item/deploy%20prod%3B%20x"
    assert cli.main(["open", "PROCTOR://run/run_9", "--journal", str(path)]) == 0
    assert seen["link"] == "proctor://run/run_9"
    seen.clear()
    assert cli.main(["open", str(path)]) == 0  # a journal still opens as it did
    assert seen["path"] == path and "link" not in seen


class FakeAgents:
    stopped = False

    def stop(self) -> None:
        FakeAgents.stopped = True


def run_count(path) -> int:
    journal = Journal.open(path, read_only=True)
    try:
        return journal.runs.count()
    finally:
        journal.close()


def test_demo_opens_the_window_first_and_fills_the_journal_behind_it(tmp_path, monkeypatch, qtbot):
    """The window is on screen while the journal still has no run; a child process fills it
    (progress in the status bar); the agents start only when it is full and stop when the
    desk ends."""
    from PySide6.QtWidgets import QMainWindow, QProgressBar

    from proctor.gui.shell.demo_fill import DemoFill

    started, seen = [], {}
    FakeAgents.stopped = False

    def run_desk(path, **kw):
        window = QMainWindow()
        qtbot.addWidget(window)
        window.show()
        kw["on_window"](window)
        seen["runs_when_shown"] = run_count(path)
        fill = window.findChild(DemoFill)
        seen["bar"] = window.statusBar().findChild(QProgressBar) is not None
        with qtbot.waitSignal(fill.filled, timeout=180_000):
            pass
        qtbot.waitUntil(lambda: bool(started))
        seen["message"] = window.statusBar().findChild(QProgressBar).format()
        assert not FakeAgents.stopped  # the agents run while the desk is open
        return 0

    monkeypatch.setattr(
        "proctor.sim.agents.start_agents", lambda path, **kw: started.append(kw) or FakeAgents()
    )
    monkeypatch.setattr("proctor.gui.shell.app.run_desk", run_desk)
    argv = ["demo", "--dir", str(tmp_path), "--agents", "2", "--seed", "5"]
    assert cli.main(argv) == 0
    [path] = list(tmp_path.glob("*/journal.db"))
    assert seen["runs_when_shown"] == 0 and seen["bar"]
    assert seen["message"] == "The demo journal is ready"
    assert run_count(path) > 200
    assert started[0]["agents"] == 2 and FakeAgents.stopped


def test_closing_the_desk_while_the_demo_fills_ends_the_builder(tmp_path, qtbot):
    from PySide6.QtWidgets import QMainWindow

    from proctor.gui.shell.demo_fill import DemoFill

    path = tmp_path / "journal.db"
    Journal.open(path).close()
    window = QMainWindow()
    qtbot.addWidget(window)
    fill = DemoFill(window, path, seed=1, start_time=1.7e9)
    fill.start()
    qtbot.waitUntil(fill.running)
    fill.stop()
    assert not fill.running()


def test_each_demo_gets_a_fresh_folder(tmp_path):
    first, second = cmd_desk.demo_folder(tmp_path), cmd_desk.demo_folder(tmp_path)
    assert first != second and first.is_dir() and not any(first.iterdir())


def test_demo_makes_its_agents_trust_the_operators_key(tmp_path, monkeypatch):
    import argparse
    import json

    from proctor.core.decisions.keys import KeyStore
    from proctor.core.decisions.trust import Trust

    monkeypatch.setenv("PROCTOR_KEYS_DIR", str(tmp_path / "keys"))
    seen = {}
    monkeypatch.setattr(
        "proctor.gui.shell.app.run_desk",
        lambda path, **kw: seen.update(operator=kw["operator"]) or 0,
    )
    assert cli.main(["demo", "--dir", str(tmp_path), "--as", "dora"]) == 0
    [trust_path] = list(tmp_path.glob("*/trusted-operators.json"))
    key = KeyStore(tmp_path / "keys").load("dora")
    assert seen["operator"] == "dora"
    assert list(Trust.load(trust_path).keys) == [key.key_id]
    assert json.loads(trust_path.read_text())["operators"][0]["name"] == "dora"
    monkeypatch.setattr(
        "proctor.sim.agents.start_agents", lambda path, **kw: seen.update(kw) or FakeAgents()
    )
    cmd_desk.start_demo_agents(
        tmp_path / "j.db", argparse.Namespace(agents=1, rate=1.0, seed=0), trust_path
    )
    assert seen["trust"] == trust_path
