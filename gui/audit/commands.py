"""Audit commands, each declared once (menu "Audit", the Ctrl+K palette, ? help, and the
page's buttons, built from them): verify the chain and export what the filters show,
enabled only while the Audit page is shown."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..infra.actions import ActionRegistry, ActionSpec
from ..infra.i18n import QT_TR_NOOP

if TYPE_CHECKING:
    from .page import AuditPage


def commands(page: AuditPage) -> list[ActionSpec]:
    return [
        ActionSpec(
            "audit.verify",
            QT_TR_NOOP("Verify the audit chain"),
            QT_TR_NOOP("Audit"),
            QT_TR_NOOP("Recompute the audit log's digest chain; name the first broken link"),
            handler=page.verify_chain,
            enabled=lambda: not page.verifying(),
            button=QT_TR_NOOP("Verify chain"),
            no_icon="its result is the status line's tick or cross",
        ),
        ActionSpec(
            "audit.export",
            QT_TR_NOOP("Export the audit log as CSV…"),
            QT_TR_NOOP("Audit"),
            QT_TR_NOOP("Write the entries the filters show to a CSV file"),
            handler=page.export_csv,
            shortcut="Ctrl+E",
            button=QT_TR_NOOP("Export CSV…"),
            no_icon="file export; the dialog that follows says where",
        ),
    ]


def register(page: AuditPage, registry: ActionRegistry) -> None:
    for spec in commands(page):
        registry.register(spec, page=page)
