"""The Effects page: the queue of side effects whose outcome nobody knows, and the rest of
the effect lifecycle for context (live leases with countdowns, lapsed leases not yet
marked, committed and failed effects with their receipts).

Only an ambiguous effect can be resolved (committed or failed, with a reason); only a
lapsed lease is offered "mark ambiguous" (a live lease is never released). Keyboard: Tab
moves between filters, list, detail and form; Alt+C marks committed, Alt+A marks failed,
Alt+B marks lapsed leases ambiguous, Ctrl+F searches; the same commands are in the menu
"Effects" and the Ctrl+K palette (gui/effects/commands.py), and C / F (single keys) mark
committed / failed from the list.
"""

from __future__ import annotations

import time

from PySide6.QtCore import QModelIndex, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QScrollArea,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from proctor.core.effects.views import EffectContext, EffectQuery
from proctor.core.models import ChangeKind, ChangeSet, Effect, EffectStatus

from ..decide.effect_view import LIVE, EffectView, lapsed
from ..decide.resolve_effect import ResolveForm, resolve_call
from ..infra.context import PageContext
from ..infra.i18n import QT_TR_NOOP, tr
from ..widgets.labels import plain_label
from ..widgets.list_page import ListPage, choice_combo
from ..widgets.message_bar import Level, MessageBar
from . import commands
from .model import EffectsModel

TICK_MS = 1000
LEASE_REFRESH_S = 2.0  # while lapsed/live leases are listed, re-read this often
FILTERS: list[tuple[str, str]] = [
    (QT_TR_NOOP("Needs a person (ambiguous)"), "ambiguous"),
    (QT_TR_NOOP("Lease lapsed, not marked"), "lapsed"),
    (QT_TR_NOOP("Live (reserved or executing)"), "live"),
    (QT_TR_NOOP("Committed"), "committed"),
    (QT_TR_NOOP("Failed"), "failed"),
    (QT_TR_NOOP("All effects"), "all"),
]


def effect_query(choice: str, text: str | None) -> EffectQuery:
    statuses = {
        "ambiguous": {EffectStatus.AMBIGUOUS},
        "live": set(LIVE),
        "committed": {EffectStatus.COMMITTED},
        "failed": {EffectStatus.FAILED},
    }
    return EffectQuery(
        statuses=frozenset(statuses.get(choice, set())), lapsed=choice == "lapsed", text=text
    )


