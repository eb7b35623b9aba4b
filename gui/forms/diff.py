"""Diffs for review views (pure Python): side-by-side rows and unified text, from
before/after texts (difflib) or from a unified patch the agent sent (parsed with
``unidiff``: one section per file, with its own counts). Changed lines carry the spans
that changed within them. Bounded."""

from __future__ import annotations

import difflib
import re
import time
from dataclasses import dataclass, field

from ..widgets.fmt import visible

MAX_ROWS = 5_000
MAX_INPUT = 2_000_000  # characters of one side / of a diff considered
MAX_LINES = 20_000  # lines of one side compared
MAX_TOKEN_PAIRS = 250_000  # intra-line diff budget; over it the whole line is marked
SPANS_SECONDS = 0.15  # time for all intra-line diffs of one diff; later lines get none
TOKEN = re.compile(r"\w+|\s+|[^\w\s]")
Spans = tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class Row:
    """One line of a side-by-side diff. ``tag``: equal, delete, insert, replace, hunk, file.
    Texts are as shown (control characters made visible); ``*_spans`` are the (start, end)
    ranges that changed within a replaced line."""

    tag: str
    left_no: int | None
    left: str
    right_no: int | None
    right: str
    left_spans: Spans = ()
    right_spans: Spans = ()


@dataclass
class FileDiff:
    """One file's section of a patch: where its rows start and its own counts."""

    path: str
    status: str = "modified"  # modified, added, removed, renamed, binary
    source: str = ""
    added: int = 0
    removed: int = 0
    first_row: int = 0
    rows: int = 0


@dataclass
class Diff:
    rows: list[Row] = field(default_factory=list)
    files: list[FileDiff] = field(default_factory=list)
    cut: bool = False
    problem: str = ""  # the patch could not be parsed: why

    @property
    def added(self) -> int:
        return sum(f.added for f in self.files)

    @property
    def removed(self) -> int:
        return sum(f.removed for f in self.files)

    def first_change(self) -> int:
        """Row index of the first changed line (-1 when nothing changed)."""
        return next(
            (n for n, r in enumerate(self.rows) if r.tag in ("delete", "insert", "replace")), -1
        )


class Budget:
    """Time left for intra-line diffs (a huge or hostile diff still shows at once)."""

    def __init__(self, seconds: float = SPANS_SECONDS) -> None:
        self.end = time.monotonic() + seconds

    def left(self) -> bool:
        return time.monotonic() < self.end


def lines(text: str) -> list[str]:
    return text[:MAX_INPUT].splitlines()


def intraline(a: str, b: str) -> tuple[Spans, Spans]:
    """The character ranges of ``a`` and ``b`` that differ, word by word."""
    ta, tb = TOKEN.findall(a), TOKEN.findall(b)
    if len(ta) * len(tb) > MAX_TOKEN_PAIRS:
        return ((0, len(a)),) if a else (), ((0, len(b)),) if b else ()
    starts_a, starts_b = _starts(ta), _starts(tb)
    left: list[tuple[int, int]] = []
    right: list[tuple[int, int]] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, ta, tb, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        if i2 > i1:
            left.append((starts_a[i1], starts_a[i2]))
        if j2 > j1:
            right.append((starts_b[j1], starts_b[j2]))
    return tuple(left), tuple(right)


def _starts(tokens: list[str]) -> list[int]:
    out, pos = [], 0
    for t in tokens:
        out.append(pos)
        pos += len(t)
    out.append(pos)
    return out


def _row(
    tag: str,
    left_no: int | None,
    left: str,
    right_no: int | None,
    right: str,
    budget: Budget | None = None,
) -> Row:
    left, right = visible(left), visible(right)
    if tag == "replace" and (budget is None or budget.left()):
        spans = intraline(left, right)
        return Row(tag, left_no, left, right_no, right, *spans)
    return Row(tag, left_no, left, right_no, right)


def side_by_side(before: str, after: str, path: str = "") -> Diff:
    """Rows comparing two texts (one file section)."""
    a, b = lines(before)[:MAX_LINES], lines(after)[:MAX_LINES]
    out, budget = Diff(files=[FileDiff(path or "text")]), Budget()
    # autojunk keeps huge inputs of repeated lines from going quadratic
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=len(b) > 2_000)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            out.rows.extend(
                _row("equal", i1 + k + 1, a[i1 + k], j1 + k + 1, b[j1 + k]) for k in range(i2 - i1)
            )
        else:
            out.rows.extend(paired(tag, a[i1:i2], i1 + 1, b[j1:j2], j1 + 1, budget))
            out.files[0].removed += i2 - i1
            out.files[0].added += j2 - j1
        if len(out.rows) > MAX_ROWS:
            out.rows, out.cut = out.rows[:MAX_ROWS], True
            break
    out.files[0].rows = len(out.rows)
    return out


