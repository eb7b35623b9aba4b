"""Plain-text output of the operator commands.

Agent-supplied text is data: every value a line or table prints goes through ``clean`` (one
escaping function: control characters, ESC sequences, bidi overrides and other invisible
code points are printed as visible escapes, so no agent can move the cursor, retitle or clear
the terminal, reorder a line or forge a table row), and long text is shortened unless --full
is given. Every command suggested for pasting quotes its words with ``shell_word``.
"""

from __future__ import annotations

import difflib
import json
import shlex
import shutil
import sys
import time
from typing import Any

from proctor.core.kernel import waiting
from proctor.core.kernel.safe_text import INVISIBLE_OR_BREAK, is_printable, json_escaped, visible

ID_HELP = {
    "approval": "an approval id (apr_…)",
    "question": "a question id (int_…)",
    "conflict": "a memory conflict id (rec_…)",
    "run": "a run id (run_…)",
    "effect": "an effect key",
    "rule": "a rule id (rule_…)",
    "policy": "a policy id (pol_…)",
}
LIMIT = 2000  # characters per field unless --full
FULL = "use --full"  # how to see the rest, where the command has --full
HINT_MAX = 2000  # a suggested answer longer than this is described instead


def clean(text: Any, limit: int | None = None, *, one_line: bool = False, more: str = FULL) -> str:
    """Terminal-safe text: control and invisible characters escaped, optionally shortened.
    ``one_line`` also shows newlines, tabs and carriage returns as \\n, \\t and \\r (a value in
    a table or on one line never starts a new one); otherwise newlines stay, tabs become four
    spaces and a carriage return is shown as \\r (it would overwrite the line)."""
    text = "" if text is None else str(text)
    if one_line:
        result = visible(text, breaks=True)
    else:
        result = visible(text).replace("\r", "\\r").replace("\t", "    ")
    if limit is not None and len(result) > limit:
        rest = len(result) - limit
        result = result[:limit] + f"… [{rest:,} more characters{'; ' + more if more else ''}]"
    return result


def ident(text: Any) -> str:
    """An id, key or name on one line, escaped."""
    return clean(text, one_line=True)


def shell_word(text: str) -> str:
    """``text`` as one word to paste into a POSIX shell, and safe to print to a terminal.
    Printable text is quoted with ``shlex.quote``; text with control, invisible or line-break
    characters is written in ANSI-C quoting ($'…', bash, zsh and ksh), with those characters
    and any backslash or quote as \\xHH escapes of their UTF-8 bytes."""
    if is_printable(text):
        return shlex.quote(text)

    def esc(ch: str) -> str:
        if ch in "\\'" or INVISIBLE_OR_BREAK.match(ch):
            return "".join(f"\\x{b:02x}" for b in ch.encode("utf-8", "surrogatepass"))
        return ch

    return "$'" + "".join(esc(ch) for ch in text) + "'"


def last_word(text: str) -> str:
    """``shell_word(text)`` as a command's last positional argument: after ``--`` when it
    starts with "-", so that it is never taken for an option."""
    return f"-- {shell_word(text)}" if text.startswith("-") else shell_word(text)


def json_line(value: Any) -> str:
    """``value`` as one line of JSON text with invisible characters escaped (\\uXXXX)."""
    return json_escaped(json.dumps(value, ensure_ascii=False, sort_keys=True))


def when(t: float | None) -> str:
    if t is None:
        return "-"
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t))


def age(t: float, now: float) -> str:
    secs = max(0.0, now - t)
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if secs >= size:
            return f"{int(secs // size)}{unit}"
    return f"{int(secs)}s"


def pretty(value: Any, limit: int | None) -> str:
    text = json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True)
    return clean(text, limit)


def suggest(cmd: str, note: str = "") -> None:
    """Print a command to paste (its words already quoted by ``shell_word``); a note goes
    after a shell comment sign, so pasting the whole line runs only the command."""
    print(f"next: {cmd}" + (f"  # {clean(note, one_line=True)}" if note else ""))


def indent(text: str, prefix: str = "  ") -> str:
    return "\n".join(prefix + line for line in text.splitlines()) or prefix


def width() -> int | None:
    """The terminal's width, or None when the output goes to a pipe or a file."""
    if not sys.stdout.isatty():
        return None
    return max(60, shutil.get_terminal_size((120, 24)).columns)


