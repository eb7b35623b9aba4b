"""``proctor hook claude-code``: a Claude Code ``PreToolUse`` command hook answered from the desk.

Claude Code runs the hook with the event as JSON on stdin (``session_id``, ``cwd``,
``hook_event_name``, ``tool_name``, ``tool_input``, ``tool_use_id``). The hook files one Proctor
approval per tool call (action ``{"tool": tool_name, "args": tool_input}``, in one run per
Claude Code session), waits for the operator and prints::

    {"hookSpecificOutput": {"hookEventName": "PreToolUse",
                            "permissionDecision": "allow" | "deny" | "ask",
                            "permissionDecisionReason": "...",
                            "updatedInput": {...}}}   # only when the operator edited it

- approved -> ``allow`` (``updatedInput`` = the edited arguments when the operator edited them)
- denied or expired -> ``deny`` with the operator's reason (Claude sees it)
- no decision within ``--timeout``, the request withdrawn, or any error of the hook itself
  (bad input, no journal, a locked journal, a crash) -> ``ask``: Claude Code falls back to
  its own permission prompt. The hook never answers ``allow`` unless a person (or a rule a
  person made) approved exactly this tool call. A request left without a decision is
  withdrawn, so the desk cannot approve what nobody waits for any more.

With ``--trust FILE`` (or ``PROCTOR_TRUSTED_OPERATORS``) a decision no trusted operator signed
answers ``ask``, never ``allow`` or ``deny``.

The same tool call delivered twice (same session and ``tool_use_id``) joins the same request.
Any other event than ``PreToolUse`` prints nothing (no decision: Claude Code carries on as
without the hook).
"""

from __future__ import annotations

import json
import os
import socket
from typing import Any

from proctor.core import errors
from proctor.core.journal import Journal
from proctor.core.kernel import origin as origins
from proctor.core.models import Actor

from .gates import Verdict, stable_id, tool_action, wait_or_withdraw, withdraw

MAX_STDIN = 4 * 1024 * 1024
MAX_REASON_OUT = 2000
EVENT = "PreToolUse"


class HookInputError(ValueError):
    """The event on stdin is not a PreToolUse event this hook can file."""


def output(decision: str, reason: str, updated_input: dict | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "hookEventName": EVENT,
        "permissionDecision": decision,
        "permissionDecisionReason": reason[:MAX_REASON_OUT],
    }
    if updated_input is not None:
        out["updatedInput"] = updated_input
    return {"hookSpecificOutput": out}


def ask(reason: str) -> dict[str, Any]:
    return output("ask", f"Proctor: {reason}")


def parse_event(raw: str) -> dict[str, Any] | None:
    """The event, or None for an event this hook does not decide. Raises HookInputError."""
    if len(raw) > MAX_STDIN:
        raise HookInputError("the hook event is larger than 4 MB")
    try:
        event = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise HookInputError(f"the hook event is not JSON ({type(exc).__name__})") from None
    if not isinstance(event, dict):
        raise HookInputError("the hook event is not a JSON object")
    name = event.get("hook_event_name")
    if name is not None and name != EVENT:
        return None
    tool, tool_input = event.get("tool_name"), event.get("tool_input")
    if not isinstance(tool, str) or not tool.strip() or len(tool) > 200:
        raise HookInputError("the hook event has no usable tool_name")
    if not isinstance(tool_input, dict):
        raise HookInputError("the hook event's tool_input is not a JSON object")
    for key in ("session_id", "tool_use_id", "cwd"):
        if event.get(key) is not None and not isinstance(event[key], str):
            raise HookInputError(f"the hook event's {key} is not a string")
    return event


def decide(
    raw: str,
    journal_path: str | None,
    *,
    timeout: float = 55.0,
    agent: str = "claude-code",
    project: str = "claude-code",
    trust: Any = None,
) -> dict[str, Any] | None:
    """The hook's whole job: the JSON to print (None: print nothing). Never raises for bad
    input or a journal problem: those answer ``ask``."""
    try:
        event = parse_event(raw)
    except HookInputError as exc:
        return ask(f"{exc}; asking instead")
    if event is None:
        return None
    if not journal_path:
        return ask("no journal given (--journal or PROCTOR_JOURNAL); asking instead")
    try:
        verdict = file_and_wait(
            event, journal_path, timeout=timeout, agent=agent, project=project, trust=trust
        )
    except Exception as exc:  # noqa: BLE001 - the hook's own failure never allows
        return ask(
            f"the desk could not take the request ({type(exc).__name__}: "
            f"{str(exc)[:300]}); asking instead"
        )
    return answer(verdict, timeout)


def file_and_wait(
    event: dict[str, Any],
    journal_path: str,
    *,
    timeout: float,
    agent: str,
    project: str,
    trust: Any = None,
    runtime: str = "claude-code",
    label: str = "Claude Code",
) -> Verdict:
    """File the event's tool call as an approval (one run per ``runtime`` session) and wait
    for the operator; shared by the Claude Code and Codex hooks."""
    from pathlib import Path

    on_server = "://" in journal_path and not journal_path.startswith("sqlite:///")
    where: str | Path = journal_path if on_server else Path(journal_path).expanduser()
    if not on_server and not Path(where).exists():  # a server says itself what is missing
        raise errors.NotFound(f"no journal at {journal_path}")
    session = event.get("session_id") or "unknown-session"
    with Journal.open(where, actor=Actor.agent(agent), create=False, trust=trust) as j:
        prefix = "run_cc_" if runtime == "claude-code" else f"run_{runtime}_"
        run = j.runs.start(
            project,
            f"{label} session {session[:60]}",
            agent=agent,
            run_id=stable_id(prefix, runtime, session),
            metadata={"via": runtime, "session_id": session, "cwd": event.get("cwd")},
        )
        tool_use_id = event.get("tool_use_id")
        approval = j.approvals.request(
            run.id,
            tool_action(event["tool_name"], event["tool_input"]),
            reason=f"{label} wants to use {event['tool_name'][:100]}"
            + (f" in {event['cwd'][:300]}" if event.get("cwd") else ""),
            request_key=(f"{runtime}:{session}:{tool_use_id}" if tool_use_id else None),
            origin=origins.make(
                runtime=runtime,
                tool=str(event["tool_name"]),
                pid=os.getppid(),  # the agent that ran this hook
                host=socket.gethostname(),
                client=f"session {session}",
            ),
        )
        try:
            return wait_or_withdraw(
                j,
                approval.id,
                timeout,
                f"no decision within {timeout:g} s; the hook stopped waiting",
            )
        except BaseException:  # killed by Claude Code's own timeout, Ctrl-C: nobody waits
            withdraw(j, approval.id, "the hook was stopped before a decision")
            raise


def answer(v: Verdict, timeout: float) -> dict[str, Any]:
    who = v.decided_by or "the desk"
    if v.status == "approved":
        edited = v.args if v.edited and isinstance(v.args, dict) else None
        text = f"approved on the Proctor desk by {who}" + (f": {v.reason}" if v.reason else "")
        if edited is not None:
            text += " (the operator edited the input)"
        return output("allow", text, edited)
    if v.status in ("denied", "expired"):
        return output(
            "deny", f"denied on the Proctor desk by {who}: {v.reason or 'no reason given'}"
        )
    if v.status == "cancelled":
        return ask(f"the request was withdrawn ({v.reason or 'no reason'}); asking instead")
    return ask(f"no decision within {timeout:g} s; asking instead")


__all__ = ["HookInputError", "answer", "ask", "decide", "parse_event"]
