"""File ▸ Connect to server: the dialog (real widgets), the password in the OS keyring (an
in-memory backend; with none, a clear sentence and nothing written to a file), recent
connections without passwords, and failures that keep the desk as it was."""

from __future__ import annotations

import pytest
from keyring.backends import fail
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication

from proctor.gui.infra.errors import ErrorDialog
from proctor.gui.infra.server_target import ServerTarget, is_server, visible_url
from proctor.gui.shell.app import DeskApp
from proctor.gui.shell.connect import (
    KEYRING_SERVICE,
    ConnectDialog,
    remember_password,
    stored_password,
)

from .conftest import WAIT_MS
from .forms.test_forms_agents import MemoryKeyring, keyring_backend  # noqa: F401 (a fixture)

TARGET = ServerTarget("db.example.org", 6432, "proctor", "dana", "require")


def test_a_target_makes_the_url_and_a_label_without_the_password():
    url = TARGET.url("s3cr@t:/x")
    assert url == (
        "postgresql+psycopg://dana:s3cr%40t%3A%2Fx@db.example.org:6432/proctor?sslmode=require"
    )
    assert "s3cr" not in TARGET.label() and TARGET.label().startswith("postgresql://dana@")
    parsed, password = ServerTarget.parse(url)
    assert parsed == TARGET and password == "s3cr@t:/x"
    assert ServerTarget.parse(TARGET.label()) == (TARGET, None)
    assert visible_url(url).count("***") == 1 and "s3cr" not in visible_url(url)
    assert is_server(TARGET.label()) and not is_server("/home/dana/journal.db")


@pytest.mark.parametrize(
    "text",
    [
        "http://h/db",
        "postgresql:///db",
        "postgresql://u@h/",
        "postgresql://u@h:99999/db",
        "postgresql://@h/db",
        "postgresql://u@h/db?sslmode=sometimes",
    ],
)
def test_a_url_that_names_no_server_journal_is_refused_with_a_sentence(text):
    with pytest.raises(ValueError) as err:  # noqa: PT011 - the parser raises plain ValueError; the message is checked after
        ServerTarget.parse(text)
    assert str(err.value).endswith(".") or "postgresql://" in str(err.value)


@pytest.mark.parametrize(
    "text",
    [
        "postgresql://alice:pa/ss@db.example.org:5432/proctor",
        "postgresql://alice:p@ss@db.example.org:5432/proctor",
        "postgresql://alice:pa#ss@db.example.org:5432/proctor",
    ],
)
def test_a_password_the_url_did_not_encode_is_never_shown(text):
    """A "/", "@" or "#" in a password breaks the URL: what the refusal says, and what the
    field shows, keeps the password out of sight."""
    secret = text.split(":")[2].rsplit("@", 1)[0]
    assert secret not in visible_url(text)
    try:
        target, _password = ServerTarget.parse(text)
    except ValueError as err:
        assert secret not in str(err)  # noqa: PT017 - a Hypothesis rule checks the error it got
    else:
        assert secret not in target.label()


def test_enter_on_a_pasted_url_connects_with_its_password_and_shows_none(qtbot):
    """Enter fills the fields, then presses Connect with the focus still in the URL field
    (the URL is read again): the request carries the typed password, and the field shows
    the connection without any password, not even a mask to read back."""
    dialog = ConnectDialog(None, [])
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    qtbot.keyClicks(dialog.url, TARGET.url("hunter2"))
    qtbot.keyClick(dialog.url, Qt.Key.Key_Return)
    assert dialog.request is not None and dialog.request.password == "hunter2"
    assert "hunter2" not in dialog.url.text() and "***" not in dialog.url.text()


def fill(qtbot, dialog: ConnectDialog, target: ServerTarget, password: str = "") -> None:
    for field, value in (
        (dialog.host, target.host),
        (dialog.database, target.database),
        (dialog.user, target.user),
        (dialog.password, password),
    ):
        field.clear()
        qtbot.keyClicks(field, value)
    dialog.port.setValue(target.port)
    dialog.tls.setCurrentIndex(dialog.tls.findData(target.tls))


