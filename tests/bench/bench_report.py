"""Markdown tables from results (the dict run.py writes to results.json).

``python tests/bench/bench_report.py [tests/bench/results.json]`` prints the tables again.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

PROCTOR, FLOOR = "proctor", "floor"
LABELS = {
    PROCTOR: "Proctor",
    FLOOR: "floor (raw sqlite3)",
    "proctor_pg": "Proctor-on-PostgreSQL",
}  # one word: ratio heads take the first


def fmt_num(x: float | None, digits: int = 0) -> str:
    if x is None:
        return "–"
    if x >= 100:
        return f"{x:,.0f}"
    return f"{x:.{max(digits, 1)}f}" if x >= 10 else f"{x:.{max(digits, 2)}f}"


def fmt_ms(x: float | None) -> str:
    if x is None:
        return "–"
    return f"{x:.2f}" if x < 10 else f"{x:.1f}"


def cell(m: dict | None) -> str:
    if m is None:
        return ""
    if m.get("na"):
        return f"n/a: {m['na']}"
    if m.get("units_per_s"):
        return f"{fmt_num(m['units_per_s'])}/s · {fmt_ms(m['p50_ms'])} / {fmt_ms(m['p99_ms'])} ms"
    return f"{fmt_ms(m['p50_ms'])} / {fmt_ms(m.get('p95_ms'))} / {fmt_ms(m['p99_ms'])} ms"


def ratio(x: float | None) -> str:
    return "–" if x is None else f"{x:.2f}×"


def systems_of(figures: list[dict]) -> list[str]:
    names: list[str] = []
    for f in figures:
        for name in f["systems"]:
            if name not in names:
                names.append(name)
    middle = [n for n in names if n not in (PROCTOR, FLOOR)]
    return ([PROCTOR] if PROCTOR in names else []) + middle + ([FLOOR] if FLOOR in names else [])


def rows_cell(f: dict, names: list[str]) -> str:
    parts = []
    for name in names:
        m = f["systems"].get(name) or {}
        if m.get("na") or m.get("rows_per_unit") is None:
            parts.append("–")
        else:
            txns = m.get("txns_per_unit")
            t = f"/{txns:g}" if txns else ""
            parts.append(f"{m['rows_per_unit']:.0f}{t}")
    return " · ".join(parts)


def suite_table(figures: list[dict]) -> str:
    names = systems_of(figures)
    others = [n for n in names if n != PROCTOR]
    has_rate = any((m or {}).get("units_per_s") for f in figures for m in f["systems"].values())
    how = "units/s · p50 / p99 latency" if has_rate else "p50 / p95 / p99 latency"
    head = (
        ["figure (unit)", "procs"]
        + [LABELS.get(n, n) for n in names]
        + [f"Proctor ÷ {LABELS.get(n, n).split(' ')[0]}" for n in others]
    )
    rows_names = [n for n in names if n != FLOOR]
    has_rows = any(m.get("rows_per_unit") for f in figures for m in f["systems"].values() if m)
    if has_rows:
        head.append("rows/txns per unit (" + " · ".join(LABELS.get(n, n) for n in rows_names) + ")")
    has_cpu = any(m.get("cpu_ms_per_unit") for f in figures for m in f["systems"].values() if m)
    if has_cpu:
        head.append(
            "CPU ms/unit (" + " · ".join(LABELS.get(n, n).split(" ")[0] for n in names) + ")"
        )
    lines = [
        f"_{how}; ratios are Proctor's throughput over the other's (>1: Proctor faster)._",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
    ]
    for f in figures:
        cells = [f"{f['title']} ({f['unit']})", str(f["procs"])]
        cells += [cell(f["systems"].get(n)) for n in names]
        cells += [ratio(f.get("ratios", {}).get(f"proctor_vs_{n}")) for n in others]
        if has_rows:
            cells.append(rows_cell(f, rows_names))
        if has_cpu:
            cells.append(
                " · ".join(
                    fmt_ms((f["systems"].get(n) or {}).get("cpu_ms_per_unit")) for n in names
                )
            )
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def extras_table(figures: list[dict]) -> str:
    """Where the time goes: Proctor vs its own SQL replayed raw vs the floor (1 process)."""
    rows = [f for f in figures if f.get("extra", {}).get("proctor_sql_alone")]
    if not rows:
        return ""
    lines = [
        "| figure | Proctor p50 ms | Proctor's SQL alone p50 ms | floor p50 ms | "
        "CPU ms/unit: Proctor · SQL alone · floor | Python share of Proctor's CPU | "
        "Proctor p50 per step (ms) |",
        "|---|---|---|---|---|---|---|",
    ]
    for f in rows:
        p = f["systems"][PROCTOR]
        alone = f["extra"]["proctor_sql_alone"]
        floor = f["systems"].get(FLOOR, {})
        cpu = [p.get("cpu_ms_per_unit"), alone.get("cpu_ms_per_unit"), floor.get("cpu_ms_per_unit")]
        share = 1 - cpu[1] / cpu[0] if cpu[0] and cpu[1] is not None else None
        steps = ", ".join(f"{k} {v:.2f}" for k, v in p.get("steps_p50_ms", {}).items())
        lines.append(
            f"| {f['title']} | {fmt_ms(p['p50_ms'])} | {fmt_ms(alone['p50_ms'])} | "
            f"{fmt_ms(floor.get('p50_ms'))} | {' · '.join(fmt_ms(c) for c in cpu)} | "
            f"{'–' if share is None else f'{share:.0%}'} | {steps or '–'} |"
        )
    return "\n".join(lines)


def scale_table(figures: list[dict]) -> str:
    """Rows: figures; columns: p50 / p99 at each journal size, growth, the same SQL alone."""
    labels = list(figures[0]["extra"]["by_size"])
    head = (
        ["figure"]
        + [f"{lab} events" for lab in labels]
        + [f"growth p50 {labels[0]}→{labels[-1]}", "same SQL alone, p50 by size"]
    )
    lines = [
        "_p50 / p99 latency in ms (writes: also units/s); 1 process._",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
    ]
    for f in figures:
        cells = [f["title"]]
        for lab in labels:
            m = f["extra"]["by_size"][lab]
            rate = f" · {fmt_num(m['units_per_s'])}/s" if m.get("units_per_s") else ""
            cells.append(f"{fmt_ms(m['p50_ms'])} / {fmt_ms(m['p99_ms'])}{rate}")
        g = f["extra"].get("growth_p50")
        cells.append("–" if g is None else f"{g:.2f}×")
        floors = f["extra"].get("floor_by_size") or {}
        cells.append(
            " → ".join(fmt_ms(floors[lab]["p50_ms"]) for lab in labels if lab in floors) or "–"
        )
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def what_list(figures: list[dict]) -> list[str]:
    seen, lines = set(), []
    for f in figures:
        if f["id"] in seen:
            continue
        seen.add(f["id"])
        peers = [
            f"{name}: {m['info']['calls']}"
            for name, m in f["systems"].items()
            if (m.get("info") or {}).get("calls")
        ]
        lines.append(
            f"- **{f['title']}** — Proctor: {f['what']}"
            + ("; " + "; ".join(peers) if peers else "")
            + "."
        )
    return lines


def render(results: dict) -> str:
    out = []
    m = results.get("machine", {})
    out.append(
        f"Machine: {m.get('cpu', '?')}, {m.get('cores', '?')} cores, "
        f"{m.get('memory', '?')}, {m.get('os', '?')}; Python {m.get('python', '?')}, "
        f"SQLite {m.get('sqlite', '?')}; files on {m.get('filesystem', '?')}. "
        f"Mode: {results.get('mode', '?')}, {results.get('duration_s', 0):.0f} s. "
        f"Other load: at start {m.get('load', '?')}; at end {m.get('load_at_end', '?')}."
    )
    peers = results.get("peers", {})
    if peers:
        out.append(
            "Peers: " + ", ".join(f"{k} {v or 'not installed'}" for k, v in peers.items()) + "."
        )
    suites: dict[str, list[dict]] = {}
    for f in results.get("figures", []):
        suites.setdefault(f["suite"], []).append(f)
    for suite, figures in suites.items():
        scaled = all(f.get("extra", {}).get("by_size") for f in figures)
        out += ["", f"### {suite}", "", scale_table(figures) if scaled else suite_table(figures)]
        extra = extras_table(figures)
        if extra:
            out += ["", "Where Proctor's time goes (1 process):", "", extra]
        out += ["", "What each figure measured:", "", *what_list(figures)]
        notes = sorted({n for f in figures for n in f.get("notes", [])})
        if notes:
            out += [""] + [f"- {n}" for n in notes]
    sync = sorted(
        {
            f"{name}: {(m.get('info') or {}).get('synchronous')}"
            + (f" ({m['info']['how']})" if (m.get("info") or {}).get("how") else "")
            for f in results.get("figures", [])
            for name, m in f["systems"].items()
            if (m.get("info") or {}).get("synchronous")
        }
    )
    busy = [
        f"{name} in {f['id']} ×{f['procs']}: {m['info']['busy_retries']}"
        for f in results.get("figures", [])
        for name, m in f["systems"].items()
        if (m.get("info") or {}).get("busy_retries")
    ]
    if busy:
        out += [
            "",
            "Write lock not granted within busy_timeout (5 s), call retried as an agent "
            "would (nothing had been written); the retries count in the latencies:",
            "",
        ]
        out += [f"- {b}" for b in busy]
    if sync:
        out += [
            "",
            "Durability in force (read back with PRAGMA synchronous in each worker):",
            "",
        ] + [f"- {s}" for s in sync]
    return "\n".join(out)


def main(argv: list[str]) -> int:
    path = Path(argv[0]) if argv else Path(__file__).with_name("results.json")
    print(render(json.loads(path.read_text())))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
