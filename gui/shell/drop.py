"""Drop a journal file on the desk's window to open it (one local file at a time)."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QMimeData, QObject, Signal
from PySide6.QtGui import QDropEvent
from PySide6.QtWidgets import QWidget


def dropped_file(mime: QMimeData) -> str | None:
    """The one local file ``mime`` carries, else None (several files, a folder, a web URL
    or text are not journals to open)."""
    urls = mime.urls() if mime.hasUrls() else []
    if len(urls) != 1 or not urls[0].isLocalFile():
        return None
    path = urls[0].toLocalFile()
    return path or None


class JournalDrop(QObject):
    """Installed on a window: a dropped file becomes ``dropped(path)``.

    Signals:
        dropped(str): a local file was dropped on the window.
    """

    dropped = Signal(str)

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        window.setAcceptDrops(True)
        window.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type()
        if kind in (QEvent.Type.DragEnter, QEvent.Type.DragMove):
            assert isinstance(event, QDropEvent)  # QDragEnterEvent/QDragMoveEvent too
            if dropped_file(event.mimeData()):
                event.acceptProposedAction()
            else:
                event.ignore()
            return True
        if kind == QEvent.Type.Drop:
            assert isinstance(event, QDropEvent)
            path = dropped_file(event.mimeData())
            if path:
                event.acceptProposedAction()
                self.dropped.emit(path)
            return True
        return False
