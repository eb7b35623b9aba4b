"""Pure layout for the visual timeline: lanes, rows within a lane, time ticks.

No Qt here: the view turns these numbers into items, and tests check them directly.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

from proctor.core.audit.timeline import Span

LANES = (
    ("attempt", "Attempts"),
    ("tool", "Tool calls"),
    ("approval", "Approvals"),
    ("question", "Questions"),
    ("effect", "Effects"),
)
MAX_ROWS = 6  # rows per lane; more overlapping spans share the last row
NICE_STEPS = (
    0.001,
    0.002,
    0.005,
    0.01,
    0.02,
    0.05,
    0.1,
    0.2,
    0.5,
    1,
    2,
    5,
    10,
    15,
    30,
    60,
    120,
    300,
    600,
    900,
    1800,
    3600,
    7200,
    10800,
    21600,
    43200,
    86400,
    172800,
    604800,
)


@dataclass(frozen=True)
class Placed:
    span: Span
    lane: int  # index into LANES
    row: int  # row within the lane
    end: float  # end used for drawing (an open span runs to the timeline's end)


def pack(spans: list[Span], until: float) -> tuple[list[Placed], list[int]]:
    """Place spans in lanes; overlapping spans of one lane go to separate rows.

    Returns the placed spans and the number of rows of each lane (0 when empty)."""
    lane_of = {name: n for n, (name, _title) in enumerate(LANES)}
    placed: list[Placed] = []
    rows = [0] * len(LANES)
    for lane_name, lane in lane_of.items():
        ends: list[float] = []  # per row: where its last span ends
        for span in sorted(
            (s for s in spans if s.lane == lane_name), key=lambda s: (s.start, s.id)
        ):
            end = span.end if span.end is not None else max(until, span.start)
            row = next((n for n, last in enumerate(ends) if last <= span.start), None)
            if row is None:
                if len(ends) < MAX_ROWS:
                    ends.append(end)
                    row = len(ends) - 1
                else:
                    row = MAX_ROWS - 1
            ends[row] = max(ends[row], end)
            placed.append(Placed(span, lane, row, end))
        rows[lane] = len(ends)
    return placed, rows


def tick_step(seconds_per_pixel: float, min_gap_px: float = 90) -> float:
    """A round tick interval giving at least ``min_gap_px`` between labels."""
    wanted = seconds_per_pixel * min_gap_px
    for step in NICE_STEPS:
        if step >= wanted:
            return step
    return NICE_STEPS[-1] * math.ceil(wanted / NICE_STEPS[-1])


def ticks(start: float, end: float, step: float) -> list[float]:
    """Tick times from the first multiple of ``step`` at or after ``start`` to ``end``."""
    if step <= 0 or end < start:
        return []
    first = math.ceil(start / step) * step
    count = int((end - first) / step) + 1
    return [first + n * step for n in range(max(0, min(count, 500)))]


def tick_label(t: float, step: float) -> str:
    local = time.localtime(t)
    if step < 1:
        millis = round((t - math.floor(t)) * 1000) % 1000
        return time.strftime("%H:%M:%S", local) + f".{millis:03d}"
    if step >= 86400:
        return time.strftime("%d %b", local)
    return time.strftime("%H:%M:%S" if step < 60 else "%H:%M", local)
