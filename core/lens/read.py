"""``read_action``: walk an action's arguments and read each string with the parser its key
or tool calls for. Never raises on any JSON value; bounded in depth, values and characters."""

from __future__ import annotations

import re
from typing import Any

from proctor.core.kernel.safe_text import visible
from proctor.core.lens.facts import Fact, Reading, rank, reading_of

MAX_DEPTH = 64  # nested objects/arrays read below args
MAX_VALUES = 100_000  # values walked in one action
BUDGET = 300_000  # characters parsed in one action, all fields together
MAX_FACTS = 100  # facts kept from one field: the overviews, then the most severe
OVERVIEWS = {"shell.commands", "sql.many_statements", "diff.files"}

SQL_KEYS = {"query", "sql", "statement", "statements", "stmt", "sql_query"}
SHELL_KEYS = {"command", "cmd", "script", "shell", "commandline", "command_line", "bash"}
GENERIC_KEYS = {"command", "cmd", "input", "code", "text", "q", "script"}
PATH_KEYS = {
    "path", "file", "file_path", "filepath", "filename", "paths", "files", "target",
    "dest", "destination", "directory", "dir", "folder", "notebook_path", "source_path",
}  # fmt: skip
DIFF_KEYS = {"patch", "diff", "unified_diff"}
URL_KEYS = {"url", "uri", "endpoint", "href"}
METHOD_KEYS = {"method", "http_method", "verb"}
BODY_KEYS = {"body", "data", "json", "payload"}
DB_TOOL = re.compile(r"sql|database|query|postgres|(?<![a-z])db", re.IGNORECASE)
SHELL_TOOL = re.compile(r"bash|shell|exec|terminal|run_command|command|console", re.IGNORECASE)
WRITE_TOOL = re.compile(
    r"write|edit|delete|remove|move|rename|create|save|put|upload|patch|apply|rm|mv|cp|copy",
    re.IGNORECASE,
)


def kind_of(key: str, tool: str) -> str | None:
    """What a string under ``key`` is read as for ``tool``: sql, shell, path, diff or None."""
    k = key.lower()
    if k in SQL_KEYS:
        return "sql"
    if DB_TOOL.search(tool) and k in GENERIC_KEYS:
        return "sql"
    if k in SHELL_KEYS or (SHELL_TOOL.search(tool) and k in GENERIC_KEYS):
        return "shell"
    if k in PATH_KEYS:
        return "path"
    if k in DIFF_KEYS:
        return "diff"
    return None


