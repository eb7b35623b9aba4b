"""What a question's decision row records, and how it is read back (issue 37).

An answer's decision is ``{"answer": <the response>, "hold_until": <when the hold ends, or
null>}``; a dismissal's is the dismissal (``{"dismissed": true, "reason": ...}``) with
``"hold_until"`` added. So the hold is signed with the answer (as an approval's is: ``|
{"hold_until": ...}`` in ``Approvals.decide``), and no answer reads as an undo
(``decisions.checks.undone``): whatever the response, the answer's payload is this object.

Journals written before recorded the response itself as the decision (no hold: they had
none, or it was not signed). :func:`said` reads either, against the row's response: the
nested form only when its ``answer`` is the row's response (a value is never an object
holding itself, so the two readings never both fit)."""

from __future__ import annotations

from typing import Any

from proctor.core.decisions.signing import same

ANSWER_KEYS = {"answer", "hold_until"}


def answer_decision(response: Any, hold_until: float | None) -> dict:
    return {"answer": response, "hold_until": hold_until}


def dismissal_decision(dismissal: dict, hold_until: float | None) -> dict:
    return dismissal | {"hold_until": hold_until}


def said(decision: Any, response: Any) -> tuple[Any, float | None]:
    """(the response, the hold's end) that ``decision`` (a question's decision payload)
    records, read against ``response`` (the row's, parsed)."""
    if isinstance(decision, dict) and "hold_until" in decision:
        if set(decision) == ANSWER_KEYS and same(decision["answer"], response):
            return decision["answer"], decision["hold_until"]
        if decision.get("dismissed") is True:
            rest = {k: v for k, v in decision.items() if k != "hold_until"}
            if same(rest, response):
                return rest, decision["hold_until"]
    return decision, None  # written before the hold was signed: the response itself


def disagrees(decision: Any, response: Any, hold_until: float | None) -> str | None:
    """The row's field ``decision`` does not record (``response``, ``hold_until``), or None."""
    recorded, hold = said(decision, response)
    if not same(recorded, response):
        return "response"
    if hold != hold_until:
        return "hold_until"
    return None
