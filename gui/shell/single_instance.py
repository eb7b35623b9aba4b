"""One desk window per journal: opening a journal that is already open in a desk focuses
that window instead of starting a second one.

Each desk listens on a local socket (QLocalServer: a Unix socket, a named pipe on
Windows) whose name is a hash of the user and the journal's resolved path (a server
journal's connection label). A second
``proctor open J`` connects, says ``focus`` (``open LINK`` for ``proctor open
proctor://…``), waits for ``ok`` and exits; the first desk brings its window to the front
(and shows what the link names: it reads the link again itself). A socket file left by a desk that crashed answers
nobody and is replaced.
"""

from __future__ import annotations

import getpass
import hashlib
from functools import partial
from pathlib import Path

from PySide6.QtCore import QObject, Signal, Slot
from PySide6.QtNetwork import QLocalServer, QLocalSocket
from PySide6.QtWidgets import QWidget

CONNECT_MS = 1000
REPLY_MS = 3000
MAX_REQUEST = 8192  # bytes of one request line: ``open`` and the longest link


def journal_key(path: str | Path) -> str:
    """The local socket name for ``path`` (same file, same user -> same name)."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = ""
    resolved = _place(path)
    digest = hashlib.sha256(f"{user}\0{resolved}".encode()).hexdigest()[:24]
    return f"proctor-desk-{digest}"


def same_journal(a: str | Path, b: str | Path) -> bool:
    return _place(a) == _place(b)


def _place(path: str | Path) -> str:
    """A file's resolved path; a server journal's label (gui/shell/connect.py) as it is."""
    if isinstance(path, str) and "://" in path:
        return path
    return str(Path(path).expanduser().resolve())


def focus_running(path: str | Path, *, link: str | None = None, reply_ms: int = REPLY_MS) -> bool:
    """Ask the desk that has ``path`` open (in another process) to focus its window (and
    show ``link``, a proctor:// link, there).

    True when a desk answered; False when none has it open (or it did not answer).
    Blocks for at most about ``CONNECT_MS + reply_ms`` (a local socket; normally < 10 ms).
    """
    socket = QLocalSocket()
    socket.connectToServer(journal_key(path))
    if not socket.waitForConnected(CONNECT_MS):
        return False
    try:
        socket.write(b"open " + link.encode("ascii") + b"\n" if link else b"focus\n")
        socket.flush()
        reply = b""
        while b"\n" not in reply and socket.waitForReadyRead(reply_ms):
            reply += bytes(socket.readAll().data())
        return reply.startswith(b"ok")
    finally:
        socket.abort()


def bring_to_front(widget: QWidget) -> None:
    """The window ``widget`` is (or is in: the desk's frame, start.py) comes forward."""
    widget.show()
    window = widget.window()
    if window.isMinimized():
        window.showNormal()
    window.show()
    window.raise_()
    window.activateWindow()


class JournalServer(QObject):
    """Answers other desks asking for the journal this desk has open.

    Signals:
        focus_requested(): another ``proctor open`` asked for this journal's window.
        link_requested(str): ... and to show this link there (as sent: unchecked).
    """

    focus_requested = Signal()
    link_requested = Signal(str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._server = QLocalServer(self)
        self._server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        self._server.newConnection.connect(self._on_new_connection)

    def listen(self, path: str | Path) -> bool:
        """Answer for ``path`` from now on (and no longer for the previous journal).

        False when another live desk already answers for it.
        """
        name = journal_key(path)
        if self._server.isListening() and self._server.serverName() == name:
            return True
        self._server.close()
        # Qt replaces an existing socket file when it listens (it binds a temporary file
        # and renames it), so ask first: a live desk answers, a crashed one's file does not.
        probe = QLocalSocket()
        probe.connectToServer(name)
        if probe.waitForConnected(CONNECT_MS):
            probe.abort()
            return False
        if self._server.listen(name):
            return True
        QLocalServer.removeServer(name)
        return self._server.listen(name)

    def name(self) -> str:
        return self._server.serverName() if self._server.isListening() else ""

    def close(self) -> None:
        self._server.close()

    @Slot()
    def _on_new_connection(self) -> None:
        while (socket := self._server.nextPendingConnection()) is not None:
            socket.setParent(self)
            socket.readyRead.connect(partial(self._on_ready, socket))
            socket.disconnected.connect(socket.deleteLater)
            if socket.bytesAvailable():
                self._on_ready(socket)

    def _on_ready(self, socket: QLocalSocket) -> None:
        if not socket.canReadLine():
            if socket.bytesAvailable() > MAX_REQUEST:
                socket.abort()
            return
        request = bytes(socket.readLine(MAX_REQUEST).data()).strip()
        link = request.removeprefix(b"open ") if request.startswith(b"open ") else None
        if request == b"focus" or link:
            socket.write(b"ok\n")
            socket.flush()
            self.focus_requested.emit()
            if link:
                self.link_requested.emit(link.decode("ascii", "replace"))
        socket.disconnectFromServer()
