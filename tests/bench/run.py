"""One benchmark command: Proctor side by side with the seed stores and the physical floor.

    uv sync --extra bench              # the peer stores (ctrlrun, apsimo-hostworker)
    uv run python tests/bench/run.py [--quick]

Prints a Markdown table per suite and writes tests/bench/results.json. ``--quick`` (under two
minutes) runs fewer units per figure; the full run takes up to 20 minutes. Method, caveats and
the latest table: docs/benchmarks.md. Tests never assert these numbers.

Suites are discovered here: every ``bench_*.py``, ``desk_*.py`` or ``timeline_*.py`` module
beside this file that defines ``run(ctx: bench_common.BenchContext) -> list[bench_common.Figure]``.
The desk suites (desk_bench.py: start-up, request → visible, click → committed; timeline_bench.py:
runs page, the big run opened, scrolled, filtered) measure an offscreen desk in a child process
(gui_bench.spawn_figures), so Qt never loads here. To add figures, drop in such a module: it gets the mode, a scratch folder on the measured file
system and the helpers in bench_common (``measure`` for timed multi-process workloads,
``Measure``/``Figure`` for results); its figures are printed as their own table and saved in
results.json. Name every system in ``Figure.systems`` ("proctor", a peer, "floor").
"""

from __future__ import annotations

import argparse
import importlib
import json
import shutil
import signal
import sys
import tempfile
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from bench_common import BenchContext, Figure, close_pools, load, machine  # noqa: E402
from bench_peers import peer_versions  # noqa: E402
from bench_report import render  # noqa: E402

FIRST = ("bench_core", "bench_scale")  # then the rest, alphabetically
PREFIXES = ("bench_", "desk_", "timeline_")


def discover() -> list[str]:
    names = sorted(p.stem for p in HERE.glob("*.py") if p.stem.startswith(PREFIXES))
    ordered = [n for n in FIRST if n in names] + [n for n in names if n not in FIRST]
    return [n for n in ordered if callable(getattr(importlib.import_module(n), "run", None))]


def parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="fewer units (under 2 minutes)")
    p.add_argument("--only", default="", help="comma-separated suite modules, e.g. bench_core")
    p.add_argument(
        "--dir",
        type=Path,
        default=None,
        help="scratch folder for the measured files (default: a new temp folder; "
        "it decides the file system measured)",
    )
    p.add_argument("--out", type=Path, default=HERE / "results.json", help="results file")
    p.add_argument("--procs", default="1,4", help="process counts, comma-separated")
    p.add_argument("--keep", action="store_true", help="keep the measured files")
    return p.parse_args(argv)


def progress(figure: Figure) -> None:
    parts = []
    for name, m in figure.systems.items():
        if m.na:
            parts.append(f"{name} n/a")
        elif m.units_per_s:
            parts.append(f"{name} {m.units_per_s:,.0f}/s p50 {m.p50_ms:.2f} ms")
        else:
            parts.append(f"{name} p50 {m.p50_ms:.2f} ms")
    print(
        f"  {figure.suite}/{figure.id} ×{figure.procs}: " + "; ".join(parts),
        file=sys.stderr,
        flush=True,
    )


def main(argv: list[str] | None = None) -> int:
    args = parse(sys.argv[1:] if argv is None else argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # still clean up and save
    workdir = args.dir or Path(tempfile.mkdtemp(prefix="proctor-bench-"))
    workdir.mkdir(parents=True, exist_ok=True)
    done: list[dict] = []  # figures so far, saved even if the run is cut short

    def on_figure(figure: Figure) -> None:
        progress(figure)
        done.append(figure.to_json())

    ctx = BenchContext(
        quick=args.quick,
        workdir=workdir,
        keep=args.keep,
        on_figure=on_figure,
        procs=tuple(int(x) for x in args.procs.split(",") if x),
    )
    wanted = {x.strip() for x in args.only.split(",") if x.strip()}
    suites = [s for s in discover() if not wanted or s in wanted]
    started = time.monotonic()
    results = {
        "generated_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "mode": "quick" if args.quick else "full",
        "machine": machine(workdir),
        "peers": peer_versions(),
        "suites": suites,
        "errors": {},
        "figures": done,
    }
    print(
        f"proctor bench ({results['mode']}): suites {', '.join(suites)}; files in {workdir}",
        file=sys.stderr,
        flush=True,
    )
    try:
        for name in suites:
            try:
                figures = importlib.import_module(name).run(ctx)
            except Exception:  # noqa: BLE001 - one broken suite must not hide the others' figures
                results["errors"][name] = traceback.format_exc()
                print(results["errors"][name], file=sys.stderr)
                continue
            reported = {(f["suite"], f["id"], f["procs"]) for f in done}
            done.extend(f.to_json() for f in figures if (f.suite, f.id, f.procs) not in reported)
    finally:
        close_pools()
        results["duration_s"] = time.monotonic() - started
        results["machine"]["load_at_end"] = load()
        args.out.write_text(json.dumps(results, indent=1, default=str) + "\n")
        if args.dir is None and not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    print(render(results))
    print(f"\nwrote {args.out}", file=sys.stderr)
    return 1 if results["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