class Walk:
    def __init__(self, tool: str, cwd: str | None, max_chars: int) -> None:
        self.tool = tool
        self.cwd = cwd
        self.max_chars = max_chars
        self.budget = BUDGET
        self.facts: list[Fact] = []
        self.unread: list[str] = []

    def run(self, args: Any) -> None:
        stack: list[tuple[str, str, Any, int]] = [("args", "", args, 0)]
        seen = 0
        while stack:
            field, key, value, depth = stack.pop()
            seen += 1
            if seen > MAX_VALUES:
                self.unread.append(
                    f"the action has more than {MAX_VALUES} values: the rest was not read"
                )
                return
            if isinstance(value, dict):
                if depth >= MAX_DEPTH:
                    self.unread.append(
                        f"{field} is nested more than {MAX_DEPTH} levels deep: not read"
                    )
                    continue
                self.request(field, value)
                items = [(f"{field}.{k}", str(k), v, depth + 1) for k, v in value.items()]
                stack.extend(reversed(items))
            elif isinstance(value, list | tuple):
                if depth >= MAX_DEPTH:
                    self.unread.append(
                        f"{field} is nested more than {MAX_DEPTH} levels deep: not read"
                    )
                    continue
                items = [(f"{field}[{i}]", key, v, depth + 1) for i, v in enumerate(value)]
                stack.extend(reversed(items))
            elif isinstance(value, str):
                kind = kind_of(key, self.tool) if key else self.whole_kind()
                if kind:
                    self.string(field, kind, value)

    def whole_kind(self) -> str | None:
        """args itself a string: read as the tool's name suggests."""
        return (
            "sql"
            if DB_TOOL.search(self.tool)
            else "shell"
            if SHELL_TOOL.search(self.tool)
            else None
        )

    def string(self, field: str, kind: str, text: str) -> None:
        if len(text) > self.max_chars:
            self.unread.append(f"{field} is too long to read ({len(text)} characters)")
            return
        if kind in {"sql", "shell", "diff"}:
            if len(text) > self.budget:
                self.unread.append(
                    f"{field} was not read: the action's text is past the read budget"
                )
                return
            self.budget -= len(text)
        try:
            self.parse(field, kind, text)
        except (RecursionError, MemoryError):
            self.unread.append(
                f"could not read {field} as {kind.upper() if kind == 'sql' else kind}: nested too deep"
            )
        except Exception:  # noqa: BLE001 - a parser's fault on hostile text is an unread field, never a crash
            self.unread.append(
                f"could not read {field} as {kind.upper() if kind == 'sql' else kind}"
            )

    def parse(self, field: str, kind: str, text: str) -> None:
        if kind == "sql":
            from proctor.core.lens.sql import dialect_for, read_sql

            facts, why = read_sql(text, field, 0, dialect_for(self.tool))
            self.add(field, facts)
            if why:
                self.unread.append(why)
        elif kind == "shell":
            from proctor.core.lens.shell import read_shell

            facts, unread = read_shell(text, field)
            self.add(field, facts)
            self.unread += unread
        elif kind == "path":
            from proctor.core.lens.paths import path_facts

            self.facts += path_facts(text, field, self.cwd, bool(WRITE_TOOL.search(self.tool)))
        else:
            from proctor.core.lens.diff import read_diff

            facts, why = read_diff(text, field, self.cwd)
            self.add(field, facts)
            if why:
                self.unread.append(why)

    def add(self, field: str, facts: list[Fact]) -> None:
        """The field's facts, at most MAX_FACTS of them (in text order)."""
        if len(facts) > MAX_FACTS:
            order = sorted(
                range(len(facts)),
                key=lambda i: (facts[i].code not in OVERVIEWS, -rank(facts[i].implies)),
            )
            kept = set(order[:MAX_FACTS])
            self.unread.append(f"{field}: {len(facts) - MAX_FACTS} more facts not listed")
            facts = [f for i, f in enumerate(facts) if i in kept]
        self.facts += facts

    def request(self, field: str, obj: dict[Any, Any]) -> None:
        """An object with a URL key: one HTTP request with its sibling method and body."""
        from proctor.core.lens.http import request_facts

        url_key = next(
            (k for k in obj if str(k).lower() in URL_KEYS and isinstance(obj[k], str)), None
        )
        if url_key is None:
            return
        url = obj[url_key]
        if len(url) > self.max_chars:
            self.unread.append(f"{field}.{url_key} is too long to read ({len(url)} characters)")
            return
        method_key = next(
            (k for k in obj if str(k).lower() in METHOD_KEYS and isinstance(obj[k], str)), None
        )
        method = obj[method_key].strip().upper() if method_key else "GET"
        body_key = next((k for k in obj if str(k).lower() in BODY_KEYS), None)
        body_value = obj[body_key] if body_key is not None else ""
        if isinstance(body_value, str):
            body = len(body_value)
            body_field, body_span = f"{field}.{body_key}", (0, body)
        else:  # an object or array: the fact points at the URL it is sent to
            body = size(body_value)
            body_field, body_span = f"{field}.{url_key}", (0, len(url))
        self.facts += request_facts(
            f"{field}.{url_key}", url, (0, len(url)), method,
            (0, len(obj[method_key])) if method_key else (0, 0), body,
            method_field=f"{field}.{method_key}" if method_key else None,
            body_field=body_field, body_span=body_span,
        )  # fmt: skip


def size(value: Any, limit: int = 10_000_000) -> int:
    """About how many characters ``value`` is as JSON (walked without recursion, stopping at
    ``limit``)."""
    total, stack = 0, [value]
    while stack and total < limit:
        v = stack.pop()
        if isinstance(v, str):
            total += len(v) + 2
        elif isinstance(v, dict):
            total += 2 + sum(len(str(k)) + 4 for k in v)
            stack.extend(v.values())
        elif isinstance(v, list | tuple):
            total += 2 + len(v)
            stack.extend(v)
        else:
            total += len(str(v)) if isinstance(v, int | float | bool) or v is None else 1
    return total


def read_action(action: Any, *, cwd: str | None = None, max_chars: int = 100_000) -> Reading:
    """What ``action`` will do, read from its arguments with real parsers."""
    if not isinstance(action, dict):
        return reading_of([], ["the action is not an object: nothing was read"])
    tool = action.get("tool") or action.get("name") or ""
    walk = Walk(
        tool if isinstance(tool, str) else "", cwd if isinstance(cwd, str) else None, max_chars
    )
    if "args" in action:
        walk.run(action["args"])
    # the sentences name fields by the agent's keys: invisible characters shown as escapes
    unread = [visible(u, breaks=True) for u in dict.fromkeys(walk.unread)]
    return reading_of(walk.facts, unread)
