"""When approving takes a second, deliberate step: the one rule the desk's confirmation
(gui/decide/confirm.py) and ``proctor approve`` (asks on a terminal, wants ``--yes`` in a
script) both follow, so they cannot drift.

``risks`` says why approving an approval with a scope needs the second step; an empty list
means it does not. By default it asks for destructive, financial and external-side-effect
actions, for anything past or within ``NEAR_EXPIRY_S`` of its expiry, and for any decision
that creates a standing rule (scope run or space). An action of a safety class Proctor does
not know always asks; so does one longer than the place that shows it can show at once
(``shown_chars``). Denying never asks: it lets nothing happen. Agent text in the reasons is
bounded and its invisible characters are shown as escapes.
"""

from __future__ import annotations

from proctor.core.kernel.canonical import pretty_json
from proctor.core.kernel.safe_text import bounded, span
from proctor.core.models import Approval, ApprovalScope, SafetyClass

NEAR_EXPIRY = "near_expiry"  # approving within NEAR_EXPIRY_S of the expiry, or past it
STANDING_RULE = "standing_rule"  # a decision that also allows the action for a run/space
NEAR_EXPIRY_S = 120.0
SAFETY_CLASSES = frozenset(c.value for c in SafetyClass)
# What may ask: the safety classes and the two situations; what asks unless the desk's
# preference says otherwise (the CLI always uses the default).
CONFIRM_TOKENS = SAFETY_CLASSES | {NEAR_EXPIRY, STANDING_RULE}
DEFAULT_CONFIRM = frozenset(
    {
        SafetyClass.EXTERNAL_SIDE_EFFECT.value,
        SafetyClass.FINANCIAL.value,
        SafetyClass.DESTRUCTIVE.value,
        NEAR_EXPIRY,
        STANDING_RULE,
    }
)
SCOPE_WORDS = {ApprovalScope.RUN: "the rest of this run", ApprovalScope.SPACE: "this space"}
ARTICLE_AN = ("a", "e", "i", "o", "u")


def risks(
    approval: Approval,
    scope: ApprovalScope | str,
    now: float,
    confirm: frozenset[str] = DEFAULT_CONFIRM,
    shown_chars: int | None = None,
    detected: tuple[str, str] | None = None,
) -> list[str]:
    """Why approving ``approval`` with ``scope`` at ``now`` needs a second step, one sentence
    each (empty: it does not). ``confirm`` holds the tokens that ask (``CONFIRM_TOKENS``).
    ``detected``: (class, sentence) when the risk lens reads the action as a stronger class
    than the agent declared (``proctor.core.lens.Lens``): it is confirmed as that class is."""
    scope = ApprovalScope(scope)
    found = []
    safety = str(getattr(approval.safety_class, "value", approval.safety_class) or "")
    if safety not in SAFETY_CLASSES:
        found.append(f"Its safety class “{bounded(safety, 40)}” is not one Proctor knows.")
    elif safety in confirm:
        found.append(f"It is {a_or_an(safety)} action.")
    if detected is not None and detected[0] in confirm and detected[0] != safety:
        found.append(
            f"The agent declared it {a_or_an(safety)} action, but it reads as "
            f"{a_or_an(detected[0])} one: {bounded(detected[1], 200)}."
        )
    if NEAR_EXPIRY in confirm and approval.expires_at is not None:
        left = approval.expires_at - now
        if left <= 0:
            found.append(f"It is past its expiry (expired {span(-left)} ago).")
        elif left <= NEAR_EXPIRY_S:
            found.append(f"It expires in {span(left)}.")
    if STANDING_RULE in confirm and scope in SCOPE_WORDS:
        found.append(
            f"It creates a standing rule: {bounded(approval.action_name, 80)} on this resource "
            f"is allowed without asking for {SCOPE_WORDS[scope]}."
        )
    if shown_chars is not None:
        size = len(pretty_json(approval.action))
        if size > shown_chars:  # always asks: only the start of such an action is shown
            found.append(
                f"Its action is {size:,} characters long; the desk's boxes show the "
                f"first {shown_chars:,}. Read the rest with Show all or Copy first."
            )
    return found


def a_or_an(safety: str) -> str:
    """ "a destructive", "an external side effect": a safety class in words, with its article."""
    words = safety.replace("_", " ")
    return f"{'an' if words.startswith(ARTICLE_AN) else 'a'} {words}"


__all__ = ["CONFIRM_TOKENS", "DEFAULT_CONFIRM", "NEAR_EXPIRY", "NEAR_EXPIRY_S", "risks"]
