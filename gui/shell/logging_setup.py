"""Where the desk writes its log: the platform's log folder (platformdirs), rotated.

    Linux    ~/.local/state/proctor/log/desk.log
    macOS    ~/Library/Logs/proctor/desk.log
    Windows  %LOCALAPPDATA%\\proctor\\Logs\\desk.log

``PROCTOR_LOG_DIR`` overrides the folder. Several desk processes may log at once: rotation
is guarded by a lock file beside the log (concurrent-log-handler). Qt's own messages (qWarning and friends) are
routed into the ``qt`` logger so they land in the same file. Help ▸ Open log folder
shows the folder in the platform's file manager.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import platformdirs
from concurrent_log_handler import ConcurrentRotatingFileHandler
from PySide6.QtCore import QMessageLogContext, QtMsgType, QUrl, qInstallMessageHandler
from PySide6.QtGui import QDesktopServices

LOG_NAME = "desk.log"
MAX_BYTES = 2 * 1024 * 1024
BACKUPS = 5
FORMAT = "%(asctime)s %(levelname)s %(name)s [%(threadName)s]: %(message)s"
QT_LEVELS = {
    QtMsgType.QtDebugMsg: logging.DEBUG,
    QtMsgType.QtInfoMsg: logging.INFO,
    QtMsgType.QtWarningMsg: logging.WARNING,
    QtMsgType.QtCriticalMsg: logging.ERROR,
    QtMsgType.QtFatalMsg: logging.CRITICAL,
}


def log_dir() -> Path:
    override = os.environ.get("PROCTOR_LOG_DIR")
    if override:
        return Path(override).expanduser()
    return Path(platformdirs.user_log_dir("proctor", appauthor=False))


def log_file() -> Path:
    return log_dir() / LOG_NAME


def _ours(handler: logging.Handler) -> bool:
    return getattr(handler, "proctor_desk", False)


def setup_logging(
    level: int = logging.INFO, *, console_level: int = logging.WARNING, folder: Path | None = None
) -> Path:
    """Log to ``folder`` (default: the platform log folder) with rotation, and warnings and
    worse to stderr. Calling it again replaces the handlers it added. Returns the log file.

    If the folder cannot be created (read-only home), the desk still runs, logging to
    stderr only.
    """
    stop_logging()
    root = logging.getLogger()
    folder = folder or log_dir()
    path = folder / LOG_NAME
    handlers: list[logging.Handler] = []
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        # several desks (one per journal) share the file: rotation takes a lock file, so no
        # process renames the log under another's writes
        handlers.append(
            ConcurrentRotatingFileHandler(
                str(path), maxBytes=MAX_BYTES, backupCount=BACKUPS, encoding="utf-8"
            )
        )
    except OSError as exc:
        logging.getLogger("proctor.gui").warning("no log file in %s: %s", folder, exc)
    console = logging.StreamHandler()
    console.setLevel(console_level)
    handlers.append(console)
    for handler in handlers:
        handler.setFormatter(logging.Formatter(FORMAT))
        handler.proctor_desk = True  # type: ignore[attr-defined]
        root.addHandler(handler)
    root.setLevel(min(level, console_level))
    route_qt_messages()
    logging.getLogger("proctor.gui").info("desk started (pid %d), logging to %s", os.getpid(), path)
    return path


def stop_logging() -> None:
    """Remove (and close) the handlers ``setup_logging`` added."""
    root = logging.getLogger()
    for handler in [h for h in root.handlers if _ours(h)]:
        root.removeHandler(handler)
        handler.close()


def qt_message(kind: QtMsgType, _context: QMessageLogContext | None, message: str) -> None:
    logging.getLogger("qt").log(QT_LEVELS.get(kind, logging.WARNING), "%s", message)


def route_qt_messages() -> object:
    """Send Qt's messages to the ``qt`` logger; returns the handler it replaced."""
    return qInstallMessageHandler(qt_message)


def open_url(url: QUrl) -> bool:
    """The one place the desk hands a URL to the platform (tests replace it)."""
    return QDesktopServices.openUrl(url)


def open_log_folder() -> Path:
    folder = log_dir()
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    open_url(QUrl.fromLocalFile(str(folder)))
    return folder
