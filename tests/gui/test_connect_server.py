"""The desk on a team journal (pg-core's real PostgreSQL server, roles from `proctor team
init`): File ▸ Connect to server's request opens it through DeskApp.open, the operator is
the login, an agent process with an agent login files a request and the desk decides it;
the password is in the (in-memory) keyring and nowhere in the desk's settings; Open recent
reconnects with it; a wrong password or a missing database is a sentence."""

from __future__ import annotations

from pathlib import Path

import pytest
import team_fixtures
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from proctor.core import Actor
from proctor.gui.infra.errors import ErrorDialog
from proctor.gui.infra.server_target import ServerTarget
from proctor.gui.shell.app import DeskApp
from proctor.gui.shell.connect import KEYRING_SERVICE

from .conftest import WAIT_MS, settled
from .forms.test_forms_agents import MemoryKeyring
from .forms.test_forms_agents import keyring_backend as keyring_fixture
from .inbox.test_inbox_flow import press, select

team, team_logins, keyring_backend = (
    team_fixtures.team,
    team_fixtures.team_logins,
    keyring_fixture,
)  # the fixtures


@pytest.fixture
def desk(settings):
    app = DeskApp(QApplication.instance(), settings, None, strict=True)
    yield app
    if app.window is not None:
        app.window.close()
    app.shutdown()


def test_the_desk_connects_and_decides_what_an_agent_login_filed(
    qtbot, team, desk, settings, keyring_backend, agents, tmp_path
):
    memory = keyring_backend(MemoryKeyring())
    target = ServerTarget("127.0.0.1", team.server.port, team.database, "op_dana", "disable")
    with qtbot.waitSignal(desk.window_shown, timeout=WAIT_MS):
        desk.open(target, password=team_fixtures.PASSWORD, remember=True, operator="alice")
    window = desk.window
    assert window.journal.actor.name == "op_dana"  # the login, not Preferences' name
    assert f"{team.database} on 127.0.0.1" in window.windowTitle()
    assert memory.secrets == {(KEYRING_SERVICE, target.key): team_fixtures.PASSWORD}
    assert settings.recent_servers() == [target.label()]
    settings.sync()
    assert team_fixtures.PASSWORD not in Path(settings.q.fileName()).read_text()
    agent = agents(team.url("agent_a"))
    [approval_id] = [line.split()[1] for line in agent.wait_for(qtbot, "REQUESTED")]
    select(qtbot, window, approval_id)
    watcher = window.services.watcher
    assert watcher.on_server and not watcher._fs.files() and not watcher._fs.directories()
    qtbot.waitUntil(lambda: watcher.wakeups["notify"] >= 1, timeout=WAIT_MS)  # LISTEN woke it
    settled(qtbot, window)
    press(qtbot, window, Qt.Key.Key_A)
    [status] = agent.wait_for(qtbot, "STATUS")
    assert status.split()[2:4] == ["approved", "operator:op_dana"]
    assert agent.wait_for(qtbot, "CONSUMED") == [f"CONSUMED {approval_id} reserved"]
    window.close()
    desk.window = None
    with qtbot.waitSignal(desk.window_shown, timeout=WAIT_MS):
        desk.open(target.label())  # File ▸ Open recent: the label, the keyring's password
    assert desk.window is not window and desk.window.journal.actor.name == "op_dana"


@pytest.mark.parametrize("what", ["password", "database", "empty"])
def test_a_bad_connection_is_a_sentence_and_nothing_opens(
    qtbot, team, desk, settings, keyring_backend, monkeypatch, what
):
    keyring_backend(MemoryKeyring())
    shown = []
    monkeypatch.setattr(ErrorDialog, "ask", lambda *a: shown.append(a))
    monkeypatch.setattr(desk.app, "exit", lambda code=0: None)
    database = {"database": "no_such_db", "empty": team.server.empty_database()}.get(
        what, team.database
    )
    target = ServerTarget("127.0.0.1", team.server.port, database, "op_dana", "disable")
    with qtbot.waitSignal(desk.open_failed, timeout=WAIT_MS):
        desk.open(target, password="x9-not-it" if what == "password" else team_fixtures.PASSWORD)
    [(_parent, _title, text, details)] = shown
    where = f"127.0.0.1:{team.server.port}"
    assert (
        text
        == {
            "password": "The server refused the password for user op_dana (wrong or missing "
            "password). Connect again with the right password.",
            "database": f"There is no database no_such_db on {where}. Check the name, or have "
            "it created (createdb) and prepared with `proctor team init`.",
            "empty": f"The database {database} on {where} holds no journal yet. Prepare it with "
            "`proctor team init`, or move a journal file there with `proctor "
            "migrate-to`.",
        }[what]
    )
    assert "x9-not-it" not in text + details
    assert desk.window is None and settings.recent_servers() == []


