"""The action registry: every command is declared once, as one ``ActionSpec`` carrying
everything about it — id, text, menu (and its ``section`` there, other ``also`` menus), tip,
default ``shortcut``, ``icon`` (or why ``no_icon``), ``toolbar`` group, ``button`` label, ``handler``,
``enabled`` and ``visible`` — in one list per page (gui/<page>/commands.py, the window's
in gui/shell/mainwindow.py). Menus, the toolbar, the command palette (Ctrl+K), the shortcut help
(?) and the pages' buttons (``ActionRegistry.button``) are all built from it.

Shortcuts are data: a declaration's default, user overrides stored apart; single-key
shortcuts can be switched off as a group. A value may hold several sequences separated by
"; " (the first is the one shown in menus).

A command of one page is registered with ``page=`` (the page's widget): it is enabled only
while that page is on screen, and it may share a sequence with a command of another page
that is never on screen at the same time (pages of one QStackedWidget: "C" marks an effect
committed in the Inbox and on the Effects page).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeVar

import shiboken6
from PySide6.QtCore import QEvent, QKeyCombination, QObject, QPoint, Qt, Signal, Slot
from PySide6.QtGui import QAction, QKeyEvent, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QLineEdit,
    QMenu,
    QMenuBar,
    QPlainTextEdit,
    QPushButton,
    QStackedWidget,
    QTextEdit,
    QToolBar,
    QWidget,
)

from ..widgets.icons import icon
from .i18n import tr

T = TypeVar("T")


@dataclass(frozen=True)
class ActionSpec:
    id: str
    text: str
    menu: str  # menu title it belongs to ("File", "Inbox", "Memory", "Go", "View", "Help")
    tip: str = ""
    checkable: bool = False
    # WindowShortcut: anywhere in the window; WidgetShortcut: only where the page attaches it
    context: Qt.ShortcutContext = Qt.ShortcutContext.WindowShortcut
    handler: Callable[[], object] | None = None
    enabled: Callable[[], bool] | None = None  # None: always (on its page)
    shortcut: str = ""  # default sequences ("C; Alt+C"); users may override them
    icon: str | None = None  # a name in resources/icons
    no_icon: str = ""  # else why it shows none (tests/gui/test_resources.py asks one of them)
    toolbar: int = 0  # on the main toolbar in this group (0: not on it); groups are separated
    section: int = 0  # its group in its menu: a separator between two groups
    also: tuple[str, ...] = ()  # other menus that list it too ("Go" for list movement)
    button: str = ""  # the label (with its Alt letter) of the buttons built from it
    visible: Callable[[], bool] | None = None  # its buttons show only while this says so


def is_single_key(sequence: str) -> bool:
    """True for shortcuts without Ctrl/Alt/Meta (they would fire while typing elsewhere)."""
    if not sequence:
        return False
    keys = QKeySequence(sequence)
    if keys.count() != 1:
        return False
    first: QKeyCombination = keys[0]  # type: ignore[index]  # the stub lacks __getitem__
    mods = first.keyboardModifiers()
    blocked = (
        Qt.KeyboardModifier.ControlModifier
        | Qt.KeyboardModifier.AltModifier
        | Qt.KeyboardModifier.MetaModifier
    )
    named = first.key() in (Qt.Key.Key_Escape, Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_F5)
    return not (mods & blocked) and not named


TYPING_BLOCKED = (
    Qt.KeyboardModifier.ControlModifier
    | Qt.KeyboardModifier.AltModifier
    | Qt.KeyboardModifier.MetaModifier
)


def takes_typing(widget: QWidget | None) -> bool:
    """True if a letter typed into ``widget`` is text for it, not a command: a line, an
    editable text box, a spin box, a combo box (editable or not: a letter picks an entry)
    or its open list, an item view whose current cell starts editing on a key."""
    if widget is None:
        return False
    if isinstance(widget, QLineEdit | QAbstractSpinBox | QComboBox):
        return True
    if isinstance(widget, QPlainTextEdit | QTextEdit):
        return not widget.isReadOnly()
    if any(isinstance(w, QComboBox) for w in ancestors(widget)[1:]):
        return True  # a combo box's open list (its popup is the combo's child)
    if isinstance(widget, QAbstractItemView):
        index = widget.currentIndex()
        keyed = bool(widget.editTriggers() & QAbstractItemView.EditTrigger.AnyKeyPressed)
        return keyed and index.isValid() and bool(index.flags() & Qt.ItemFlag.ItemIsEditable)
    return False


class TypingGuard(QObject):
    """Installed on the application: a key without Ctrl/Alt/Meta that produces text is the
    focused field's while that field takes typing (``takes_typing``), never a single-key
    shortcut's (issue 32: S snoozed a question while its combo box had the focus)."""

    def eventFilter(self, _obj: QObject, event: QEvent) -> bool:
        if (
            event.type() == QEvent.Type.ShortcutOverride
            and isinstance(event, QKeyEvent)
            and not (event.modifiers() & TYPING_BLOCKED)
            and event.text().isprintable()
            and event.text() != ""
            and takes_typing(QApplication.focusWidget())
        ):
            event.accept()  # the key goes to the field as a key press; no shortcut fires
            return True
        return False