def test_the_dialog_returns_where_and_the_password_typed(qtbot):
    dialog = ConnectDialog(None, [])
    qtbot.addWidget(dialog)
    fill(qtbot, dialog, TARGET, "pw")
    qtbot.mouseClick(dialog.connect_button, Qt.MouseButton.LeftButton)
    assert dialog.result() == ConnectDialog.DialogCode.Accepted
    assert dialog.request.target == TARGET
    assert dialog.request.password == "pw" and dialog.request.remember


def test_a_pasted_url_fills_the_fields_and_its_password_leaves_sight(qtbot):
    dialog = ConnectDialog(None, [])
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    qtbot.keyClicks(dialog.url, TARGET.url("hunter2"))
    qtbot.keyClick(dialog.url, Qt.Key.Key_Return)  # editing finished, then Connect
    assert dialog.target() == TARGET
    assert dialog.password.text() == "hunter2"
    assert "hunter2" not in dialog.url.text()
    assert dialog.request.target == TARGET and dialog.request.password == "hunter2"


def test_a_missing_field_is_said_and_nothing_is_returned(qtbot):
    dialog = ConnectDialog(None, [])
    qtbot.addWidget(dialog)
    fill(qtbot, dialog, ServerTarget("db.example.org", 5432, "", "dana"))
    qtbot.mouseClick(dialog.connect_button, Qt.MouseButton.LeftButton)
    assert dialog.request is None and dialog.result() != ConnectDialog.DialogCode.Accepted
    assert not dialog.problem.isHidden() and "database" in dialog.problem.text()


def test_recent_connections_fill_the_dialog(qtbot):
    other = ServerTarget("10.0.0.7", 5432, "team", "ops", "verify-full")
    dialog = ConnectDialog(None, [TARGET.label(), other.label()])
    qtbot.addWidget(dialog)
    assert dialog.target() == TARGET  # the most recent one first
    dialog.recent.setCurrentIndex(2)
    assert dialog.target() == other


def test_without_a_keyring_the_password_is_not_remembered_and_the_dialog_says_so(qtbot):
    dialog = ConnectDialog(None, [], (False, "no OS keyring is available on this machine"))
    qtbot.addWidget(dialog)
    fill(qtbot, dialog, TARGET, "pw")
    assert not dialog.remember.isEnabled() and not dialog.remember.isChecked()
    assert "no OS keyring" in dialog.keyring_note.text() and not dialog.keyring_note.isHidden()
    qtbot.mouseClick(dialog.connect_button, Qt.MouseButton.LeftButton)
    assert dialog.request.password == "pw" and not dialog.request.remember


def test_the_password_goes_to_the_keyring_under_the_connection(keyring_backend):  # noqa: F811
    memory = keyring_backend(MemoryKeyring())
    remember_password(TARGET, "pw")
    assert memory.secrets == {(KEYRING_SERVICE, "dana@db.example.org:6432/proctor"): "pw"}
    assert stored_password(TARGET) == "pw"


def test_no_keyring_backend_is_a_clear_sentence(keyring_backend):  # noqa: F811
    keyring_backend(fail.Keyring())
    from proctor.gui.shell.connect import PasswordNotStored

    with pytest.raises(PasswordNotStored, match="no OS keyring is available"):
        remember_password(TARGET, "pw")
    assert stored_password(TARGET) is None


def test_recent_servers_refuse_a_label_with_a_password(settings):
    settings.add_recent_server(TARGET.label())
    with pytest.raises(ValueError):  # noqa: PT011 - the parser raises plain ValueError; the message is checked after
        settings.add_recent_server(TARGET.url("pw"))
    assert settings.recent_servers() == [TARGET.label()]


