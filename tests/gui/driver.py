"""A page object over a running desk: what an operator does — open an item, decide,
answer, wait until the views show a change — each step waiting until it shows, instead of
the copies tests used to carry from file to file."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt

from .conftest import WAIT_MS, settled, wait_presented

LEFT = Qt.MouseButton.LeftButton


class Desk:
    """``Desk(qtbot, window)``: steps on a started desk window."""

    def __init__(self, qtbot: Any, window: Any) -> None:
        self.qtbot, self.window = qtbot, window

    # ------------------------------------------------------------ rows
    def wait_row(self, model: Any, key: str) -> int:
        self.qtbot.waitUntil(lambda: model.row_of(key) >= 0, timeout=WAIT_MS)
        return model.row_of(key)

    def wait_gone(self, model: Any, key: str) -> None:
        """Wait until the row ``key`` left ``model`` (the refresh after a change set)."""
        self.qtbot.waitUntil(lambda: model.row_of(key) < 0, timeout=WAIT_MS)

    def click_row(self, view: Any, row: int) -> None:
        """A real click on ``row`` of ``view`` (scrolled into sight first)."""
        index = view.model().index(row, 0)
        view.scrollTo(index)
        self.qtbot.mouseClick(view.viewport(), LEFT, pos=view.visualRect(index).center())

    # ------------------------------------------------------------ inbox
    def inbox_row(self, key: str) -> int:
        """Wait until ``key`` ("approval:apr_…") is an inbox row; held behind the "N new"
        bar (a key was pressed a moment ago), the operator lets it in with the bar's Show."""
        inbox = self.window.inbox
        model = inbox.model

        def arrived() -> bool:
            if key in model.held:
                inbox.show_new()
            return model.row_of(key) >= 0

        self.qtbot.waitUntil(arrived, timeout=WAIT_MS)
        return model.row_of(key)

    def select_inbox_item(self, key: str) -> None:
        """Make ``key`` the inbox's current row (its detail starts loading)."""
        self.window.inbox.set_current_row(self.inbox_row(key))

    def open_inbox_item(self, key: str, *, presented: bool = False) -> Any:
        """Select the inbox row ``key`` and wait for its detail; with ``presented``, also
        until it has been on screen (presentation work done). Returns the detail widget."""
        self.select_inbox_item(key)
        item_id = key.split(":", 1)[1]
        detail = self.window.inbox.detail

        def shown() -> bool:
            current = detail.current()
            entity = current.entity if current is not None else None
            return (
                entity is not None
                and getattr(entity, "id", getattr(entity, "key", None)) == item_id
            )

        self.qtbot.waitUntil(shown, timeout=WAIT_MS)
        if presented:
            wait_presented(self.qtbot)
        return detail.current()

    def open_question(self, interaction_id: str) -> Any:
        """Open the question and wait until its form is built. Returns the detail."""
        detail = self.open_inbox_item(f"question:{interaction_id}")
        self.qtbot.waitUntil(lambda: detail.view is not None, timeout=WAIT_MS)
        return detail

    def decide(self, approval_id: str, *, approve: bool = True) -> bool:
        """Open the approval, then Approve (or Deny) through the registry as a key would;
        False if the command was not enabled."""
        self.open_inbox_item(f"approval:{approval_id}", presented=True)
        return self.window.registry.trigger("inbox.approve" if approve else "inbox.deny")

    def answer(self, detail: Any) -> None:
        """Send the question's answer as filled in: Submit, once it may be pressed (enabled,
        and on screen long enough that the click is a deliberate one)."""
        self.qtbot.waitUntil(detail.submit_button.isEnabled, timeout=WAIT_MS)
        settled(self.qtbot, detail)  # a click on what has just appeared does nothing
        self.qtbot.mouseClick(detail.submit_button, LEFT)

    # ------------------------------------------------------------ other pages
    def open_effect(self, key: str) -> Any:
        """Select the effect ``key`` on the Effects page and wait for its detail."""
        page = self.window.effects
        page.table.setCurrentIndex(page.model.index(self.wait_row(page.model, key), 0))
        self.qtbot.waitUntil(
            lambda: page.effect() is not None and page.effect().key == key, timeout=WAIT_MS
        )
        return page.effect()

    def open_memory_entry(self, entry_id: str, *, click: bool = False) -> Any:
        """The Memory page with entry ``entry_id`` shown (a real click with ``click``) and
        presented. Returns the entry detail."""
        self.window.go("memory")
        page = self.window.memory
        row = self.wait_row(page.model, entry_id)
        if click:
            self.click_row(page.table, row)
        else:
            page.table.setCurrentIndex(page.model.index(row, 0))
        self.qtbot.waitUntil(
            lambda: page.entry.data is not None and page.entry.data.entry.id == entry_id,
            timeout=WAIT_MS,
        )
        wait_presented(self.qtbot)
        return page.entry

    def open_memory_conflict(self, item_id: str) -> Any:
        """The Memory page's review of conflict ``item_id`` (clicked), presented."""
        page = self.window.memory
        self.click_row(page.conflicts_table, self.wait_row(page.conflicts, item_id))
        self.qtbot.waitUntil(
            lambda: page.review.data is not None and page.review.data.item.id == item_id,
            timeout=WAIT_MS,
        )
        wait_presented(self.qtbot)
        return page.review

    # ------------------------------------------------------------ waiting
    def settle(self) -> None:
        """Wait until no store call is queued or running."""
        self.qtbot.waitUntil(lambda: self.window.services.runner.pending() == 0, timeout=WAIT_MS)

    def watcher_settled(self) -> None:
        """Wait until the change feed's watcher has no read or poll in flight."""
        watcher = self.window.services.watcher
        self.qtbot.waitUntil(lambda: not watcher.reading(), timeout=WAIT_MS)
