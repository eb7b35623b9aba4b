"""Desk start benchmark (not run by pytest): how soon the window is up and the inbox painted,
against a bare PySide6 window, for a small and a big journal, measured side by side.

    uv run python tests/bench/desk_window_bench.py [--large | --big BIG.db | --events 200000]
        [--repeat 5]

Each repetition starts, in turn, three fresh processes (bytecode cached, files in the page
cache after one warm-up each):

- bare: ``python -c`` importing PySide6, making a QApplication and a QMainWindow, showing it
  and painting it once (the floor of "a window is visible");
- desk, small journal / big journal: ``python -m proctor.gui.shell.start PATH --bench-paint``
  (what ``proctor open`` and ``proctor demo`` run), which prints when its window (the
  ``DeskFrame``, "Opening the journal… Loading the desk…") is shown and painted
  (``opening``), when the main window is built and put inside that same window (``shown``)
  and when the inbox has painted its first page (``painted``).

Times are from spawn, medians of --repeat. Ratios: window visible / bare window (target 2:
at most 2x), inbox painted big / small (flat in journal size: at most 1.2x). The big journal:
``--large`` the 1.07M-event demo journal (tests/bench/desk_bench.py's, cached under
/tmp/proctor-bench/large.db, minutes to build the first time), ``--big`` any journal, else
the small demo journal plus bulk runs up to --events events (desk_bench.py's generator, cut
to a size that builds in about a minute). The load average is printed: on a shared machine
the figures move with it.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

BARE = (
    "import time\n"
    "from PySide6.QtWidgets import QApplication, QMainWindow\n"
    "app = QApplication([])\n"
    "w = QMainWindow()\n"
    "w.resize(1200, 800)\n"
    "w.show()\n"
    "w.repaint()\n"
    "print(f'shown {time.time():.6f}', flush=True)\n"
)


def env() -> dict[str, str]:
    out = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**out, "PROCTOR_OPERATOR": "bench", "QT_QPA_PLATFORM": "offscreen"}


def marks(args: list[str]) -> dict[str, float]:
    """{"shown": s, "painted": s} from spawn, for one fresh process."""
    t0 = time.time()
    out = subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, timeout=300, check=True, env=env()
    )
    found = {}
    for line in out.stdout.splitlines():
        word, _, rest = line.partition(" ")
        if word in ("opening", "shown", "painted"):
            found[word] = float(rest.split()[0]) - t0
    return found


def desk(path: Path) -> list[str]:
    return ["-m", "proctor.gui.shell.start", str(path), "--bench-paint"]


def big_journal(target: Path, events: int) -> Path:
    """The small demo journal plus bulk runs until it holds ``events`` events."""
    if target.exists():
        return target
    from proctor.sim import demo

    started = time.monotonic()
    demo.build_demo_journal(target, size="small", seed=1)
    writer = demo.DemoWriter(str(target), 2, demo.DemoClock(demo.BASE_TIME + 86_400))
    try:
        bulk = demo.BulkRuns(writer, 2)
        while writer.events < events:
            bulk.run()
    finally:
        writer.close()
    print(f"built {target} in {time.monotonic() - started:.0f} s", flush=True)
    return target


def facts(path: Path) -> str:
    import sqlite3

    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        events = conn.execute("SELECT count(*) FROM events").fetchone()[0]
    finally:
        conn.close()
    return f"{events:,} events, {path.stat().st_size / 1e6:,.0f} MB"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--small", type=Path, help="a small journal (default: the demo's)")
    p.add_argument("--big", type=Path, help="a big journal (default: build one)")
    p.add_argument("--large", action="store_true", help="the 1.07M-event demo journal (cached)")
    p.add_argument("--events", type=int, default=200_000, help="the built big journal's size")
    p.add_argument("--repeat", type=int, default=5)
    a = p.parse_args()
    work = Path(tempfile.gettempdir()) / "proctor-bench"
    work.mkdir(exist_ok=True)
    small = a.small or work / "window-small.db"
    if not small.exists():
        from proctor.sim.demo import build_demo_journal

        build_demo_journal(small, size="small", seed=1)
    if a.large:
        from tests.bench.desk_bench import large_journal

        a.big = large_journal(None)
    big = a.big or big_journal(work / f"window-big-{a.events}.db", a.events)
    print(f"small: {facts(small)}; big: {facts(big)}")
    cases = {"bare": ["-c", BARE], "small": desk(small), "big": desk(big)}
    for args in cases.values():  # warm: bytecode written, files in the page cache
        marks(args)
    seen: dict[str, list[dict[str, float]]] = {name: [] for name in cases}
    loads = []
    for _ in range(a.repeat):
        loads.append(os.getloadavg()[0])
        for name, args in cases.items():
            seen[name].append(marks(args))

    def med(name: str, mark: str) -> float:
        return statistics.median(m[mark] for m in seen[name])

    bare = med("bare", "shown")
    print(f"load average (1 min) during the runs: {', '.join(f'{x:.1f}' for x in loads)}")
    print(
        f"{'process':26} {'window':>13} {'desk in it':>12} {'inbox painted':>14} "
        f"{'window / bare':>13}"
    )
    print(f"{'bare PySide6 window':26} {bare:>11.2f} s {'':>12} {'':>14} {1.0:>12.2f}x")
    for name in ("small", "big"):
        first, shown, painted = med(name, "opening"), med(name, "shown"), med(name, "painted")
        print(
            f"{'desk, ' + name + ' journal':26} {first:>11.2f} s {shown:>10.2f} s "
            f"{painted:>12.2f} s {first / bare:>12.2f}x"
        )
    ratio = med("big", "painted") / med("small", "painted")
    print(f"inbox painted, big / small journal: {ratio:.2f}x (target at most 1.2x)")
    print(
        f"desk window visible / bare window: {med('small', 'opening') / bare:.2f}x small, "
        f"{med('big', 'opening') / bare:.2f}x big (target at most 2x); the main window in "
        f"it: {med('small', 'shown') / bare:.2f}x"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