def table(rows: list[list[str]], header: list[str]) -> None:
    """Print aligned columns; every cell is escaped here (``clean``, one line) whatever the
    caller did, so no value can break the table or reach the terminal raw."""
    rows = [[clean(c, one_line=True) for c in row] for row in rows]
    sizes = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header) - 1)]
    room = width()
    for row in [header, *rows]:
        cells = [c.ljust(sizes[i]) for i, c in enumerate(row[:-1])]
        line = "  ".join([*cells, row[-1]])
        print(line if room is None or len(line) <= room else line[: room - 1] + "…")


# ---------------------------------------------------------------- lists


def inbox(page: Any, counts: dict, now: float, what: dict[str, str] | None = None) -> None:
    """The inbox as a table: each item's safety class and, for an approval, what it would
    do (``what``: tool and resource by id, e.g. a hook request's command) before its
    summary."""
    what = what or {}
    rows = [
        [
            i.kind.value,
            shorten(ident(i.id), 60),
            age(i.created_at, now),
            cell(i.safety_class or "-", 24),
            cell(i.agent, 24),
            cell(f"{i.project}/{i.space}", 32),
            waiter_cell(i, now),
            cell(f"{what[i.id]} — {i.summary}" if what.get(i.id) else i.summary, 400),
        ]
        for i in page.items
    ]
    if rows:
        table(rows, ["KIND", "ID", "AGE", "SAFETY", "AGENT", "WHERE", "WAITER", "SUMMARY"])
    total = sum(counts.values())
    parts = ", ".join(f"{k.value} {v}" for k, v in counts.items())
    print(f"{len(rows)} shown; {total} waiting ({parts})")
    if page.next_cursor:
        print(f"more: --cursor {shell_word(page.next_cursor)}")


def waiter_cell(item: Any, now: float) -> str:
    """Whether the requesting agent waits for an approval or a question, in core's words
    (``waiting.waiter_cell``: now, 12m ago, nobody waited); ``-`` for other kinds."""
    if item.kind.value not in waiting.WAITED_KINDS:
        return "-"
    return waiting.waiter_cell(item.waiter_seen_at, now)


def waiter_line(item: Any, now: float) -> None:
    """``show``'s line on whether the requesting agent waits for its open request."""
    field("waiter", waiting.waiter_words(item.waiter_seen_at, now))


def runs(page: Any, now: float) -> None:
    rows = [
        [
            shorten(ident(r.id), 60),
            r.status.value,
            age(r.created_at, now),
            cell(r.agent, 24),
            cell(f"{r.project}/{r.space}", 32),
            str(r.open_items),
            cell(r.title, 200),
        ]
        for r in page.items
    ]
    if rows:
        table(rows, ["ID", "STATUS", "AGE", "AGENT", "WHERE", "OPEN", "TITLE"])
    print(f"{len(rows)} runs shown")
    if page.next_cursor:
        print(f"more: --cursor {shell_word(page.next_cursor)}")


def timeline(run: Any, events: list, next_after: int | None, full: bool) -> None:
    print(f"{ident(run.id)}  [{run.status.value}]  {clean(run.title, 200, one_line=True)}")
    for e in events:
        payload = json.dumps(e.payload, ensure_ascii=False, sort_keys=True)
        text = clean(payload, None if full else 160, one_line=True)
        print(
            f"#{e.sequence:<5} {when(e.created_at)}  {clean(e.actor, 40, one_line=True):<24} "
            f"{clean(e.type, 80, one_line=True, more=''):<26} {text}"
        )
    if next_after is not None:
        print(f"more: --after {next_after}")


# ---------------------------------------------------------------- show


def field(label: str, value: Any, limit: int | None = LIMIT) -> None:
    """``label`` and ``value`` (escaped by ``clean`` here: pass raw agent text)."""
    text = clean(value, limit)
    if "\n" in text:
        print(f"{label}:")
        print(indent(text, "    "))
    else:
        print(f"{label:<12}{text}")


def section(title: str, body: str) -> None:
    print(f"\n{title}:")
    print(indent(body))


def show(kind: str, data: dict, *, full: bool, now: float) -> None:
    limit = None if full else LIMIT
    {
        "approval": show_approval,
        "question": show_question,
        "conflict": show_conflict,
        "effect": show_effect,
        "run": show_run,
        "entry": show_entry,
        "rule": show_generic,
        "policy": show_generic,
        "tool_call": show_generic,
    }[kind]({**data, "now": now}, limit)


def cell(text: Any, limit: int) -> str:
    """A table cell: one line, escaped, at most about ``limit`` characters."""
    return clean(text, limit, one_line=True, more="")


def shorten(text: str, limit: int) -> str:
    return text if len(text) < limit else text[: limit - 1] + "…"


