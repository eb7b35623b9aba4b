"""Runs commands, each declared once (menu "Runs", the Ctrl+K palette, ? help): the run
list's export and Copy link, and for the run on screen: back to the list, exports, Copy link,
request cancel. The
list's commands are enabled only while the list is shown, the run's only while a run is."""

from __future__ import annotations

from PySide6.QtGui import QGuiApplication

from proctor.core.kernel.links import link_url, linkable

from ..infra.actions import ActionRegistry, ActionSpec
from ..infra.i18n import QT_TR_NOOP
from .page import RunsPage


def list_commands(page: RunsPage) -> list[ActionSpec]:
    return [
        ActionSpec(
            "runs.export_list",
            QT_TR_NOOP("Export the run list as CSV…"),
            QT_TR_NOOP("Runs"),
            QT_TR_NOOP("Write the runs the filters show to a CSV file"),
            handler=page.list.export_csv,
            shortcut="Ctrl+E",
            section=1,
            no_icon="file export; the dialog that follows says where",
        ),
        ActionSpec(
            "runs.copy_row_link",
            QT_TR_NOOP("Copy link"),
            QT_TR_NOOP("Runs"),
            QT_TR_NOOP(
                "A proctor://run/… link to the run under the cursor, to the clipboard "
                "(`proctor open LINK` shows it)"
            ),
            handler=lambda: copy_link(page.list.current_run_id()),
            enabled=lambda: linkable(page.list.current_run_id()),
            shortcut="Ctrl+Shift+L",
            section=1,
            no_icon="clipboard copy; nothing to show",
        ),
    ]


def copy_link(run_id: str) -> None:
    QGuiApplication.clipboard().setText(link_url("run", run_id))


def run_commands(page: RunsPage) -> list[ActionSpec]:
    detail = page.detail

    def has_run() -> bool:
        return detail.run is not None

    return [
        ActionSpec(
            "runs.back",
            QT_TR_NOOP("Back to the run list"),
            QT_TR_NOOP("Runs"),
            QT_TR_NOOP("The list, with its filters, selection and scroll position"),
            handler=page.show_list,
            shortcut="Alt+Left",
            icon="page-runs",
        ),
        ActionSpec(
            "runs.export_json",
            QT_TR_NOOP("Export the run as JSON…"),
            QT_TR_NOOP("Runs"),
            QT_TR_NOOP("Everything about the run shown, in one JSON file"),
            handler=detail._export_json,
            enabled=has_run,
            shortcut="Ctrl+E",
            section=1,
            no_icon="file export; the dialog that follows says where",
        ),
        ActionSpec(
            "runs.export_jsonl",
            QT_TR_NOOP("Export the run's events as JSON lines…"),
            QT_TR_NOOP("Runs"),
            QT_TR_NOOP("The run's events, one JSON object a line"),
            handler=detail._export_jsonl,
            enabled=has_run,
            section=1,
            no_icon="file export; the dialog that follows says where",
        ),
        ActionSpec(
            "runs.copy",
            QT_TR_NOOP("Copy the run as JSON"),
            QT_TR_NOOP("Runs"),
            QT_TR_NOOP("The run shown, to the clipboard"),
            handler=detail.copy_run,
            enabled=has_run,
            section=1,
            no_icon="clipboard copy; nothing to show",
        ),
        ActionSpec(
            "runs.copy_link",
            QT_TR_NOOP("Copy link"),
            QT_TR_NOOP("Runs"),
            QT_TR_NOOP(
                "A proctor://run/… link to the run shown, to the clipboard "
                "(`proctor open LINK` shows it)"
            ),
            handler=lambda: copy_link(detail.run_id or ""),
            enabled=lambda: linkable(detail.run_id or ""),
            shortcut="Ctrl+Shift+L",
            section=1,
            no_icon="clipboard copy; nothing to show",
        ),
        ActionSpec(
            "runs.retry",
            QT_TR_NOOP("Retry run…"),
            QT_TR_NOOP("Runs"),
            QT_TR_NOOP(
                "Ask the agent of the failed run shown to try again as a new attempt "
                "(a reason is required)"
            ),
            handler=detail.request_retry,
            enabled=lambda: has_run() and detail.can_retry(),
            visible=detail.is_failed,
            icon="status-running",
            section=2,
        ),
        ActionSpec(
            "runs.cancel",
            QT_TR_NOOP("Request cancel…"),
            QT_TR_NOOP("Runs"),
            QT_TR_NOOP("Ask the agent to stop the run shown (a reason is required)"),
            handler=detail.request_cancel,
            enabled=lambda: has_run() and detail.can_cancel(),
            icon="status-cancelled",
            section=2,
        ),
    ]


def register(page: RunsPage, registry: ActionRegistry) -> None:
    for spec in list_commands(page):
        registry.register(spec, page=page.list)
    for spec in run_commands(page):
        registry.register(spec, page=page.detail)
    page.detail.use_commands(registry)
    registry.context_menu(page.list.table, ("runs.copy_row_link",))
    page.list.table.selectionModel().currentChanged.connect(lambda *_: registry.refresh())
