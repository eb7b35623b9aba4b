"""The one error presenter.

Expected domain errors (stale, already decided, expired, busy, read-only, validation,
run ended ...) are shown inline where the operator acted, with the error's ``hint`` as
the next step. Anything else is a bug: it is logged with its traceback and shown in a
details dialog (``ErrorDialog.ask`` is mockable in tests).
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Callable

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from proctor.core import errors

from ..widgets.message_bar import Level, MessageBar
from .i18n import tr

log = logging.getLogger("proctor.gui")

# Store faults the operator can do nothing about from this screen: a details dialog.
FATAL = (errors.Corrupt, errors.SchemaTooNew)


def is_expected(exc: BaseException) -> bool:
    return isinstance(exc, errors.ProctorError) and not isinstance(exc, FATAL)


def is_damage(exc: BaseException) -> bool:
    """The open journal's file is damaged (not: the file chosen is not a journal)."""
    return isinstance(exc, errors.Corrupt) and not isinstance(exc, errors.NotAJournal)


def describe(exc: BaseException) -> str:
    """Message + next step, for an expected error."""
    message = str(exc) or type(exc).__name__
    hint = getattr(exc, "hint", "")
    return (
        f"{message}. {hint}" if hint and not message.endswith(".") else f"{message} {hint}".strip()
    )


def level_of(exc: BaseException) -> Level:
    if isinstance(exc, errors.AlreadyDecided | errors.StoreBusy | errors.StoreReadOnly):
        return Level.WARNING
    return Level.ERROR


class ErrorDialog(QDialog):
    """Shows an unexpected error with its details (traceback)."""

    def __init__(self, parent: QWidget | None, title: str, text: str, details: str) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        label = QLabel(text, self)
        label.setTextFormat(Qt.TextFormat.PlainText)
        label.setWordWrap(True)
        box = QPlainTextEdit(self)
        box.setReadOnly(True)
        box.setPlainText(details)
        box.setAccessibleName(tr("Error details"))
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(label)
        layout.addWidget(box, 1)
        layout.addWidget(buttons)
        self.resize(640, 400)

    @classmethod
    def ask(cls, parent: QWidget | None, title: str, text: str, details: str) -> None:
        cls(parent, title, text, details).exec()


class ErrorPresenter(QObject):
    """Signals:
    presented(object): an error was shown (expected or not); the exception.
    damaged(object): a read or write found the open journal damaged (errors.Corrupt).
    """

    presented = Signal(object)
    damaged = Signal(object)

    def __init__(self, parent_widget: QWidget, fallback: MessageBar) -> None:
        super().__init__(parent_widget)
        self._parent = parent_widget
        self._fallback = fallback

    def present(
        self,
        exc: BaseException,
        *,
        inline: MessageBar | None = None,
        action: str | None = None,
        on_action: Callable[[], object] | None = None,
    ) -> None:
        """Show ``exc`` inline (expected) or in a details dialog (a bug or a fatal store error)."""
        self.presented.emit(exc)
        if is_damage(exc):
            # one clear state (the status bar says "damaged"), never a traceback dialog:
            # the message replaces whatever the action showed ("Approving…")
            self.damaged.emit(exc)
            if inline is not None:  # the window's notice is the damaged handler's to word
                inline.show_message(describe(exc), Level.ERROR)
            return
        if is_expected(exc):
            bar = inline or self._fallback
            bar.show_message(describe(exc), level_of(exc), action=action, on_action=on_action)
            return
        log.error("unexpected error", exc_info=exc)
        details = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        ErrorDialog.ask(self._parent, tr("Something went wrong"), unexpected_text(exc), details)

    def __call__(self, exc: BaseException) -> None:
        self.present(exc)


def unexpected_text(exc: BaseException) -> str:
    if isinstance(exc, FATAL):
        return f"{exc} {getattr(exc, 'hint', '')}".strip()
    return tr(
        "An unexpected error stopped this action: {kind}: {error}\n"
        "Nothing else was changed. The details below help a developer fix it."
    ).format(kind=type(exc).__name__, error=exc)