def test_a_newer_schema_on_the_server_is_a_sentence(
    qtbot, pg_server, pg_url, desk, keyring_backend, monkeypatch
):
    import psycopg
    from sqlalchemy.engine import make_url

    keyring_backend(MemoryKeyring())
    url = make_url(pg_url)
    with psycopg.connect(pg_server.dsn(url.database), autocommit=True) as conn:
        conn.execute("UPDATE alembic_version SET version_num = '9999z'")
    shown = []
    monkeypatch.setattr(ErrorDialog, "ask", lambda *a: shown.append(a))
    monkeypatch.setattr(desk.app, "exit", lambda code=0: None)
    target = ServerTarget("127.0.0.1", pg_server.port, url.database, url.username, "disable")
    with qtbot.waitSignal(desk.open_failed, timeout=WAIT_MS):
        desk.open(target, password=url.password)
    [(_parent, _title, text, details)] = shown
    assert "9999z" in text and "newer than this Proctor knows" in text
    assert url.password not in text + details and desk.window is None


def test_two_desks_deciding_the_same_item_get_one_winner(
    qtbot, team, settings, tmp_path, keyring_backend
):
    """Two desks (two operator logins, as on two machines) show the same request; the one
    that decides first wins; the other, deciding what it still shows (its live refresh held
    back, so it has not heard yet), is told it was already decided and by whom — and the
    record holds the first decision only."""
    from PySide6.QtCore import QSettings

    from proctor.gui.infra.settings import DeskSettings

    keyring_backend(MemoryKeyring())
    other_settings = DeskSettings(
        QSettings(str(tmp_path / "desk2.ini"), QSettings.Format.IniFormat)
    )
    desks = [
        DeskApp(QApplication.instance(), s, None, strict=True) for s in (settings, other_settings)
    ]
    try:
        windows = []
        for desk, login in zip(desks, ("op_dana", "op_eli"), strict=True):
            target = ServerTarget("127.0.0.1", team.server.port, team.database, login, "disable")
            with qtbot.waitSignal(desk.window_shown, timeout=WAIT_MS):
                desk.open(target, password=team_fixtures.PASSWORD)
            windows.append(desk.window)
        with team.journal("agent_a", Actor.agent("builder")) as agent:
            run = agent.runs.start("proj", "contended")
            approval = agent.approvals.request(
                run.id, {"tool": "deploy", "args": {}}, reason="both see it"
            )
            first, second = windows
            for window in windows:
                select(qtbot, window, approval.id)
            second.services.watcher.pause()  # it has not heard of the first decision yet
            for window in windows:
                window.activateWindow()
                settled(qtbot, window)
                press(qtbot, window, Qt.Key.Key_A)
                if window is first:
                    qtbot.waitUntil(
                        lambda: agent.approvals.get(approval.id).status == "approved",
                        timeout=WAIT_MS,
                    )
            detail = second.inbox.detail.current()
            qtbot.waitUntil(
                lambda: (
                    "already"
                    in second.notice.text() + (detail.message.text() if detail is not None else "")
                ),
                timeout=WAIT_MS,
            )
            said = second.notice.text() + (detail.message.text() if detail else "")
            assert "operator:op_dana" in said
            decided = agent.approvals.get(approval.id)
            assert decided.decided_by == "operator:op_dana" and decided.version == 2
    finally:
        for desk in desks:
            if desk.window is not None:
                desk.window.close()
            desk.shutdown()


def test_preferences_name_does_not_change_who_decides_on_a_server(
    qtbot, team, desk, settings, keyring_backend
):
    from dataclasses import replace

    from proctor.gui.shell.preferences import prefs_from

    keyring_backend(MemoryKeyring())
    target = ServerTarget("127.0.0.1", team.server.port, team.database, "op_dana", "disable")
    with qtbot.waitSignal(desk.window_shown, timeout=WAIT_MS):
        desk.open(target, password=team_fixtures.PASSWORD)
    window = desk.window
    window.apply_preferences(replace(prefs_from(settings), operator="alice"))
    assert "recorded as the login you connected with (op_dana)" in window.notice.text()
    assert window.journal.actor.name == "op_dana"
