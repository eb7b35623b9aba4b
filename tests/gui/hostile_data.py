"""Agent data made to freeze a desk: big base64 blobs, YAML-like text, a 1 MB line."""

from __future__ import annotations

import base64
import random


def blob(seed: int, size: int, *, width: int | None = None) -> str:
    """``size`` characters of base64 (one line, or lines of ``width``)."""
    text = base64.b64encode(random.Random(seed).randbytes(size * 3 // 4 + 3)).decode()[:size]
    if width:
        text = "\n".join(text[n : n + width] for n in range(0, len(text), width))
    return text


def yaml_like(seed: int, size: int) -> str:
    """Repetitive YAML-ish config: the same few lines with small differences."""
    rng = random.Random(seed)
    out: list[str] = []
    while sum(map(len, out)) < size:
        out.append(
            f"  - name: service{rng.randint(0, 40)}\n    replicas: {rng.randint(1, 9)}\n"
            f"    enabled: {rng.choice(['true', 'false'])}\n    tags: [a, b, c]\n"
        )
    return "".join(out)[:size]


def one_line(size: int = 1_000_000) -> str:
    """One unbroken line of ``size`` characters (words, right-to-left script, CJK)."""
    return ("lorem ipsum dolor sit amet, שלום עולם 会议在东京举行 " * (size // 40 + 1))[:size]