_GUARD: TypingGuard | None = None


def guard_typing() -> None:
    """Install the one ``TypingGuard`` on the application (once per process)."""
    global _GUARD
    app = QApplication.instance()
    if _GUARD is None and app is not None:
        _GUARD = TypingGuard(app)
        app.installEventFilter(_GUARD)


class ActionRegistry(QObject):
    """Signals:
    triggered(str): the id of an action that just ran.
    """

    triggered = Signal(str)

    def __init__(self, host: QWidget, overrides: dict[str, str] | None = None) -> None:
        super().__init__(host)
        self._host = host
        self._overrides = dict(overrides or {})
        self._specs: dict[str, ActionSpec] = {}
        self._actions: dict[str, QAction] = {}
        self._handlers: dict[str, Callable[[], object]] = {}
        self._enabled: dict[str, Callable[[], bool]] = {}
        self._defaults: dict[str, str] = {}
        self._pages: dict[str, QWidget] = {}
        self._buttons: list[ActionButton] = []
        self._memo: dict[Hashable, Any] | None = None  # ``once`` answers, during a refresh
        self.single_keys = True
        guard_typing()

    # ------------------------------------------------------------ declaring
    def register(
        self,
        spec: ActionSpec,
        handler: Callable[[], object] | None = None,
        enabled: Callable[[], bool] | None = None,
        *,
        page: QWidget | None = None,
    ) -> QAction:
        """Declare a command (``handler`` and ``enabled`` default to the spec's own). With
        ``page`` it is enabled only while that widget is visible (and ``enabled`` says yes)."""
        if spec.id in self._specs:
            raise ValueError(f"action {spec.id} is declared twice")
        handler = handler or spec.handler
        enabled = enabled or spec.enabled
        if handler is None:
            raise ValueError(f"action {spec.id} has no handler")
        self._defaults[spec.id] = spec.shortcut
        action = QAction(tr(spec.text), self._host)  # spec texts are QT_TR_NOOP-marked
        action.setObjectName(spec.id)
        action.setData(spec.id)
        action.setStatusTip(tr(spec.tip) if spec.tip else "")
        action.setToolTip(self._tooltip(spec))
        action.setCheckable(spec.checkable)
        if spec.icon:
            action.setIcon(icon(spec.icon))
        action.setShortcutContext(spec.context)
        action.triggered.connect(self._on_triggered)
        if spec.context == Qt.ShortcutContext.WindowShortcut:
            self._host.addAction(action)
        self._specs[spec.id] = spec
        self._actions[spec.id] = action
        self._handlers[spec.id] = handler
        if page is not None:
            self._pages[spec.id] = page
            enabled = on_page(page, enabled)
        if enabled is not None:
            self._enabled[spec.id] = enabled
        self._apply_shortcut(spec.id)
        return action

    def attach(self, action_id: str, widget: QWidget) -> None:
        """Make a WidgetShortcut action live on ``widget`` (e.g. Enter on the inbox list)."""
        widget.addAction(self._actions[action_id])

    # ------------------------------------------------------------ running
    @Slot()
    def _on_triggered(self) -> None:
        action = self.sender()
        if isinstance(action, QAction):
            self._run(str(action.data()))

    def trigger(self, action_id: str) -> bool:
        """Run an action by id if it is enabled now (the palette and tests use this). Only
        that action's enablement is asked before it runs (a click's write goes out first);
        every action is refreshed after it."""
        action, enabled = self._actions[action_id], self._enabled.get(action_id)
        if enabled is not None:
            with self._asking():
                action.setEnabled(bool(enabled()))
        if not action.isEnabled():
            self.refresh()
            return False
        if self._specs[action_id].checkable:
            self._actions[action_id].toggle()
        self._run(action_id)
        return True

    def _run(self, action_id: str) -> None:
        self._handlers[action_id]()
        self.triggered.emit(action_id)
        self.refresh()

    def refresh(self) -> None:
        """Re-evaluate every action's enablement, and what the buttons built from them show."""
        with self._asking():
            for action_id, enabled in self._enabled.items():
                self._actions[action_id].setEnabled(bool(enabled()))
            self._buttons = [b for b in self._buttons if _alive(b)]
            for button in self._buttons:
                button.follow()

    def once(self, key: Hashable, fn: Callable[[], T]) -> T:
        """``fn()``, asked once per ``key`` while the actions' enablement is evaluated (every
        inbox action asks what the selection is; nothing changes it meanwhile). Outside an
        evaluation, ``fn()`` each time."""
        memo = self._memo
        if memo is None:
            return fn()
        if key not in memo:
            memo[key] = fn()
        return memo[key]

    @contextmanager
    def _asking(self) -> Iterator[None]:
        outer, self._memo = self._memo, {} if self._memo is None else self._memo
        try:
            yield
        finally:
            self._memo = outer

    # ------------------------------------------------------------ shortcuts
    def shortcuts(self, action_id: str) -> list[str]:
        """The configured sequences of an action (override, else default)."""
        default = self._defaults.get(action_id, "")
        value = self._overrides.get(action_id, default)
        return [s.strip() for s in value.split(";") if s.strip()]

    def effective_shortcuts(self, action_id: str) -> list[str]:
        """The sequences in force now (single keys dropped when they are switched off)."""
        return [s for s in self.shortcuts(action_id) if self.single_keys or not is_single_key(s)]

    def effective_shortcut(self, action_id: str) -> str:
        return "; ".join(self.effective_shortcuts(action_id))

    def set_single_keys(self, enabled: bool) -> None:
        self.single_keys = enabled
        for action_id in self._actions:
            self._apply_shortcut(action_id)

    def _apply_shortcut(self, action_id: str) -> None:
        action = self._actions[action_id]
        action.setShortcuts([QKeySequence(s) for s in self.effective_shortcuts(action_id)])
        action.setToolTip(self._tooltip(self._specs[action_id]))

    def _tooltip(self, spec: ActionSpec) -> str:
        seqs = self.effective_shortcuts(spec.id) if spec.id in self._actions else []
        text = tr(spec.text)
        return f"{text} ({display_key(seqs[0])})" if seqs else text

    def duplicates(self) -> dict[str, list[str]]:
        """Sequences bound to two actions that can be live at once (must be empty). Two
        commands of pages never shown together may share one."""
        seen: dict[str, list[str]] = {}
        for action_id in self._specs:
            for seq in self.shortcuts(action_id):
                seen.setdefault(QKeySequence(seq).toString(), []).append(action_id)
        return {
            k: v
            for k, v in seen.items()
            if any(not self._exclusive(a, b) for i, a in enumerate(v) for b in v[i + 1 :])
        }

    def _exclusive(self, a: str, b: str) -> bool:
        page_a, page_b = self._pages.get(a), self._pages.get(b)
        return page_a is not None and page_b is not None and never_together(page_a, page_b)

    # ------------------------------------------------------------ access
    def action(self, action_id: str) -> QAction:
        return self._actions[action_id]

    def spec(self, action_id: str) -> ActionSpec:
        return self._specs[action_id]

    def specs(self) -> list[ActionSpec]:
        return list(self._specs.values())

    def is_enabled(self, action_id: str) -> bool:
        enabled = self._enabled.get(action_id)
        return enabled() if enabled else True

    # ------------------------------------------------------------ building
    def build_menus(self, bar: QMenuBar, titles: Iterable[str]) -> dict[str, QMenu]:
        """One menu per title (with its "&" Alt letter, if any), in order: the commands
        whose spec names it (``menu`` or ``also``), by ``section`` then declaration, with a
        separator between sections. The menus come back by title without the "&"."""
        menus = {}
        for text in titles:
            title = text.replace("&", "")
            menu = bar.addMenu(tr(text))
            menu.setObjectName(f"menu.{title.lower()}")
            listed = sorted(
                (s for s in self._specs.values() if s.menu == title or title in s.also),
                key=lambda s: s.section,
            )
            for at, spec in enumerate(listed):
                if at and spec.section != listed[at - 1].section:
                    menu.addSeparator()
                menu.addAction(self._actions[spec.id])
            menus[title] = menu
        return menus

    def context_menu(self, widget: QWidget, ids: Sequence[str]) -> None:
        """A right click on ``widget`` (or the menu key) shows these commands, enabled as
        they are now (a click on a row makes it current first)."""
        widget.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        widget.customContextMenuRequested.connect(partial(self._show_menu, widget, tuple(ids)))

    def _show_menu(self, widget: QWidget, ids: tuple[str, ...], pos: QPoint) -> None:
        self.refresh()
        menu = QMenu(widget)
        menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        for action_id in ids:
            menu.addAction(self._actions[action_id])
        at = widget.viewport() if isinstance(widget, QAbstractItemView) else widget
        menu.popup(at.mapToGlobal(pos))

    def build_toolbar(self, toolbar: QToolBar) -> None:
        """Every command declared with a ``toolbar`` group, by group then declaration, with
        a separator between groups."""
        placed = sorted((s for s in self._specs.values() if s.toolbar), key=lambda s: s.toolbar)
        for at, spec in enumerate(placed):
            if at and spec.toolbar != placed[at - 1].toolbar:
                toolbar.addSeparator()
            toolbar.addAction(self._actions[spec.id])

    def button(self, ids: str | Sequence[str], parent: QWidget) -> ActionButton:
        """A push button built from a command (or from the first of several whose
        ``visible`` says so: Remove / Restore on one button): its label is the spec's
        ``button``, it is enabled and shown as the command is, and a click runs it."""
        button = ActionButton(self, [ids] if isinstance(ids, str) else list(ids), parent)
        for action_id in button.ids:
            if (enabled := self._enabled.get(action_id)) is not None:
                self._actions[action_id].setEnabled(bool(enabled()))
        self._buttons.append(button)
        button.follow()
        return button

    def shown(self, action_id: str) -> bool:
        visible = self._specs[action_id].visible
        return visible is None or bool(visible())


