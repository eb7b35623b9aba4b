"""A journal file dropped on the desk's window opens it; anything else is refused."""

from __future__ import annotations

from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QApplication


def mime_with(*urls: QUrl) -> QMimeData:
    mime = QMimeData()
    mime.setUrls(list(urls))
    return mime


def drag_enter(window, mime: QMimeData) -> bool:
    event = QDragEnterEvent(
        QPoint(50, 50),
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    QApplication.sendEvent(window, event)
    return event.isAccepted()


def drop(window, mime: QMimeData) -> None:
    event = QDropEvent(
        QPointF(50, 50),
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    QApplication.sendEvent(window, event)


def test_dropping_a_journal_file_asks_to_open_it(qtbot, populated, open_desk, tmp_path):
    path, _ = populated
    window = open_desk(path)
    other = tmp_path / "other.db"
    mime = mime_with(QUrl.fromLocalFile(str(other)))
    assert drag_enter(window, mime)
    with qtbot.waitSignal(window.open_requested) as blocker:
        drop(window, mime)
    assert blocker.args == [str(other)]


def test_web_links_and_several_files_are_not_taken(qtbot, populated, open_desk, tmp_path):
    path, _ = populated
    window = open_desk(path)
    asked: list[str] = []
    window.open_requested.connect(asked.append)
    for mime in (
        mime_with(QUrl("https://example.org/journal.db")),
        mime_with(
            QUrl.fromLocalFile(str(tmp_path / "a.db")), QUrl.fromLocalFile(str(tmp_path / "b.db"))
        ),
    ):
        assert not drag_enter(window, mime)
        drop(window, mime)
    text = QMimeData()
    text.setText("/etc/passwd")
    assert not drag_enter(window, text)
    assert asked == []
