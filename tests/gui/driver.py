"""A page object over a running desk: open an item and wait for its detail, the steps
tests used to copy from file to file."""

from __future__ import annotations

from typing import Any

from .conftest import WAIT_MS, wait_presented


class Desk:
    """``Desk(qtbot, window)``: what an operator does, each step waiting until it shows."""

    def __init__(self, qtbot: Any, window: Any) -> None:
        self.qtbot, self.window = qtbot, window

    def wait_row(self, model: Any, key: str) -> int:
        self.qtbot.waitUntil(lambda: model.row_of(key) >= 0, timeout=WAIT_MS)
        return model.row_of(key)

    def open_inbox_item(self, key: str, *, presented: bool = False) -> Any:
        """Select the inbox row ``key`` ("approval:apr_…") and wait for its detail; with
        ``presented``, also until it has been on screen (presentation work done)."""
        inbox = self.window.inbox
        inbox.set_current_row(self.wait_row(inbox.model, key))
        item_id = key.split(":", 1)[1]
        detail = inbox.detail

        def shown() -> bool:
            current = detail.current()
            entity = current.entity if current is not None else None
            return entity is not None and \
                getattr(entity, "id", getattr(entity, "key", None)) == item_id

        self.qtbot.waitUntil(shown, timeout=WAIT_MS)
        if presented:
            wait_presented(self.qtbot)
        return detail.current()

    def open_effect(self, key: str) -> Any:
        """Select the effect ``key`` on the Effects page and wait for its detail."""
        page = self.window.effects
        page.table.setCurrentIndex(page.model.index(self.wait_row(page.model, key), 0))
        self.qtbot.waitUntil(lambda: page.effect() is not None and page.effect().key == key,
                             timeout=WAIT_MS)
        return page.effect()

    def settle(self) -> None:
        """Wait until no store call is queued or running."""
        self.qtbot.waitUntil(lambda: self.window.services.runner.pending() == 0,
                             timeout=WAIT_MS)
