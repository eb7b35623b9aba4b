"""One operator write per item of a batch (bulk approve, deny, undo): each in its own
transaction, a per-item result for each (a refusal is that item's result, not the batch's)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from proctor.core import errors
from proctor.core.models import BulkResult


def each(
    items: list[tuple[str, int]],
    request_id: str | None,
    write: Callable[[str, int, str | None], Any],
) -> list[BulkResult]:
    """``write(id, version, request_id)`` for each (id, version) of ``items``; the item's
    request id is the batch's with the item's id after it (a replay replays each)."""
    results = []
    for item_id, version in items:
        rid = f"{request_id}:{item_id}" if request_id else None
        try:
            done = write(item_id, version, rid)
        except errors.ProctorError as err:
            results.append(
                BulkResult(id=item_id, ok=False, error=str(err), error_type=type(err).__name__)
            )
            continue
        results.append(
            BulkResult(
                id=item_id,
                ok=True,
                version=getattr(done, "version", None),
                hold_until=getattr(done, "hold_until", None),
            )
        )
    return results
