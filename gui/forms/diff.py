"""Diffs for review views (pure Python, difflib): side-by-side rows and unified text,
from before/after texts or from a unified diff the agent sent. Bounded."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

MAX_ROWS = 5_000
MAX_INPUT = 2_000_000  # characters of one side / of a diff considered
MAX_LINES = 20_000  # lines of one side compared
HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")


@dataclass(frozen=True)
class Row:
    """One line of a side-by-side diff. ``tag``: equal, delete, insert, replace, hunk."""

    tag: str
    left_no: int | None
    left: str
    right_no: int | None
    right: str


def lines(text: str) -> list[str]:
    return text[:MAX_INPUT].splitlines()


def side_by_side(before: str, after: str) -> tuple[list[Row], bool]:
    """Rows comparing two texts; True when the rows were cut at MAX_ROWS."""
    a, b = lines(before)[:MAX_LINES], lines(after)[:MAX_LINES]
    rows: list[Row] = []
    # autojunk keeps huge inputs of repeated lines from going quadratic
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=len(b) > 2_000)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            rows.extend(Row("equal", i1 + k + 1, a[i1 + k], j1 + k + 1, b[j1 + k])
                        for k in range(i2 - i1))
        else:
            rows.extend(paired(tag, a[i1:i2], i1 + 1, b[j1:j2], j1 + 1))
        if len(rows) > MAX_ROWS:
            return rows[:MAX_ROWS], True
    return rows, False


def paired(tag: str, left: list[str], left_start: int, right: list[str],
           right_start: int) -> list[Row]:
    out = []
    for k in range(max(len(left), len(right))):
        has_left, has_right = k < len(left), k < len(right)
        kind = tag if tag != "replace" else ("replace" if has_left and has_right else
                                             "delete" if has_left else "insert")
        out.append(Row(kind, left_start + k if has_left else None,
                       left[k] if has_left else "", right_start + k if has_right else None,
                       right[k] if has_right else ""))
    return out


def from_unified(diff: str) -> tuple[list[Row], bool]:
    """Side-by-side rows from a unified diff (hunk headers become separator rows)."""
    rows: list[Row] = []
    left_no = right_no = 0
    minus: list[str] = []
    plus: list[str] = []

    def flush() -> None:
        nonlocal left_no, right_no
        if minus or plus:
            tag = "replace" if minus and plus else "delete" if minus else "insert"
            rows.extend(paired(tag, minus, left_no + 1, plus, right_no + 1))
            left_no += len(minus)
            right_no += len(plus)
            minus.clear()
            plus.clear()

    for line in lines(diff):
        if line.startswith(("--- ", "+++ ", "diff ", "index ")) and not rows and not minus \
                and not plus:
            continue
        header = HUNK.match(line)
        if header:
            flush()
            left_no, right_no = int(header.group(1)) - 1, int(header.group(2)) - 1
            rows.append(Row("hunk", None, line, None, ""))
        elif line.startswith("-"):
            minus.append(line[1:])
        elif line.startswith("+"):
            plus.append(line[1:])
        elif line.startswith("\\"):
            continue  # "\ No newline at end of file"
        else:
            flush()
            text = line[1:] if line.startswith(" ") else line
            left_no += 1
            right_no += 1
            rows.append(Row("equal", left_no, text, right_no, text))
        if len(rows) > MAX_ROWS:
            return rows[:MAX_ROWS], True
    flush()
    return rows[:MAX_ROWS], len(rows) > MAX_ROWS


def unified(before: str, after: str, path: str = "") -> str:
    name = path or "text"
    return "\n".join(difflib.unified_diff(lines(before)[:MAX_LINES], lines(after)[:MAX_LINES],
                                          fromfile=f"a/{name}",
                                          tofile=f"b/{name}", lineterm=""))


def stats(rows: list[Row]) -> tuple[int, int]:
    """(lines removed, lines added)."""
    removed = sum(1 for r in rows if r.tag in ("delete", "replace") and r.left_no is not None)
    added = sum(1 for r in rows if r.tag in ("insert", "replace") and r.right_no is not None)
    return removed, added