class EffectsPage(ListPage):
    """Signals:
    open_run(str): the operator asked to see the run of an effect.
    """

    open_run = Signal(str)
    change_kinds = frozenset({ChangeKind.EFFECT, ChangeKind.RECEIPT})
    title = "Effects"
    stretch_column = 7

    def __init__(self, ctx: PageContext, parent: QWidget | None = None) -> None:
        super().__init__(ctx, EffectsModel(ctx.runner), parent)
        self.read_only = bool(ctx.journal.read_only)
        self.key: str | None = None
        self.sending: str | None = None  # the effect whose outcome is being written
        self.context: EffectContext | None = None
        self._last_tick = self._last_refresh = time.time()
        self.status = choice_combo("Effect status", FILTERS, self)
        self.status.currentIndexChanged.connect(self.apply_query)
        self.layout_top.insertWidget(2, self.status)
        self.search.setPlaceholderText(tr("Search keys, actions, idempotency keys"))
        self.detail_message = MessageBar(self)
        self.view = EffectView(self)
        self.empty = plain_label(
            tr("Select an effect to see it whole."), self, name="Muted", selectable=False
        )
        self.form = ResolveForm(self)
        self._buttons()
        self._layout()
        self.table.selectionModel().currentChanged.connect(self._on_current)
        self.model.loaded.connect(self._on_loaded)
        self.view.open_run.connect(self.open_run)
        self._tick = QTimer(self)
        self._tick.setInterval(TICK_MS)
        self._tick.timeout.connect(self._on_tick)
        find = QShortcut(QKeySequence("Ctrl+F"), self)
        find.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        find.activated.connect(self.search.setFocus)
        self.show_context(None)

    # ------------------------------------------------------------ building
    def _buttons(self) -> None:
        """The page's commands (gui/effects/commands.py), and its buttons built from them."""
        registry = self.ctx.registry
        commands.register(self, registry)
        self.committed_button = registry.button("effects.committed", self)
        self.failed_button = registry.button("effects.failed", self)
        self.lapsed_button = registry.button("effects.mark_lapsed", self)
        row = QHBoxLayout()
        for button in (self.committed_button, self.failed_button, self.lapsed_button):
            row.addWidget(button)
        row.addStretch(1)
        self.form.buttons.addLayout(row)

    def _layout(self) -> None:
        content = QWidget(self)
        inner = QVBoxLayout(content)
        inner.addWidget(self.empty)
        inner.addWidget(self.view)
        inner.addStretch(1)
        scroll = QScrollArea(self)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setWidget(content)
        right = QWidget(self)
        column = QVBoxLayout(right)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.detail_message)
        column.addWidget(scroll, 1)
        column.addWidget(self.form)
        split = QSplitter(Qt.Orientation.Horizontal, self)
        split.setObjectName("EffectsSplitter")
        split.addWidget(self.table)
        split.addWidget(right)
        split.setChildrenCollapsible(False)
        split.setSizes([640, 560])
        self.splitter = split
        self.add_main(split)

    # ------------------------------------------------------------ list
    def apply_query(self) -> None:
        assert isinstance(self.model, EffectsModel)
        self.model.show(self.journal, effect_query(self.status.currentData(), self.text()))

    def start(self) -> None:
        super().start()
        self._tick.start()

    def choose_filter(self, choice: str) -> None:
        self.status.setCurrentIndex(max(0, self.status.findData(choice)))

    @Slot()
    def _on_loaded(self) -> None:
        if not self.table.currentIndex().isValid() and self.model.rowCount():
            self.table.selectRow(0)

    @Slot(QModelIndex, QModelIndex)
    def _on_current(self, current: QModelIndex, _previous: QModelIndex) -> None:
        item = self.model.item(current.row()) if current.isValid() else None
        if item is not None:
            self.select_effect(item.key)

    def select_effect(self, key: str) -> None:
        if key != self.key:
            self.detail_message.clear()
            self.form.clear()
        self.key = key
        self.reload_detail()

    def refreshed(self) -> None:
        self.reload_detail()

    def on_changes(self, cs: ChangeSet) -> None:
        """The list refreshes (throttled); the effect shown is read again at once, so a read
        begun before the change can never show it as it was."""
        super().on_changes(cs)
        if self.key is not None and self.key in cs.ids(ChangeKind.EFFECT):
            self.reload_detail()

    # ------------------------------------------------------------ detail
    def reload_detail(self) -> None:
        if self.key is None:
            return
        key, effects = self.key, self.journal.effects
        self.ctx.runner.latest(
            "detail",
            lambda: effects.context(key),
            on_done=self.show_context,
            on_error=self._on_context_error,
            owner=self,
        )

    def _on_context_error(self, exc: BaseException) -> None:
        self.ctx.presenter.present(exc, inline=self.detail_message)

    def show_context(self, context: EffectContext | None) -> None:
        self.context = context
        self.empty.setVisible(context is None)
        self.view.setVisible(context is not None)
        if context is not None:
            self.view.show_context(context)
        receipts = context.receipts if context is not None else ()
        self.form.set_effect(self.effect(), writable=not self.read_only, receipts=receipts)
        self.update_buttons()

    def effect(self) -> Effect | None:
        return self.context.effect if self.context is not None else None

    def can_resolve(self) -> bool:
        """The effect shown is the one selected (not the last one, while the selected one's
        detail is still being read), ambiguous, on a writable desk, and no outcome is on its
        way (``sending`` is cleared only when that write is done or refused, never by a
        reload)."""
        e = self.effect()
        return (
            not self.read_only
            and e is not None
            and e.key == self.key
            and e.status == EffectStatus.AMBIGUOUS
            and self.sending is None
        )

    def shows_lapsed(self) -> bool:
        e = self.effect()
        return e is not None and lapsed(e)

    def can_mark_lapsed(self) -> bool:
        return not self.read_only and self.shows_lapsed()

    def update_buttons(self) -> None:
        e = self.effect()
        self.form.setVisible(
            e is not None and (e.status == EffectStatus.AMBIGUOUS or self.shows_lapsed())
        )
        self.ctx.registry.refresh()  # the commands and the buttons built from them

    # ------------------------------------------------------------ writes
    def resolve(self, outcome: EffectStatus) -> bool:
        """Resolve the shown effect (after the form's checks); False if nothing was sent."""
        e = self.effect()
        if e is None or not self.can_resolve():  # can_resolve: an effect is shown
            return False
        if not self.form.check(e, outcome):
            return False
        call = resolve_call(
            self.journal.effects,
            e,
            outcome,
            self.form.reason_text(),
            self.form.external_id(),
            self.form.evidence(),
        )
        self.detail_message.show_message(
            tr("Marking {outcome}…").format(outcome=outcome.value), Level.INFO
        )
        self.sending = e.key
        self.update_buttons()
        self.ctx.runner.run(
            call,
            on_done=self._on_resolved,
            on_error=self._on_resolve_refused,
            owner=self,
            write=True,
        )
        return True

    def _on_resolved(self, effect: Effect) -> None:
        self.sending = None
        if self.context is not None and self.context.effect.key == effect.key:
            # the effect as written (resolved): its commands go off now, not when the
            # reload below arrives
            self.context = self.context.model_copy(update={"effect": effect})
        self.update_buttons()
        self.reload_detail()  # show it resolved now, not ambiguous until the change feed
        self.form.clear()
        self.detail_message.clear()
        self.message.show_message(
            tr("Marked {status}: {key}. Receipt, run event and audit row written.").format(
                status=effect.status.value, key=effect.key
            ),
            Level.SUCCESS,
        )

    def _on_resolve_refused(self, exc: BaseException) -> None:
        self.sending = None
        self._on_refused(exc)

    def _on_refused(self, exc: BaseException) -> None:
        """Said on the page (it stays when the list moves on); the detail reloads to show
        the effect as it is now (who resolved it, and how)."""
        self.detail_message.clear()
        self.ctx.presenter.present(exc, inline=self.message)
        self.model.refresh()
        self.reload_detail()

    @Slot()
    def mark_lapsed(self) -> None:
        e = self.effect()
        if self.read_only or e is None or not lapsed(e):
            return
        effects = self.journal.effects
        self.ctx.runner.run(
            effects.sweep_expired,
            on_done=self._on_swept,
            on_error=self._on_refused,
            owner=self,
            write=True,
        )

    def _on_swept(self, n: int) -> None:
        self.message.show_message(
            tr("Marked {n} lapsed effect{n2} ambiguous; each now waits for a person.").format(
                n=n, n2="s" if n != 1 else ""
            ),
            Level.SUCCESS,
        )

    # ------------------------------------------------------------ clock
    @Slot()
    def _on_tick(self) -> None:
        now = time.time()
        since, self._last_tick = self._last_tick, now
        if not self.isVisible():
            return
        self.model.tick()
        self.view.tick()
        assert isinstance(self.model, EffectsModel)
        watching_leases = self.status.currentData() in ("lapsed", "live")
        if self.model.crossed_expiry(since, now) or (
            watching_leases and now - self._last_refresh >= LEASE_REFRESH_S
        ):
            self._last_refresh = now
            self.model.refresh()  # leases lapse without a write: look again
        self.update_buttons()
