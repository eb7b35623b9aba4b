"""`proctor demo` and `proctor open` wiring (the desk itself is mocked here)."""

from __future__ import annotations

import pytest

from proctor import cli, cmd_desk
from proctor.core import Journal


def test_open_refuses_a_missing_journal(tmp_path, capsys):
    assert cli.main(["open", str(tmp_path / "nope.db")]) == cmd_desk.EXIT_STORE
    assert "no journal at" in capsys.readouterr().err


def test_open_passes_read_only_and_operator(tmp_path, monkeypatch):
    path = tmp_path / "j.db"
    Journal.open(path).close()
    seen = {}
    monkeypatch.setattr("proctor.gui.app.run_desk",
                        lambda p, **kw: seen.update(path=p, **kw) or 0)
    assert cli.main(["open", str(path), "--read-only", "--as", "carol"]) == 0
    assert seen == {"path": path, "read_only": True, "operator": "carol", "old_schema": "ask"}
    assert cli.main(["open", str(path), "--migrate"]) == 0
    assert seen["old_schema"] == "migrate" and seen["read_only"] is False


class FakeAgents:
    stopped = False

    def stop(self) -> None:
        FakeAgents.stopped = True


@pytest.mark.parametrize("desk_fails", [False, True])
def test_demo_builds_starts_agents_and_stops_them_when_the_desk_ends(tmp_path, monkeypatch,
                                                                     desk_fails):
    built, started = [], []
    FakeAgents.stopped = False

    def build(path, size="small", seed=0, start_time=None):  # noqa: ANN001, ANN202
        Journal.open(path).close()
        built.append((path, size, seed))
        return {"runs": 1, "events": 2, "seconds": 0.1}

    def run_desk(path, **kw):  # noqa: ANN001, ANN202
        assert not FakeAgents.stopped  # the agents run while the desk is open
        if desk_fails:
            raise RuntimeError("window crashed")
        return 0

    monkeypatch.setattr("proctor.sim.demo.build_demo_journal", build)
    monkeypatch.setattr("proctor.sim.agents.start_agents",
                        lambda path, **kw: started.append(kw) or FakeAgents())
    monkeypatch.setattr("proctor.gui.app.run_desk", run_desk)
    argv = ["demo", "--dir", str(tmp_path), "--agents", "2", "--seed", "5"]
    if desk_fails:
        with pytest.raises(RuntimeError):
            cli.main(argv)
    else:
        assert cli.main(argv) == 0
    [(path, size, seed)] = built
    assert path.parent.parent == tmp_path and path.name == "journal.db"
    assert (size, seed) == ("small", 5)
    assert started[0]["agents"] == 2
    assert FakeAgents.stopped


def test_each_demo_gets_a_fresh_folder(tmp_path):
    first, second = cmd_desk.demo_folder(tmp_path), cmd_desk.demo_folder(tmp_path)
    assert first != second and first.is_dir() and not any(first.iterdir())
