"""Runs commands in the action registry (menu "Runs", the Ctrl+K palette, ? help): the
run list's export, and for the run on screen: back to the list, exports, request cancel.
Each calls the handler of the button it stands for; the list's commands are enabled only
while the list is shown, the run's only while a run is."""

from __future__ import annotations

from PySide6.QtCore import QT_TR_NOOP

from ..actions import ActionRegistry, ActionSpec
from .page import RunsPage

LIST_SPECS = [
    ActionSpec("runs.export_list", QT_TR_NOOP("Export the run list as CSV…"), QT_TR_NOOP("Runs"),
               QT_TR_NOOP("Write the runs the filters show to a CSV file")),
]
RUN_SPECS = [
    ActionSpec("runs.back", QT_TR_NOOP("Back to the run list"), QT_TR_NOOP("Runs"),
               QT_TR_NOOP("The list, with its filters, selection and scroll position")),
    ActionSpec("runs.export_json", QT_TR_NOOP("Export the run as JSON…"), QT_TR_NOOP("Runs"),
               QT_TR_NOOP("Everything about the run shown, in one JSON file")),
    ActionSpec("runs.export_jsonl", QT_TR_NOOP("Export the run's events as JSON lines…"),
               QT_TR_NOOP("Runs"),
               QT_TR_NOOP("The run's events, one JSON object a line")),
    ActionSpec("runs.copy", QT_TR_NOOP("Copy the run as JSON"), QT_TR_NOOP("Runs"),
               QT_TR_NOOP("The run shown, to the clipboard")),
    ActionSpec("runs.cancel", QT_TR_NOOP("Request cancel…"), QT_TR_NOOP("Runs"),
               QT_TR_NOOP("Ask the agent to stop the run shown (a reason is required)")),
]


def register(page: RunsPage, registry: ActionRegistry) -> None:
    detail = page.detail

    def has_run() -> bool:
        return detail.run is not None

    def can_cancel() -> bool:
        return has_run() and detail.cancel_button.isEnabled()

    handlers = {"runs.export_list": page.list.export_button.click,
                "runs.back": page.show_list, "runs.export_json": detail._export_json,
                "runs.export_jsonl": detail._export_jsonl, "runs.copy": detail.copy_run,
                "runs.cancel": detail.request_cancel}
    enabled = {"runs.export_json": has_run, "runs.export_jsonl": has_run,
               "runs.copy": has_run, "runs.cancel": can_cancel}
    for spec in LIST_SPECS:
        registry.register(spec, handlers[spec.id], page=page.list)
    for spec in RUN_SPECS:
        registry.register(spec, handlers[spec.id], enabled.get(spec.id), page=detail)