def run_line(item: Any) -> None:
    field(
        "run",
        f"{ident(item.run_id)}  “{clean(item.run_title, 200, one_line=True)}”  "
        f"({ident(item.project)}/{ident(item.space)}, agent {ident(item.agent)})",
    )


def origin_line(item: Any) -> None:
    """Where the request came from: the agent's own word, escaped like all agent text."""
    from proctor.core.kernel.origin import describe

    if getattr(item, "origin", None) is not None:
        field(
            "origin",
            clean(describe(item.origin), 600, one_line=True) + "   (as the agent reports it)",
        )


def show_decisions(decisions: list, limit: int | None, signatures: dict | None = None) -> None:
    """Each decision, with its signature state (signed by whom / unsigned / invalid)."""
    if decisions:
        marks = signatures or {}
        body = "\n".join(
            f"{when(d.created_at)}  {clean(d.actor, 60, one_line=True)}  via {ident(d.source)}  "
            + (f"[{clean(marks[d.id].text, 120, one_line=True)}]  " if d.id in marks else "")
            + f"{clean(json.dumps(d.decision, ensure_ascii=False), limit, one_line=True)}"
            + (f"  reason: {clean(d.reason, limit, one_line=True)}" if d.reason else "")
            for d in decisions
        )
        section("decisions", body)


def show_approval(data: dict, limit: int | None) -> None:
    a = data["item"]
    print(f"approval {ident(a.id)}  [{a.status.value}]  version {a.version}")
    run_line(a)
    origin_line(a)
    field(
        "action",
        f"{clean(a.action_name, 200)}   safety {a.safety_class.value}   "
        f"requested scope {a.requested_scope.value}",
    )
    field("reason", a.reason, limit)
    field("created", when(a.created_at))
    if a.status.value == "pending":
        waiter_line(a, data["now"])
    if a.expires_at:
        field("expires", f"{when(a.expires_at)} (then {a.on_expiry.value.replace('_', ' ')})")
    if a.decided_at:
        field(
            "decided",
            f"{when(a.decided_at)} by {ident(a.decided_by)}"
            + (f": {clean(a.decision_reason, limit)}" if a.decision_reason else ""),
        )
    if a.consumed_at:
        field("consumed", f"{when(a.consumed_at)} for effect {ident(a.consumed_effect_key)}")
    if data.get("policy") is not None:
        show_policy(data["policy"], limit)
    section("action", pretty(a.action, limit))
    if data.get("lens") is not None:
        show_lens(data["lens"], limit)
    show_decisions(data["decisions"], limit, data.get("signatures"))
    if a.status.value == "pending":
        print()
        suggest(
            f"proctor approve {shell_word(a.id)}",
            "or add --scope run / --scope space to allow it again",
        )
        suggest(f"proctor deny {shell_word(a.id)} --reason TEXT")


def show_policy(progress: Any, limit: int | None) -> None:
    """Who approved a request under a policy, and who it still waits for."""
    policy = progress.policy
    field(
        "policy",
        f"{clean(policy.name, 200, one_line=True)} ({ident(policy.id)}): needs "
        f"{clean(policy.needs(), 400, one_line=True)}",
    )
    for st in progress.steps:
        field(
            "approved" if st.approve else "denied",
            f"{when(st.created_at)} by {ident(st.operator)} for {ident(st.group)}"
            + (f" (taking {ident(st.for_operator)}'s part)" if st.for_operator else "")
            + (f": {clean(st.reason, limit)}" if st.reason else ""),
        )
    field("progress", clean(progress.summary(), 400, one_line=True))
    if progress.still_needed():
        taken = ", ".join(ident(s.operator) for s in progress.steps)
        field(
            "needed",
            clean(progress.still_needed(), 400, one_line=True)
            + (f" (not {taken} again)" if taken else ""),
        )


def show_lens(lens: Any, limit: int | None) -> None:
    """What the risk lens reads in the action (proctor.core.lens): a fact a line, most severe
    first, with the field it comes from; what it could not read; the declared class against
    the detected one; what is new against the approved precedent."""
    lines = []
    if lens.declared:
        lines.append(f"! {clean(lens.declared, limit, one_line=True)}")
    for fact in lens.reading.ranked():
        implies = f"  [{fact.implies.replace('_', ' ')}]" if fact.implies else ""
        lines.append(
            f"• {clean(fact.text, limit, one_line=True)}{implies}  "
            f"({clean(fact.field, 80, one_line=True)} {fact.start}–{fact.end})"
        )
    lines += [f"? {clean(text, limit, one_line=True)}" for text in lens.reading.unread]
    if lens.new_line():
        lines.append(clean(lens.new_line(), limit, one_line=True))
    section("reads as", "\n".join(lines) if lines else "nothing the lens reads")


