"""Effects commands in the action registry (menu "Effects", the Ctrl+K palette, ? help).

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

SPECS = [
    ActionSpec("effects.committed", QT_TR_NOOP("Mark committed"), "Effects",
               QT_TR_NOOP("It happened: never retry it (a reason is required)")),
    ActionSpec("effects.failed", QT_TR_NOOP("Mark failed"), "Effects",
               QT_TR_NOOP("It did not happen: the next attempt may retry it (a reason is required)")),
    ActionSpec("effects.mark_lapsed", QT_TR_NOOP("Mark lapsed leases ambiguous"), "Effects",
               QT_TR_NOOP("Every lease that expired without an outcome waits for a person")),
]


def register(page: EffectsPage, registry: ActionRegistry) -> None:
    def resolve(outcome: EffectStatus) -> None:
        page.resolve(outcome)

    def can_resolve() -> bool:
        return page.committed_button.isEnabled()

    def can_mark_lapsed() -> bool:
        return not page.lapsed_button.isHidden() and page.lapsed_button.isEnabled()

    handlers = {"effects.committed": partial(resolve, EffectStatus.COMMITTED),
                "effects.failed": partial(resolve, EffectStatus.FAILED),
                "effects.mark_lapsed": page.mark_lapsed}
    enabled = {"effects.committed": can_resolve, "effects.failed": can_resolve,
               "effects.mark_lapsed": can_mark_lapsed}
    for spec in SPECS:
        registry.register(spec, handlers[spec.id], enabled[spec.id], page=page)