class ActionButton(QPushButton):
    """A push button standing for one or more registered commands (``registry.button``).
    Its owner may change its text for what it shows (a count); the command stays the same."""

    def __init__(self, registry: ActionRegistry, ids: list[str], parent: QWidget) -> None:
        super().__init__(parent)
        self.registry = registry
        self.ids = ids
        self.action_id = ""
        self._label(ids[0])
        self.clicked.connect(self._on_clicked)

    def _label(self, action_id: str) -> None:
        spec = self.registry.spec(action_id)
        self.action_id = action_id
        self.setText(tr(spec.button or spec.text))
        self.setAccessibleName(tr(spec.text).rstrip("…"))
        self.setToolTip(tr(spec.tip) if spec.tip else "")
        self.setObjectName(f"button.{spec.id}")

    def follow(self) -> None:
        """Show the command that applies now (the first whose ``visible`` says so): its
        label, tip and enablement; hidden while none applies."""
        registry = self.registry
        shown = next((i for i in self.ids if registry.shown(i)), None)
        if shown is not None and shown != self.action_id:
            self._label(shown)
        self.setVisible(shown is not None)
        self.setEnabled(shown is not None and registry.action(shown).isEnabled())

    @Slot()
    def _on_clicked(self) -> None:
        self.registry.trigger(self.action_id)