def paired(
    tag: str,
    left: list[str],
    left_start: int,
    right: list[str],
    right_start: int,
    budget: Budget | None = None,
) -> list[Row]:
    out = []
    for k in range(max(len(left), len(right))):
        has_left, has_right = k < len(left), k < len(right)
        kind = (
            tag
            if tag != "replace"
            else ("replace" if has_left and has_right else "delete" if has_left else "insert")
        )
        out.append(
            _row(
                kind,
                left_start + k if has_left else None,
                left[k] if has_left else "",
                right_start + k if has_right else None,
                right[k] if has_right else "",
                budget,
            )
        )
    return out


def _with_headers(text: str, path: str) -> str:
    """A bare hunk list (no ---/+++ lines) gets file headers, so it parses as one file."""
    head = text.lstrip()[:4000]
    if head.startswith("@@") or ("\n--- " not in "\n" + head and "@@ -" in head):
        name = path or "file"
        return f"--- a/{name}\n+++ b/{name}\n" + text
    return text


def _status(f: object) -> str:
    for attr, name in (
        ("is_binary_file", "binary"),
        ("is_added_file", "added"),
        ("is_removed_file", "removed"),
        ("is_rename", "renamed"),
    ):
        if getattr(f, attr, False):
            return name
    return "modified"


def _strip(value: str) -> str:
    return value[:-2] if value.endswith("\r\n") else value[:-1] if value.endswith("\n") else value


def hunk_rows(hunk: object, budget: Budget | None = None) -> list[Row]:
    """A hunk's lines as rows: each run of removed lines paired with the added run after it."""
    rows: list[Row] = []
    minus: list[tuple[int, str]] = []
    plus: list[tuple[int, str]] = []

    def flush() -> None:
        if minus or plus:
            tag = "replace" if minus and plus else "delete" if minus else "insert"
            rows.extend(
                paired(
                    tag,
                    [m[1] for m in minus],
                    minus[0][0] if minus else 0,
                    [p[1] for p in plus],
                    plus[0][0] if plus else 0,
                    budget,
                )
            )
            minus.clear()
            plus.clear()

    for line in hunk:  # type: ignore[attr-defined]
        if line.is_removed:
            minus.append((line.source_line_no, _strip(line.value)))
        elif line.is_added:
            plus.append((line.target_line_no, _strip(line.value)))
        elif line.is_context:
            flush()
            value = _strip(line.value)
            rows.append(_row("equal", line.source_line_no, value, line.target_line_no, value))
    flush()
    return rows


def from_unified(text: str, path: str = "") -> Diff:
    """Side-by-side rows from a unified patch: one "file" header row per file, a "hunk"
    row per hunk, its lines paired (removed against added) in between."""
    from unidiff import PatchSet  # loaded by the first diff review, not with the desk
    from unidiff.errors import UnidiffParseError

    out, budget = Diff(), Budget()
    try:
        patch = PatchSet(_with_headers(text[:MAX_INPUT], path))
    except (UnidiffParseError, ValueError, IndexError) as exc:
        out.problem = f"the patch could not be read ({str(exc)[:200]})"
        return out
    for f in patch:
        source = f.source_file[2:] if f.source_file.startswith("a/") else f.source_file
        entry = FileDiff(f.path, _status(f), source, f.added, f.removed, len(out.rows))
        out.files.append(entry)
        out.rows.append(Row("file", None, visible(f.path), None, ""))
        for hunk in f:
            header = (
                f"@@ -{hunk.source_start},{hunk.source_length} "
                f"+{hunk.target_start},{hunk.target_length} @@"
            )
            if hunk.section_header:
                header += f" {hunk.section_header}"
            out.rows.append(Row("hunk", None, visible(header), None, ""))
            out.rows.extend(hunk_rows(hunk, budget))
            if len(out.rows) > MAX_ROWS:
                break
        entry.rows = len(out.rows) - entry.first_row
        if len(out.rows) > MAX_ROWS:
            out.rows, out.cut = out.rows[:MAX_ROWS], True
            break
    return out


def unified(before: str, after: str, path: str = "") -> str:
    name = path or "text"
    return "\n".join(
        difflib.unified_diff(
            lines(before)[:MAX_LINES],
            lines(after)[:MAX_LINES],
            fromfile=f"a/{name}",
            tofile=f"b/{name}",
            lineterm="",
        )
    )
