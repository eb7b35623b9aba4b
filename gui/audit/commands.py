"""Audit commands in the action registry (menu "Audit", the Ctrl+K palette, ? help):
verify the chain and export what the filters show, through the page's buttons' handlers,
enabled only while the Audit page is shown."""

from __future__ import annotations

from PySide6.QtCore import QT_TR_NOOP

from ..actions import ActionRegistry, ActionSpec
from .page import AuditPage

SPECS = [
    ActionSpec("audit.verify", QT_TR_NOOP("Verify the audit chain"), QT_TR_NOOP("Audit"),
               QT_TR_NOOP("Recompute the audit log's digest chain; name the first broken link")),
    ActionSpec("audit.export", QT_TR_NOOP("Export the audit log as CSV…"), QT_TR_NOOP("Audit"),
               QT_TR_NOOP("Write the entries the filters show to a CSV file")),
]


def register(page: AuditPage, registry: ActionRegistry) -> None:
    handlers = {"audit.verify": page.verify_chain, "audit.export": page.export_button.click}
    enabled = {"audit.verify": page.verify_button.isEnabled}
    for spec in SPECS:
        registry.register(spec, handlers[spec.id], enabled.get(spec.id), page=page)