def test_file_menu_connect_asks_and_the_desk_opens_the_server(
    qtbot,
    populated,
    settings,
    keyring_backend,  # noqa: F811
    monkeypatch,
):
    """File ▸ Connect to server runs the real dialog; what it returns goes to DeskApp.open
    (the same path as a file), here to a server nobody listens on: a sentence, and the
    desk over the file stays as it was."""
    keyring_backend(MemoryKeyring())
    path, _ = populated
    desk = DeskApp(QApplication.instance(), settings, None, strict=True)
    shown = []
    monkeypatch.setattr(ErrorDialog, "ask", lambda *a: shown.append(a))
    try:
        with qtbot.waitSignal(desk.window_shown, timeout=WAIT_MS):
            desk.open(path, operator="dana")
        window = desk.window
        nobody = ServerTarget("127.0.0.1", free_port(), "proctor", "dana", "disable")
        action = window.registry.action("app.connect")
        assert action.text().startswith("Connect to server")
        with qtbot.waitSignal(desk.open_failed, timeout=WAIT_MS):
            when_dialog(
                lambda dialog: (fill(qtbot, dialog, nobody, "pw"), dialog.connect_button.click())
            )
            action.trigger()
        [(_parent, _title, text, _details)] = shown
        assert "pw" not in text and "pw@" not in _details
        assert f"127.0.0.1:{nobody.port}" in text
        assert desk.window is window and window.isVisible()  # nothing lost
        assert settings.recent_servers() == []  # only a connection that opened is kept
    finally:
        if desk.window is not None:
            desk.window.close()
        desk.shutdown()


def when_dialog(act) -> None:
    """Run ``act(dialog)`` on the Connect dialog once it is up (it runs its own loop)."""

    def poll() -> None:
        found = [
            w
            for w in QApplication.topLevelWidgets()
            if isinstance(w, ConnectDialog) and w.isVisible()
        ]
        if found:
            act(found[0])
        else:
            QTimer.singleShot(10, poll)

    QTimer.singleShot(0, poll)


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_file_open_recent_lists_server_connections_without_passwords(
    qtbot, populated, open_desk, settings
):
    path, _ = populated
    settings.add_recent(path)
    settings.add_recent_server(TARGET.label())
    window = open_desk(path)
    window.recent_menu.aboutToShow.emit()
    texts = [a.text() for a in window.recent_menu.actions() if not a.isSeparator()]
    assert TARGET.label() in texts and str(path) in texts
    [server] = [a for a in window.recent_menu.actions() if a.text() == TARGET.label()]
    with qtbot.waitSignal(window.open_requested, timeout=WAIT_MS) as blocker:
        server.trigger()
    assert blocker.args == [TARGET.label()]


def test_a_pasted_verify_full_url_keeps_its_ca_and_connects_over_tls(qtbot, pg_server, pg_url):
    """TLS as docs/team.md asks for it: the CA file of a pasted URL stays with the target
    (in its label too, so Open recent keeps it), and the URL the desk opens checks the test
    server's certificate against it and talks encrypted."""
    from proctor.core import Actor, Journal

    pasted = f"{pg_url}?sslmode=verify-full&sslrootcert={pg_server.ca_file}"
    dialog = ConnectDialog(None, [])
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    qtbot.keyClicks(dialog.url, pasted)
    qtbot.keyClick(dialog.url, Qt.Key.Key_Return)
    target, password = dialog.request.target, dialog.request.password
    assert target.tls == "verify-full" and target.ca_file == str(pg_server.ca_file)
    assert dialog.ca_file.text() == str(pg_server.ca_file)
    assert ServerTarget.parse(target.label())[0] == target
    with Journal.open(target.url(password), actor=Actor.operator("alice")) as journal:
        assert (
            journal.read(
                lambda c: c.exec_driver_sql(
                    "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()"
                ).scalar()
            )
            is True
        )


def test_a_plaintext_keyring_is_no_keyring():
    """keyrings.alt's PlaintextKeyring writes passwords to a file as they are: "Remember the
    password in the OS keyring" must not write there."""
    import keyring
    from keyring.backend import KeyringBackend

    from proctor.gui.forms.credentials import keyring_status

    class PlaintextKeyring(KeyringBackend):  # the name keyrings.alt gives its file backend
        priority = 1  # type: ignore[assignment]

        def get_password(self, service, username):
            return None

        def set_password(self, service, username, password):
            raise AssertionError("a password was written to a plain file")

        def delete_password(self, service, username):
            pass

    before = keyring.get_keyring()
    keyring.set_keyring(PlaintextKeyring())
    try:
        usable, why = keyring_status()
    finally:
        keyring.set_keyring(before)
    assert not usable and "plain file" in why
