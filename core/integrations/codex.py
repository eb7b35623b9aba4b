"""``proctor hook codex``: a Codex CLI ``PreToolUse`` command hook answered from the desk.

Codex CLI (openai/codex, hooks on by default since 0.124) runs command hooks with the same
event JSON on stdin as Claude Code (``session_id``, ``cwd``, ``hook_event_name``,
``tool_name``, ``tool_input``, ``tool_use_id``, plus ``turn_id``, ``model``,
``permission_mode``), so the event is parsed and filed by the Claude Code hook's code
(:mod:`.claude_code`): one approval per tool call, one run per Codex session.

What differs is what Codex does with the answer. Its ``PreToolUse`` honours only a denial
(``permissionDecision: "deny"`` with a reason, or exit code 2 with the reason on stderr); it
treats ``allow``, ``ask``, ``updatedInput`` and ``additionalContext`` as unsupported and
*fails open* — the tool runs — and so does a hook that crashes, prints invalid JSON or is
killed by Codex's timeout (``codex-rs/hooks/src/events/pre_tool_use.rs``:
``unsupported_permission_decision_fails_open``). So this hook answers:

- approved -> prints nothing: Proctor does not stand in the way (Codex's own sandbox and
  approval policy still apply to the call);
- approved with an edit -> ``deny``, naming the edited input: Codex cannot run another input
  than the one it asked about, so the model must ask again with the edited one;
- denied or expired -> ``deny`` with the operator's reason (the model sees it);
- no decision within ``--timeout``, the request withdrawn, or any error of the hook itself ->
  ``deny`` (never "ask", which Codex would run): the call does not happen without a person.

Keep ``--timeout`` below the hook's ``timeout`` in Codex's hooks.json: a hook Codex kills
itself fails open.
"""

from __future__ import annotations

import json
from typing import Any

from .claude_code import EVENT, MAX_REASON_OUT, HookInputError, file_and_wait, parse_event
from .gates import Verdict


def deny(reason: str) -> dict[str, Any]:
    return {
        "hookSpecificOutput": {
            "hookEventName": EVENT,
            "permissionDecision": "deny",
            "permissionDecisionReason": reason[:MAX_REASON_OUT],
        }
    }


def refuse(reason: str) -> dict[str, Any]:
    """The hook's own fallback: a denial saying why (Codex runs the call on anything else)."""
    return deny(
        f"Proctor: {reason}; denied, since Codex would run the call without a "
        "decision (ask it again once the desk can decide)"
    )


def decide(
    raw: str,
    journal_path: str | None,
    *,
    timeout: float = 55.0,
    agent: str = "codex",
    project: str = "codex",
    trust: Any = None,
) -> dict[str, Any] | None:
    """The JSON to print (None: print nothing, the call goes on). Never raises for bad input
    or a journal problem: those deny."""
    try:
        event = parse_event(raw)
    except HookInputError as exc:
        return refuse(str(exc))
    if event is None:
        return None
    if not journal_path:
        return refuse("no journal given (--journal or PROCTOR_JOURNAL)")
    try:
        verdict = file_and_wait(
            event,
            journal_path,
            timeout=timeout,
            agent=agent,
            project=project,
            trust=trust,
            runtime="codex",
            label="Codex",
        )
    except Exception as exc:  # noqa: BLE001 - the hook's own failure never lets a call run
        return refuse(
            f"the desk could not take the request ({type(exc).__name__}: {str(exc)[:300]})"
        )
    return answer(verdict, timeout)


def answer(v: Verdict, timeout: float) -> dict[str, Any] | None:
    who = v.decided_by or "the desk"
    if v.status == "approved" and not v.edited:
        return None
    if v.status == "approved":
        edited = json.dumps(v.args, ensure_ascii=True)[:1000]
        return deny(
            f"the operator on the Proctor desk ({who}) approved an edited input, which "
            f"Codex cannot run in place of this one: {edited}"
            + (f" ({v.reason})" if v.reason else "")
            + "; ask again with it"
        )
    if v.status in ("denied", "expired"):
        return deny(f"denied on the Proctor desk by {who}: {v.reason or 'no reason given'}")
    if v.status == "cancelled":
        return refuse(f"the request was withdrawn ({v.reason or 'no reason'})")
    return refuse(f"no decision within {timeout:g} s")


__all__ = ["answer", "decide", "deny", "refuse"]
