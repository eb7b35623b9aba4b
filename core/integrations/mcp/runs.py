"""The runs an MCP session files its requests under: which are still open, which an ended
session kept for a reconnecting client, and how they end (completed, failed, withdrawn)."""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Iterator
from pathlib import Path

from proctor.core import errors
from proctor.core.journal import Journal
from proctor.core.models import (
    TERMINAL_RUN_STATUSES,
    ApprovalStatus,
    QuestionStatus,
    Run,
    RunStatus,
)

log = logging.getLogger(__name__)


def open_runs(journal: Journal, project: str) -> Iterator[Run]:
    """Every run in ``project`` that has not ended, page by page."""
    open_statuses = [st.value for st in RunStatus if st not in TERMINAL_RUN_STATUSES]
    cursor = None
    while True:
        page = journal.runs.list(status=open_statuses, project=project, cursor=cursor)
        yield from page.items
        if not page.next_cursor:
            return
        cursor = page.next_cursor


KEPT = "mcp.request_kept"  # run event: this request outlives its caller's connection
DETACHED = "mcp.session_ended"  # run event: the session ended, its kept requests stay open


def orphaned_runs(journal: Journal, project: str) -> list[tuple[str, int]]:
    """(run id, server pid) of the open MCP-session runs in ``project`` whose server ran on
    this host and is no longer alive."""
    host, scope, found = socket.gethostname(), pid_scope(), []
    for run in open_runs(journal, project):
        started = journal.runs.events(run.id, limit=1)
        payload = started[0].payload if started else None
        meta = payload.get("metadata") if isinstance(payload, dict) else None
        if not isinstance(meta, dict):
            continue
        pid = meta.get("server_pid")
        if (
            meta.get("via") == "mcp"
            and meta.get("server_host") == host
            and meta.get("server_pid_scope") == scope
            and isinstance(pid, int)
            and not process_alive(pid)
        ):
            found.append((run.id, pid))
    return found


def pid_scope() -> str:
    """Where a pid means this process: the boot and the pid namespace (two containers may
    share a host name but not their pids). Empty where the OS does not say."""
    parts = []
    for read in (
        lambda: Path("/proc/sys/kernel/random/boot_id").read_text().strip(),
        lambda: os.readlink("/proc/self/ns/pid"),
    ):
        try:
            parts.append(read())
        except OSError:
            parts.append("")
    return "/".join(parts) if any(parts) else ""


def process_alive(pid: int) -> bool:
    if pid == os.getpid() or os.name == "nt":  # on Windows os.kill(pid, 0) would kill it
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


OPEN_QUESTION = (QuestionStatus.REQUESTED, QuestionStatus.PRESENTED)


def open_items(j: Journal, run_id: str) -> list[str]:
    """The ids of the run's requests still waiting for a person."""
    return [a.id for a in j.approvals.for_run(run_id) if a.status == ApprovalStatus.PENDING] + [
        q.id for q in j.questions.for_run(run_id) if q.status in OPEN_QUESTION
    ]


def kept_ids(j: Journal, run_id: str) -> set[str]:
    return {
        e.payload["id"]
        for e in j.runs.events(run_id, types=[KEPT], limit=5000)
        if isinstance(e.payload, dict) and isinstance(e.payload.get("id"), str)
    }


def is_detached(j: Journal, run_id: str) -> bool:
    return bool(j.runs.events(run_id, types=[DETACHED], limit=1))


def end_or_keep(j: Journal, run_id: str, reason: str, *, fail: bool = False) -> bool:
    """The connection of the session that owns the run is gone. Its requests filed without a
    key are withdrawn; if one it kept is still pending the run stays open (a DETACHED event
    names them), else it ends: completed, or failed (``fail``: its server died). True if it
    ended now."""
    run = j.runs.get(run_id)
    if run.status.terminal:
        return False
    pending, kept = open_items(j, run_id), kept_ids(j, run_id)
    waiting = [i for i in pending if i in kept]
    if not waiting:
        if fail:
            j.runs.fail(run_id, reason)
        else:
            j.runs.complete(run_id, {"reason": reason})
        return True
    for item_id in pending:
        if item_id not in kept:
            withdraw_item(j, item_id, reason)
    if not is_detached(j, run_id):
        j.runs.append_event(run_id, DETACHED, {"reason": reason[:500], "kept": waiting})
    return False


def settle_detached(j: Journal, run_id: str) -> None:
    """A run whose session ended and kept requests: completed once none is pending, cancelled
    (withdrawing them) once the operator asked it to stop. Any other run is left alone."""
    try:
        run = j.runs.get(run_id)
        if run.status.terminal or not is_detached(j, run_id):
            return
        if run.cancel_requested:
            reason = f"the operator asked this run to stop: {run.cancel_reason or ''}".strip()
            for item_id in open_items(j, run_id):
                withdraw_item(j, item_id, reason)
            j.runs.cancel(run_id, reason)
        elif not open_items(j, run_id):
            j.runs.complete(
                run_id,
                {
                    "reason": "its session ended; the requests it kept for "
                    "a reconnecting client are decided"
                },
            )
    except errors.ProctorError as err:  # settled meanwhile by another server
        log.info("run %s not settled: %s", run_id, err)


def detached_runs(journal: Journal, project: str) -> list[str]:
    """The open runs in ``project`` whose MCP session ended with kept requests."""
    return [run.id for run in open_runs(journal, project) if is_detached(journal, run.id)]


def withdraw_item(j: Journal, item_id: str, reason: str) -> None:
    """Withdraw if still pending; a decision that won the race stands."""
    try:
        if item_id.startswith("apr_"):
            j.approvals.withdraw(item_id, reason)
        else:
            j.questions.withdraw(item_id, reason)
    except (errors.InvalidTransition, errors.NotFound) as err:
        log.info("not withdrawn: %s", err)
