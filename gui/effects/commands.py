"""Effects commands, each declared once (menu "Effects", the Ctrl+K palette, ? help, and
the page's buttons, built from them).

Marking committed or failed goes through ``EffectsPage.resolve``: the reason check, the
second confirmation before a non-idempotent write is marked failed, the evidence. The
commands are enabled only while the Effects page is shown.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from proctor.core.models import EffectStatus

from ..infra.actions import ActionRegistry, ActionSpec
from ..infra.i18n import QT_TR_NOOP

if TYPE_CHECKING:
    from .page import EffectsPage


def commands(page: EffectsPage) -> list[ActionSpec]:
    """Every command of the Effects page: what it says, where it shows, its key, icon and
    button, when it is enabled and what it does."""
    return [
        ActionSpec(
            "effects.committed",
            QT_TR_NOOP("Mark committed"),
            QT_TR_NOOP("Effects"),
            QT_TR_NOOP("It happened: never retry it (a reason is required)"),
            handler=partial(page.resolve, EffectStatus.COMMITTED),
            enabled=page.can_resolve,
            shortcut="C",
            icon="status-done",
            button=QT_TR_NOOP("Mark &committed"),
        ),
        ActionSpec(
            "effects.failed",
            QT_TR_NOOP("Mark failed"),
            QT_TR_NOOP("Effects"),
            QT_TR_NOOP("It did not happen: the next attempt may retry it (a reason is required)"),
            handler=partial(page.resolve, EffectStatus.FAILED),
            enabled=page.can_resolve,
            shortcut="F",
            icon="status-failed",
            button=QT_TR_NOOP("Mark f&ailed"),
        ),
        ActionSpec(
            "effects.mark_lapsed",
            QT_TR_NOOP("Mark lapsed leases ambiguous"),
            QT_TR_NOOP("Effects"),
            QT_TR_NOOP(
                "Every lease that expired without an outcome waits for a person; "
                "live leases are never touched"
            ),
            handler=page.mark_lapsed,
            enabled=page.can_mark_lapsed,
            visible=page.shows_lapsed,
            icon="status-attention",
            button=QT_TR_NOOP("Mark lapsed leases am&biguous"),
        ),
        ActionSpec(
            "effects.open_run",
            QT_TR_NOOP("Open the effect's run"),
            QT_TR_NOOP("Effects"),
            QT_TR_NOOP("Show the run that asked for this effect on the Runs page"),
            handler=lambda: page.open_run.emit(shown_run(page)),
            enabled=lambda: bool(shown_run(page)),
            shortcut="O",
            icon="page-runs",
        ),
    ]


def shown_run(page: EffectsPage) -> str | None:
    """The run that asked for the effect shown (None: no effect shown, or no run)."""
    effect = page.effect()
    return effect.run_id if effect is not None else None


def register(page: EffectsPage, registry: ActionRegistry) -> None:
    for spec in commands(page):
        registry.register(spec, page=page)
