"""Effects commands, each declared once (menu "Effects", the Ctrl+K palette, ? help).

Marking committed or failed goes through ``EffectsPage.resolve``: the reason check, the
second confirmation before a non-idempotent write is marked failed, the evidence. The
commands are enabled only while the Effects page is shown and its buttons are.
"""

from __future__ import annotations

from functools import partial

from PySide6.QtCore import QT_TR_NOOP

from proctor.core.models import EffectStatus

from ..actions import ActionRegistry, ActionSpec
from .page import EffectsPage


def commands(page: EffectsPage) -> list[ActionSpec]:
    """Every command of the Effects page: what it says, where it shows, its key and icon,
    when it is enabled and what it does."""
    return [
        ActionSpec("effects.committed", QT_TR_NOOP("Mark committed"), QT_TR_NOOP("Effects"),
                   QT_TR_NOOP("It happened: never retry it (a reason is required)"),
                   handler=partial(page.resolve, EffectStatus.COMMITTED),
                   enabled=page.committed_button.isEnabled, shortcut="C", icon="status-done"),
        ActionSpec("effects.failed", QT_TR_NOOP("Mark failed"), QT_TR_NOOP("Effects"),
                   QT_TR_NOOP("It did not happen: the next attempt may retry it "
                              "(a reason is required)"),
                   handler=partial(page.resolve, EffectStatus.FAILED),
                   enabled=page.failed_button.isEnabled, shortcut="F", icon="status-failed"),
        ActionSpec("effects.mark_lapsed", QT_TR_NOOP("Mark lapsed leases ambiguous"),
                   QT_TR_NOOP("Effects"),
                   QT_TR_NOOP("Every lease that expired without an outcome waits for a person"),
                   handler=page.mark_lapsed, icon="status-attention",
                   enabled=lambda: not page.lapsed_button.isHidden()
                   and page.lapsed_button.isEnabled()),
        ActionSpec("effects.open_run", QT_TR_NOOP("Open the effect's run"), QT_TR_NOOP("Effects"),
                   QT_TR_NOOP("Show the run that asked for this effect on the Runs page"),
                   handler=lambda: page.open_run.emit(page.effect().run_id),
                   enabled=lambda: page.effect() is not None
                   and bool(page.effect().run_id), shortcut="O", icon="page-runs"),
    ]


def register(page: EffectsPage, registry: ActionRegistry) -> None:
    for spec in commands(page):
        registry.register(spec, page=page)
