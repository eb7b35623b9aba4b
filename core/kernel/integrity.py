"""Digest re-checks shared by every read path and by ``proctor verify``.

An approval and an effect carry ``action_digest = sha256(canonical(action))``. Triggers make
both columns immutable, but a process that drops the triggers can rewrite the action text:
every read that shows or acts on the item recomputes the digest here (``action_tampered``),
the models carry the answer as ``tampered``, and the write paths that act on an item refuse
it with ``errors.Tampered`` (``refuse_tampered``).

Receipts and memory mutations are digested here too, so the write path and ``verify``
compute one body.
"""

from __future__ import annotations

import json
from typing import Any

from proctor.core import errors

from .canonical import chain_digest, digest_of, sha256_hex


def action_tampered(action_text: str | None, action_digest: str | None) -> bool:
    """True when the stored action is not the one ``action_digest`` names. A row without a
    digest (an older journal read without upgrading) cannot be checked: not tampered."""
    if action_digest is None:
        return False
    if action_text is None:
        return True
    if sha256_hex(action_text) == action_digest:  # stored canonical: the usual, fast path
        return False
    try:
        return digest_of(json.loads(action_text)) != action_digest
    except (ValueError, errors.ValidationError):
        return True


def refuse_tampered(kind: str, item_id: str, row: Any) -> None:
    """Raise ``Tampered`` naming the item when ``row``'s action does not match its digest."""
    if action_tampered(row.action, getattr(row, "action_digest", None)):
        raise errors.Tampered(
            f"{kind} {item_id} was tampered with: its stored action no longer matches the "
            f"digest {str(row.action_digest)[:12]}… it was requested with",
            kind=kind,
            id=item_id,
        )


def receipt_digest_body(row: Any) -> dict:
    """What a receipt's ``digest`` covers (``evidence`` parsed)."""
    get = row.get if isinstance(row, dict) else lambda k: getattr(row, k)
    evidence = get("evidence")
    return {
        "effect_key": get("effect_key"),
        "kind": get("kind"),
        "status": get("status"),
        "external_id": get("external_id"),
        "evidence": json.loads(evidence) if isinstance(evidence, str) else evidence,
        "created_at": get("created_at"),
    }


MUTATION_KEYS = (
    "id",
    "entry_id",
    "operation",
    "actor",
    "reason",
    "version",
    "before_hash",
    "after_hash",
    "before_content",
    "after_content",
    "run_id",
    "idempotency_key",
    "request_digest",
    "created_at",
    "event_sequence",
)


def mutation_digest(prev_digest: str, row: Any) -> str:
    """One link of an entry's mutation chain: every column but the two digests."""
    get = row.get if isinstance(row, dict) else lambda k: getattr(row, k)
    return chain_digest(prev_digest, {k: get(k) for k in MUTATION_KEYS})


__all__ = ["action_tampered", "mutation_digest", "receipt_digest_body", "refuse_tampered"]
