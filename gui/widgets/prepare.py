"""Agent data made ready to show, off the GUI thread when it is large: escaping, bounding
and breaking a multi-MB argument into display lines is pure Python that took the desk's
event loop for a second and more; on the presentation pool (``infra.tasks``) it does not.
Small data is prepared in place (the result is there at once, as before)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from PySide6.QtCore import QObject

from ..infra.tasks import PresentationPool, Ticket

INLINE_CHARS = 100_000  # agent text up to this size is prepared on the GUI thread (a few ms)
T = TypeVar("T")


def text_size(value: Any, cap: int = INLINE_CHARS) -> int:
    """The characters of text in ``value`` (keys and strings of any depth), counted up to
    just past ``cap`` (a 3 MB action is not walked whole to learn it is large)."""
    total, stack = 0, [value]
    while stack and total <= cap:
        item = stack.pop()
        if isinstance(item, str):
            total += len(item)
        elif isinstance(item, dict):
            total += sum(len(str(k)) for k in item)
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            total += len(item)
            stack.extend(item)
        else:
            total += 8
    return total


def prepare(
    work: Callable[[], T],
    on_done: Callable[[T], None],
    owner: QObject,
    *,
    size: int,
    inline: int = INLINE_CHARS,
) -> Ticket | None:
    """``on_done(work())``: at once when ``size`` is at most ``inline``, else ``work`` on a
    presentation worker and ``on_done`` back on the GUI thread (while ``owner`` lives and the
    returned ticket is not cancelled — cancel it when the view moves on). Work that costs
    more per character than escaping (parsing a patch) passes a smaller ``inline``."""
    if size <= inline:
        on_done(work())
        return None
    return PresentationPool.instance().run(lambda _ticket: work(), on_done=on_done, owner=owner)
