"""The inbox table model: keyset pages of ``journal.inbox.list``."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QBrush, QColor

from proctor.core import Journal
from proctor.core.kernel import waiting
from proctor.core.kernel.origin import describe, short
from proctor.core.models import InboxFilter, InboxItem

from ..decide.items import KIND_TITLES as KIND_TITLES
from ..decide.items import RESYNC_S, waiter_cell, waiter_text
from ..decide.items import item_key as item_key
from ..infra.i18n import QT_TR_NOOP, tr
from ..infra.tasks import TaskRunner
from ..widgets import fmt
from ..widgets.delegates import SECOND_LINE_ROLE
from ..widgets.icons import kind_icon
from ..widgets.paged_model import Column, PagedModel

SAFETY_ROLE = Qt.ItemDataRole.UserRole + 10
URGENT_S = 60  # countdowns under a minute are shown in red

COL_KIND, COL_SUMMARY, COL_SAFETY, COL_AGE, COL_EXPIRES, COL_WAITER = range(6)
# a full reload now and then: snoozed items wake up, and agents' waits show, without a change
RESYNC_MS = RESYNC_S * 1000


def second_line(item: InboxItem) -> str:
    """Who asked, in which run and through what (the muted line under the summary; the
    origin in its compact form, "via mcp/refund_agent", as the agent reports it)."""
    run = f" · {item.run_title}" if item.run_title else ""
    via = f" {short(item.origin)}" if item.origin is not None else ""
    line = f"{KIND_TITLES.get(item.kind.value, '')} · {item.agent}{via}{run} · {item.project}"
    return f"{marks}  ·  {line}" if (marks := marks_text(item)) else line


def marks_text(item: InboxItem) -> str:
    """``1 of 2 · assigned to alice``: a request under a policy, and who took the item on."""
    parts = [item.progress] if item.progress else []
    if item.assignee:
        parts.append(tr("assigned to {name}").format(name=item.assignee))
    return " · ".join(parts)


def tooltip(item: InboxItem) -> str:
    origin = f"\nfrom {describe(item.origin)} (as the agent reports it)" if item.origin else ""
    return f"{item.summary}\n\n{second_line(item)}{origin}"


def expires_text(item: InboxItem) -> str:
    if item.snoozed_until and item.snoozed_until > time.time():
        return tr("snoozed {countdown}").format(countdown=fmt.countdown(item.snoozed_until))
    return fmt.until(item.expires_at)


COLUMNS = [
    Column(
        "",
        lambda i: "",
        tip=lambda i: KIND_TITLES.get(i.kind.value, ""),
        align=Qt.AlignmentFlag.AlignCenter,
        width=34,
    ),
    Column(QT_TR_NOOP("Request"), lambda i: i.summary, tip=tooltip, width=360),
    Column(QT_TR_NOOP("Safety"), lambda i: (i.safety_class or "").replace("_", " "), width=136),
    Column(
        QT_TR_NOOP("Age"),
        lambda i: fmt.since(i.created_at),
        tip=lambda i: tr("requested {when}").format(when=fmt.other(i.created_at)),
        align=Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
        width=64,
        live=True,
        absolute_title=QT_TR_NOOP("Requested"),
    ),
    Column(
        QT_TR_NOOP("Expires"),
        expires_text,
        tip=lambda i: (
            tr("expires {when}").format(when=fmt.other(i.expires_at))
            if i.expires_at
            else tr("no expiry")
        ),
        align=Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
        width=92,
        live=True,
    ),
    Column(
        QT_TR_NOOP("Waiter"),
        lambda i: waiter_cell(i, time.time()),
        tip=lambda i: waiter_text(i, time.time()),
        align=Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
        width=104,  # "nobody waited" whole
        live=True,
    ),
]


def accessible(item: InboxItem) -> str:
    """The screen reader's text for a row: agent text bounded and escaped (``fmt.bounded``),
    never a whole 5 MB title nor a raw control character."""
    return tr("{kind} from {agent}, run {run}: {summary}").format(
        kind=KIND_TITLES.get(item.kind.value, ""),
        agent=fmt.bounded(item.agent, 80),
        run=fmt.bounded(item.run_title, 120),
        summary=fmt.bounded(item.summary, 200),
    )


class InboxModel(PagedModel):
    """Rows are InboxItems; keys are ``kind:id``.

    Arrivals can be held: while ``hold()`` says so (the pointer is over the list, a key was
    just pressed), rows a refresh would insert are kept aside instead, so nothing moves
    under the operator; ``release()`` lets them in.

    Signals:
        held_changed(int): how many arrivals wait to be shown.
    """

    held_changed = Signal(int)

    def __init__(self, runner: TaskRunner, parent: QObject | None = None) -> None:
        super().__init__(runner, COLUMNS, item_key, self._order_of, parent)
        self.filter = InboxFilter()
        self.hold: Callable[[], bool] | None = None
        self.held: dict[str, InboxItem] = {}
        self._let_in: set[str] = set()  # released keys: inserted whatever hold() says

    def show(self, journal: Journal, f: InboxFilter) -> None:
        """Query the inbox with filter ``f`` (sort and filter run in the core)."""
        self.filter = f
        self._set_held({})
        inbox = journal.inbox
        self.set_query(
            lambda cursor, limit: inbox.list(f, cursor=cursor, limit=limit),
            descending=f.newest_first,
            pick=lambda keys: inbox.pick(f, [k.split(":", 1)[1] for k in keys]),
        )

    def _order_of(self, item: InboxItem) -> tuple:
        """Where a row read on its own goes (the core's page order, core/inbox/service.py):
        by age, or sorted by waiter the agents waiting now first, then by age."""
        if self.filter.sort != "waiter":
            return (item.created_at, item.id)
        rank = waiting.waiter_rank(item.waiter_seen_at, time.time(), self.filter.newest_first)
        return (rank, item.created_at, item.id)

    # ------------------------------------------------------------ held arrivals
    def apply_rows(self, fresh: list[Any]) -> tuple[list[str], list[str]]:
        holding = bool(self._rows) and self.hold is not None and self.hold()
        if holding:
            new = {
                item_key(i): i
                for i in fresh
                if self.row_of(item_key(i)) < 0 and item_key(i) not in self._let_in
            }
            if new:
                fresh = [i for i in fresh if item_key(i) not in new]
                self._set_held({**self.held, **new})
        self._let_in.difference_update(item_key(i) for i in fresh)
        return super().apply_rows(fresh)

    def release(self) -> None:
        """Let the held arrivals in (those still waiting: they are read again)."""
        keys = set(self.held)
        if not keys:
            return
        self._let_in |= keys
        self._set_held({})
        self.patch(keys)

    def _set_held(self, held: dict[str, InboxItem]) -> None:
        changed = len(held) != len(self.held)
        self.held = held
        if changed:
            self.held_changed.emit(len(held))

    def extra_data(self, item: InboxItem, column: int, role: int) -> Any:
        if role == Qt.ItemDataRole.DecorationRole and column == COL_KIND:
            return kind_icon(item.kind.value)
        if role == SECOND_LINE_ROLE:
            return fmt.bounded(second_line(item), 200)
        if role == SAFETY_ROLE:
            return item.safety_class
        if role == Qt.ItemDataRole.AccessibleTextRole:
            return accessible(item)
        if (
            role == Qt.ItemDataRole.ForegroundRole
            and column == COL_EXPIRES
            and item.expires_at is not None
            and item.expires_at - time.time() < URGENT_S
        ):
            return QBrush(QColor("#d23c3c"))
        return None

    def due_items(self, now: float) -> list[InboxItem]:
        """Loaded items whose expiry has passed (the store still says pending)."""
        return [i for i in self.items() if i.expires_at is not None and i.expires_at <= now]