def _alive(widget: QWidget) -> bool:
    return shiboken6.isValid(widget)


def on_page(page: QWidget, enabled: Callable[[], bool] | None) -> Callable[[], bool]:
    """``enabled``, and only while ``page`` is on screen."""
    return lambda: page.isVisible() and (enabled is None or bool(enabled()))


def never_together(a: QWidget, b: QWidget) -> bool:
    """True if ``a`` and ``b`` sit under different pages of one QStackedWidget (only one
    of them can be visible)."""
    chain_a, chain_b = ancestors(a), ancestors(b)
    ids_a = [id(w) for w in chain_a]
    for at_b, common in enumerate(chain_b):
        if id(common) in ids_a:
            at_a = ids_a.index(id(common))
            return at_a > 0 and at_b > 0 and isinstance(common, QStackedWidget)
    return False


def ancestors(widget: QWidget) -> list[QWidget]:
    """``widget`` and its parents, nearest first."""
    chain = [widget]
    while (parent := chain[-1].parentWidget()) is not None:
        chain.append(parent)
    return chain


def display_key(sequence: str) -> str:
    """Sequences ("A; Ctrl+Return") in the platform's notation, joined by " or "."""
    parts = [p.strip() for p in sequence.split(";") if p.strip()]
    return " or ".join(
        QKeySequence(p).toString(QKeySequence.SequenceFormat.NativeText) for p in parts
    )