def show_question(data: dict, limit: int | None) -> None:
    from proctor.sim.content import sample_for_schema

    q = data["item"]
    print(f"question {ident(q.id)}  [{q.status.value}]  {q.kind.value}  version {q.version}")
    run_line(q)
    origin_line(q)
    field("created", when(q.created_at))
    if q.expires_at:
        field("expires", when(q.expires_at))
    if q.status.value in ("requested", "presented"):
        waiter_line(q, data["now"])
    section("prompt", clean(q.prompt, limit))
    request = q.request
    if isinstance(request, dict) and q.kind.value == "merge_conflict":
        for side in ("base", "ours", "theirs"):
            if side in request:
                section(
                    f"{side} ({clean(request.get(side + '_ref', ''), 80)})".replace(" ()", ""),
                    clean(request[side], limit),
                )
        request = {k: v for k, v in request.items() if k not in ("base", "ours", "theirs")}
    if isinstance(request, dict) and isinstance(request.get("diff"), str):
        section("diff", clean(request["diff"], limit))
        request = {k: v for k, v in request.items() if k != "diff"}
    if request not in (None, {}):
        section("request", pretty(request, limit))
    if q.options:
        section(
            "options",
            "\n".join(
                clean(
                    f"{o.get('value')} — {o.get('label', '')}" if isinstance(o, dict) else o,
                    400,
                    one_line=True,
                )
                for o in q.options
            ),
        )
    section("answer schema", pretty(q.response_schema, limit))
    if q.dismiss_reason is not None:
        field("\ndismissed", f"{when(q.resolved_at)} by {ident(q.resolved_by)}")
        section("reason", clean(q.dismiss_reason, limit))
    elif q.resolved_at:
        field("\nresolved", f"{when(q.resolved_at)} by {ident(q.resolved_by)}")
        section("answer", pretty(q.response, limit))
    show_decisions(data["decisions"], limit, data.get("signatures"))
    if q.status.value in ("requested", "presented"):
        print()
        suggest_answer(q.id, sample_for_schema(q.response_schema))


def suggest_answer(question_id: str, example: Any) -> None:
    """``proctor answer ID --json EXAMPLE``: the example is JSON whose invisible characters are
    \\uXXXX escapes (the same value, printable), quoted as one shell word."""
    text = json_line(example)
    if len(text) > HINT_MAX:
        suggest(
            f"proctor answer {shell_word(question_id)} --json @answer.json",
            "answer.json: an answer of the schema above",
        )
    else:
        suggest(f"proctor answer {shell_word(question_id)} --json {shell_word(text)}")


def show_conflict(data: dict, limit: int | None) -> None:
    r, entry = data["item"], data["entry"]
    print(f"memory conflict {ident(r.id)}  [{r.status.value}]  version {r.version}")
    field(
        "entry",
        f"{ident(entry.id)}  “{clean(r.title, 200, one_line=True)}”  "
        f"({r.scope.value}: {clean(r.scope_key, 200, one_line=True)})",
    )
    field("from", clean(r.incoming_source, 200, one_line=True))
    origin_line(r)
    if r.run_id:
        field("run", ident(r.run_id))
    field("created", when(r.created_at))
    section(f"local (version {r.local_version})", clean(r.local_content, limit))
    section("incoming", clean(r.incoming_content, limit))
    diff = "\n".join(
        difflib.unified_diff(
            r.local_content.splitlines(),
            r.incoming_content.splitlines(),
            fromfile="local",
            tofile="incoming",
            lineterm="",
        )
    )
    section("difference", clean(diff, limit))
    if r.resolved_at:
        field(
            "\nresolved",
            f"{when(r.resolved_at)} by {ident(r.resolved_by)}"
            + (f": {clean(r.resolution_reason)}" if r.resolution_reason else ""),
        )
    show_decisions(data["decisions"], limit, data.get("signatures"))
    if r.status.value == "pending":
        print()
        word = shell_word(r.id)
        suggest(
            f"proctor resolve-conflict {word} keep-local --reason TEXT",
            "or take-incoming, or dismiss",
        )
        suggest(f"proctor resolve-conflict {word} merge --content-file FILE --reason TEXT")


