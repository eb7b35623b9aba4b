"""File ▸ Connect to server: a journal on a PostgreSQL server (team mode).

The operator gives host, port, database, user and TLS mode (or pastes a URL, which fills
them in). The password goes to the OS keyring (service ``proctor-server``, one entry per
``user@host:port/database``), never to the desk's settings or any file: without a usable
keyring backend the desk says so and the password lasts for this connection only. The
desk remembers recent connections, without passwords (``DeskSettings.recent_servers``).

A connection is opened through the same ``DeskApp.open`` as a file, with a
``ServerTarget`` instead of a path; the password is added to the URL only on the worker
thread that opens the journal, and the URL with it is never shown, logged or kept.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from ..forms.credentials import keyring_status
from ..infra.i18n import QT_TR_NOOP, tr
from ..infra.server_target import DEFAULT_PORT, DEFAULT_TLS, TLS_MODES, ServerTarget

KEYRING_SERVICE = "proctor-server"


class PasswordNotStored(Exception):
    """The password could not be put in the OS keyring (the connection still works)."""


def stored_password(target: ServerTarget) -> str | None:
    """The password kept for ``target`` in the OS keyring, or None (worker thread)."""
    usable, _why = keyring_status()
    if not usable:
        return None
    import keyring

    try:
        return keyring.get_password(KEYRING_SERVICE, target.key)
    except Exception:  # noqa: BLE001 - a locked or refusing keyring: as if none were stored
        return None


def remember_password(target: ServerTarget, password: str) -> None:
    """Keep ``password`` for ``target`` in the OS keyring (worker thread)."""
    usable, why = keyring_status()
    if not usable:
        raise PasswordNotStored(
            tr(
                "The password was not remembered: {why}; it is used for this connection only."
            ).format(why=why)
        )
    import keyring

    try:
        keyring.set_password(KEYRING_SERVICE, target.key, password)
    except Exception as exc:  # noqa: BLE001 - never echo the password
        raise PasswordNotStored(
            tr(
                "The OS keyring refused the password ({kind}); it is used for this connection only."
            ).format(kind=type(exc).__name__)
        ) from None


@dataclass(frozen=True)
class ConnectRequest:
    """What the dialog returns: where, the password typed (None: the keyring's), and
    whether to remember it."""

    target: ServerTarget
    password: str | None
    remember: bool


URL_WINS = QT_TR_NOOP(
    "A URL pasted here fills the fields below; the fields are what Proctor connects with "
    "(edit them after pasting, and they win)."
)


class ConnectDialog(QDialog):
    """File ▸ Connect to server."""

    def __init__(
        self,
        parent: QWidget | None,
        recent: list[str],
        keyring_usable: tuple[bool, str] = (True, ""),
        start: ServerTarget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle(tr("Connect to server"))
        self.recent = QComboBox(self)
        self.recent.setAccessibleName(tr("Recent connections"))
        self.recent.addItem(tr("(new connection)"), "")
        for label in recent:
            self.recent.addItem(label, label)
        self.recent.currentIndexChanged.connect(self._on_recent)
        self.url = QLineEdit(self)
        self.url.setPlaceholderText(tr("postgresql://user@host:5432/proctor"))
        self.url.setAccessibleName(tr("Server URL"))
        self.url.editingFinished.connect(self._on_url)
        self.url.setToolTip(tr(URL_WINS))
        self.url_note = QLabel(tr(URL_WINS), self)
        self.url_note.setObjectName("Muted")
        self.url_note.setTextFormat(Qt.TextFormat.PlainText)
        self.url_note.setWordWrap(True)
        self.url_note.setAccessibleName(tr("Which is used: the URL or the fields"))
        self.host = QLineEdit(self)
        self.host.setAccessibleName(tr("Host"))
        self.port = QSpinBox(self)
        self.port.setRange(1, 65535)
        self.port.setValue(DEFAULT_PORT)
        self.port.setAccessibleName(tr("Port"))
        self.database = QLineEdit(self)
        self.database.setAccessibleName(tr("Database"))
        self.user = QLineEdit(self)
        self.user.setAccessibleName(tr("User"))
        self.tls = QComboBox(self)
        self.tls.setAccessibleName(tr("TLS mode"))
        for mode in TLS_MODES:
            self.tls.addItem(mode, mode)
        self.tls.setCurrentIndex(TLS_MODES.index(DEFAULT_TLS))
        self.ca_file = QLineEdit(self)
        self.ca_file.setAccessibleName(tr("CA certificate"))
        self.ca_file.setPlaceholderText(tr("for verify-full; empty: ~/.postgresql/root.crt"))
        self.password = QLineEdit(self)
        self.password.setEchoMode(QLineEdit.EchoMode.Password)
        self.password.setAccessibleName(tr("Password"))
        usable, why = keyring_usable
        self.password.setPlaceholderText(
            tr("empty: the one in the OS keyring") if usable else tr("the login's password")
        )
        self.remember = QCheckBox(tr("Remember the password in the OS keyring"), self)
        self.remember.setChecked(usable)
        self.remember.setEnabled(usable)
        self.remember.setToolTip(
            ""
            if usable
            else tr("No OS keyring here ({why}): the password cannot be remembered.").format(
                why=why
            )
        )
        self.keyring_note = QLabel(self)
        self.keyring_note.setTextFormat(Qt.TextFormat.PlainText)
        self.keyring_note.setWordWrap(True)
        self.keyring_note.setText(
            ""
            if usable
            else tr(
                "The password cannot be remembered: {why}. It is used for this connection only "
                "and never written to a file."
            ).format(why=why)
        )
        self.keyring_note.setVisible(not usable)
        self.problem = QLabel(self)
        self.problem.setTextFormat(Qt.TextFormat.PlainText)
        self.problem.setWordWrap(True)
        self.problem.setAccessibleName(tr("Problem"))
        self.problem.hide()
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel, self)
        self.connect_button = self.buttons.addButton(
            tr("Connect"), QDialogButtonBox.ButtonRole.AcceptRole
        )
        self.connect_button.setDefault(True)
        self.buttons.accepted.connect(self._on_connect)
        self.buttons.rejected.connect(self.reject)
        form = QFormLayout()
        form.addRow(tr("Recent"), self.recent)
        form.addRow(tr("URL"), self.url)
        form.addRow("", self.url_note)
        form.addRow(tr("Host"), self.host)
        form.addRow(tr("Port"), self.port)
        form.addRow(tr("Database"), self.database)
        form.addRow(tr("User"), self.user)
        form.addRow(tr("TLS"), self.tls)
        form.addRow(tr("CA file"), self.ca_file)
        form.addRow(tr("Password"), self.password)
        form.addRow("", self.remember)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.keyring_note)
        layout.addWidget(self.problem)
        layout.addWidget(self.buttons)
        self.request: ConnectRequest | None = None
        if start is not None:
            self.fill(start)
        elif recent:
            self.recent.setCurrentIndex(1)

    def fill(self, target: ServerTarget) -> None:
        self.host.setText(target.host)
        self.port.setValue(target.port)
        self.database.setText(target.database)
        self.user.setText(target.user)
        self.tls.setCurrentIndex(TLS_MODES.index(target.tls) if target.tls in TLS_MODES else 1)
        self.ca_file.setText(target.ca_file)

    def target(self) -> ServerTarget:
        return ServerTarget(
            self.host.text().strip(),
            self.port.value(),
            self.database.text().strip(),
            self.user.text().strip(),
            str(self.tls.currentData()),
            self.ca_file.text().strip(),
        )

    def show_problem(self, text: str) -> None:
        self.problem.setText(text)
        self.problem.show()

    @Slot(int)
    def _on_recent(self, index: int) -> None:
        label = self.recent.itemData(index)
        if label:
            try:
                target, _ = ServerTarget.parse(label)
            except ValueError:
                return
            self.fill(target)
            self.password.clear()

    @Slot()
    def _on_url(self) -> None:
        text = self.url.text().strip()
        if not text:
            return
        try:
            target, password = ServerTarget.parse(text)
        except ValueError as exc:
            self.show_problem(str(exc))
            return
        self.fill(target)
        if password:
            self.password.setText(password)
        self.url.setText(target.label())  # no password in sight, nor one to read back
        self.problem.hide()

    @Slot()
    def _on_connect(self) -> None:
        if self.url.hasFocus():
            self._on_url()
        target = self.target()
        why = target.problem()
        if why:
            self.show_problem(why)
            return
        password = self.password.text() or None
        self.request = ConnectRequest(
            target, password, self.remember.isChecked() and password is not None
        )
        self.accept()

    @classmethod
    def ask(
        cls,
        parent: QWidget | None,
        recent: list[str],
        keyring_usable: tuple[bool, str] = (True, ""),
        start: ServerTarget | None = None,
    ) -> ConnectRequest | None:
        dialog = cls(parent, recent, keyring_usable, start)
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return None
        return dialog.request
