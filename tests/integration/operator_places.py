"""Where the scripted operator (operator_session.py) opens an item: its row in the Inbox, or
its run's "Waiting for you" tab, clicked and read as a person would."""

from __future__ import annotations

from typing import Any

from operator_input import TimedOut, button_named, click, wait_until


def open_in_inbox(window: Any, item: Any) -> Any:
    """The item clicked in the Inbox, once read as long as a person reads it."""
    from proctor.gui.decide.items import item_key
    from proctor.gui.decide.settle import SETTLE_S

    window.go("inbox")
    inbox = window.inbox
    key = item_key(item)
    if inbox.model.row_of(key) < 0:
        if key in inbox.model.held:
            show = button_named(inbox, "Show them")
            if show is not None:
                click(show)
            else:
                inbox.show_new()
        wait_until(lambda: inbox.model.row_of(key) >= 0, f"inbox row {key}")
    row = inbox.model.row_of(key)
    table = inbox.table
    index = inbox.model.index(row, 1)
    table.scrollTo(index)
    click(table.viewport(), table.visualRect(index).center())
    detail = inbox.detail

    def shown() -> Any:
        w = detail.current()
        return w if w is not None and w.item is not None and w.item.id == item.id else None

    widget = wait_until(shown, f"the detail of {key}")
    wait_until(lambda: inbox.settle.read_for() >= SETTLE_S, "reading the item")
    return widget


def open_in_run(window: Any, reader: Any, item: Any) -> Any:
    """The item's run page, its "Waiting for you" tab, the item clicked there."""
    from PySide6.QtWidgets import QTabBar

    from proctor.gui.decide.items import item_key
    from proctor.gui.decide.settle import SETTLE_S

    open_run(window, item.run_id)
    detail = window.runs.detail
    pane = detail.pending
    bar = detail.tabs.findChild(QTabBar)
    index = detail.tabs.indexOf(pane)
    click(bar, bar.tabRect(index).center())
    key = item_key(item)

    from proctor.core.models import InboxFilter
    from proctor.gui.runs.pending import ITEM_ROLE

    def find() -> int:
        for r in range(pane.items.rowCount()):
            it = pane.items.item(r).data(ITEM_ROLE)
            if it is not None and item_key(it) == key:
                return r + 1
        return 0

    try:
        r = wait_until(find, f"{key} in the run's Waiting for you") - 1
    except TimedOut as exc:
        listed = [
            item_key(pane.items.item(n).data(ITEM_ROLE)) for n in range(pane.items.rowCount())
        ]
        still = reader.inbox.pick(InboxFilter(), [item.id])
        raise TimedOut(
            f"{exc}: run {detail.run_id} (facts read: {detail.facts is not None}) lists "
            f"{listed[:6]}; the journal says it is {'still' if still else 'no longer'} waiting"
        ) from None
    idx = pane.items.index(r, 0)
    click(pane.list.viewport(), pane.list.visualRect(idx).center())

    def shown() -> Any:
        w = pane.detail.current()
        return w if w is not None and w.item is not None and w.item.id == item.id else None

    widget = wait_until(shown, f"the run tab's detail of {key}")
    settle = widget.ctx.settle
    if settle is not None:
        wait_until(lambda: settle.read_for() >= SETTLE_S, "reading the item")
    else:
        from PySide6.QtTest import QTest

        QTest.qWait(int(SETTLE_S * 1000) + 50)  # as a person reads it
    return widget


def open_run(window: Any, run_id: str) -> None:
    window.follow_link(f"proctor://run/{run_id}")
    detail = window.runs.detail
    wait_until(lambda: detail.run is not None and detail.run.id == run_id, f"run {run_id}")