def show_effect(data: dict, limit: int | None) -> None:
    e = data["item"]
    print(
        f"effect {clean(e.key, 300, one_line=True)}  [{e.status.value}]  attempt {e.attempt}  "
        f"version {e.version}"
    )
    field("tool", f"{clean(e.tool, 200, one_line=True)}   safety {e.safety_class.value}")
    origin_line(e)
    if e.run_id:
        field("run", ident(e.run_id))
    if e.approval_id:
        field("approval", ident(e.approval_id))
    field(
        "lease",
        f"{ident(e.lease_owner)} until {when(e.lease_expires_at)}"
        if e.lease_expires_at
        else ident(e.lease_owner or "-"),
    )
    field("started", when(e.started_at))
    if e.ambiguous_reason:
        field("unknown", e.ambiguous_reason, limit)
    if e.error:
        field("error", e.error, limit)
    if e.resolved_by:
        field("resolved", f"by {ident(e.resolved_by)}: {clean(e.resolution_reason, limit)}")
    section("action", pretty(e.action, limit))
    if e.result is not None:
        section("result", pretty(e.result, limit))
    if data["receipts"]:
        section(
            "receipts",
            "\n".join(
                f"{when(r.created_at)}  {ident(r.kind)} {ident(r.status)}  by {ident(r.actor)}"
                + (
                    f"  external id {clean(r.external_id, 200, one_line=True)}"
                    if r.external_id
                    else ""
                )
                for r in data["receipts"]
            ),
        )
    show_decisions(data["decisions"], limit, data.get("signatures"))
    if e.status.value == "ambiguous":
        print()
        words = (
            f"-- {shell_word(e.key)} committed"
            if e.key.startswith("-")
            else f"{shell_word(e.key)} committed"
        )  # a key is never taken for an option
        suggest(f"proctor resolve-effect --reason TEXT {words}", "or failed, if it did not happen")


def show_run(data: dict, limit: int | None) -> None:
    r = data["item"]
    print(f"run {ident(r.id)}  [{r.status.value}]  version {r.version}")
    field("title", r.title, 400)
    field("where", f"{ident(r.project)}/{ident(r.space)}   agent {ident(r.agent)}")
    field("created", when(r.created_at))
    if r.finished_at:
        field("finished", when(r.finished_at))
    if r.parent_run_id:
        field("parent", ident(r.parent_run_id))
    field("events", r.last_sequence)
    if r.cancel_requested:
        field("cancel", f"requested: {clean(r.cancel_reason, limit)}")
    if r.error:  # the first failure; each attempt's own is in "attempts"
        field("error" if r.current_attempt <= 1 else "first error", r.error, limit)
    section(
        "attempts",
        "\n".join(
            f"#{a.number} {a.status.value}  {when(a.started_at)} → {when(a.finished_at)}"
            + (f"  {clean(a.error, 200, one_line=True)}" if a.error else "")
            for a in data["attempts"]
        ),
    )
    items = [
        f"approval {ident(a.id)} [{a.status.value}] {clean(a.action_name, 80, one_line=True)}"
        for a in data["approvals"]
    ]
    items += [
        f"question {ident(q.id)} [{q.status.value}] {q.kind.value}" for q in data["questions"]
    ]
    items += [
        f"effect {clean(e.key, 120, one_line=True)} [{e.status.value}]" for e in data["effects"]
    ]
    if items:
        section("items", "\n".join(items))
    if data.get("resume_blockers"):
        section(
            "a new attempt waits on",
            "\n".join(f"{b['kind']} {clean(b['id'], 200)}" for b in data["resume_blockers"]),
        )
    section(
        "last events",
        "\n".join(
            f"#{e.sequence:<5} {when(e.created_at)}  {clean(e.type, 80, one_line=True)}"
            for e in data["events"]
        ),
    )
    print()
    suggest(f"proctor timeline {shell_word(r.id)}", "every event of the run")


def show_entry(data: dict, limit: int | None) -> None:
    m = data["item"]
    flags = [
        f
        for f, on in (("pinned", m.pinned), ("confirmed", m.confirmed), ("deleted", m.deleted))
        if on
    ]
    print(f"memory entry {ident(m.id)}  version {m.version}  {' '.join(flags)}".rstrip())
    field("title", m.title, 400)
    field(
        "scope",
        f"{m.scope.value}: {clean(m.scope_key, 200, one_line=True)}   "
        f"kind {clean(m.kind, 40, one_line=True)}   trust {m.trust.value}   "
        f"sensitivity {clean(m.sensitivity, 40, one_line=True)}",
    )
    section("content", clean(m.content, limit))
    section(
        "history",
        "\n".join(
            f"v{h.version} {when(h.created_at)}  {ident(h.operation)}  by {ident(h.actor)}"
            + (f"  ({clean(h.reason, 200, one_line=True)})" if h.reason else "")
            for h in data["history"]
        ),
    )


def show_generic(data: dict, limit: int | None) -> None:
    print(pretty(data["item"].model_dump(mode="json"), limit))
