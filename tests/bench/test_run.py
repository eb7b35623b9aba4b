"""The benchmark command's harness (no timings): which suites it finds, how a desk suite's
figures come back from its child process, and that Qt stays out of the measuring process.

Not in the default testpaths (tests/bench holds benchmarks); run it by path:
``uv run pytest -q tests/bench/test_run.py``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import run  # noqa: E402
from bench_common import Figure, Measure  # noqa: E402
from gui_bench import desk_figure, figure_of, latency, save_figures  # noqa: E402


def test_discovery_finds_the_core_desk_and_timeline_suites_core_first() -> None:
    suites = run.discover()
    assert suites[:2] == ["bench_core", "bench_scale"]
    assert "desk_bench" in suites
    assert "timeline_bench" in suites


def test_discovery_skips_modules_without_run() -> None:
    suites = run.discover()
    assert "bench_common" not in suites
    assert "bench_report" not in suites


def test_discovering_the_suites_does_not_load_qt() -> None:
    code = (
        "import sys, run; run.discover(); "
        "print(sorted(m for m in sys.modules if m.startswith('PySide6')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=HERE,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    assert out.stdout.strip() == "[]"


def test_a_desk_figure_survives_the_trip_from_the_child_process(tmp_path: Path) -> None:
    figure = desk_figure(
        "desk",
        "click_commit",
        "click",
        "what",
        "click",
        [30.0, 10.0, 20.0],
        [2.0, 1.0],
        notes=["n"],
        statements=3,
    )
    path = tmp_path / "figures.json"
    save_figures(path, [figure])
    back = figure_of(json.loads(path.read_text())[0])
    assert isinstance(back, Figure)
    assert back.systems["proctor"] == figure.systems["proctor"]
    assert back.systems["proctor"].p50_ms == 20.0
    assert back.extra == {"statements": 3}
    assert back.ratio("floor") == figure.ratio("floor")


def test_latency_without_samples_is_not_available() -> None:
    assert latency([]).na == "no sample"
    assert latency([5.0]) == Measure(p50_ms=5.0, p95_ms=5.0, p99_ms=5.0, n=1)
