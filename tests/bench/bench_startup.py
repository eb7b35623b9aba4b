"""Start-up: what a whole `proctor` process costs, side by side with a bare Python process that
opens the same journal with sqlite3 (issue 33).

    uv run python tests/bench/bench_startup.py [--rounds 9]
    uv run python tests/bench/run.py --only bench_startup

Commands: a `proctor hook claude-code` call that a standing rule allows (a new tool call each
round: the hook starts its run, files the approval, the rule decides it, the hook prints
``allow``), `proctor --version`, `proctor inbox`, `proctor show APPROVAL`, `proctor approve
APPROVAL` (a different pending approval each round), on a small demo journal; the hook,
inbox, show and approve again with the warm start (``… warm``: through the warm server,
``proctor/warm.py``; the others run with ``PROCTOR_WARM=0``). Each round runs
every command once, the bare process first, so a change in load hits all of them; a ratio is
the median over rounds of (command / bare process in the same round). Wall and CPU time
(the child's user+sys: less skewed by other work on the machine) are both printed, with the
load average before and after, and the ten largest ``-X importtime`` entries of one hook call.

Bytecode: every process runs with ``PYTHONPYCACHEPREFIX`` in the scratch folder (and without
``PYTHONDONTWRITEBYTECODE``), and a warm-up round writes the caches, so each figure is what an
installed Proctor costs (pip compiles the bytecode at install), not a compile from source.

Targets (issue 33): the hook at most 4x the bare process; inbox, show and approve at most 6x.
Not run by pytest; tests never assert these numbers.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from bench_common import FLOOR, PROCTOR, Figure, Measure, load  # noqa: E402

TARGETS = {"hook": 4.0, "version": None, "inbox": 6.0, "show": 6.0, "approve": 6.0}
LABELS = {
    "hook": "hook claude-code (a rule allows)",
    "version": "--version",
    "inbox": "inbox",
    "show": "show APPROVAL",
    "approve": "approve APPROVAL",
}
WARM = ("hook", "inbox", "show", "approve")  # also measured through the warm server
for _name in WARM:
    TARGETS[f"{_name} warm"] = TARGETS[_name]
    LABELS[f"{_name} warm"] = f"{LABELS[_name]}, warm start"
BARE = "bare"
# what the bare process does: open the journal, read one row, close
BARE_CODE = (
    "import sqlite3, sys\n"
    "c = sqlite3.connect(sys.argv[1])\n"
    "c.execute('SELECT count(*) FROM approvals').fetchone()\n"
    "c.close()\n"
)


def proctor_argv() -> list[str]:
    """The console script beside this interpreter (as a user runs it), else ``-m proctor``."""
    script = Path(sys.executable).with_name("proctor")
    return [str(script)] if script.exists() else [sys.executable, "-m", "proctor"]


def child_env(workdir: Path, warm: bool = False) -> dict[str, str]:
    """A command's environment: in its own process (``PROCTOR_WARM=0``), or warm, with a
    runtime folder of this bench's own (its warm server serves this bench only)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PROCTOR_")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(workdir / "pycache")
    env["HOME"] = str(workdir / "home")  # the operator key `approve` makes on first use
    env["PROCTOR_OPERATOR"] = "bench-operator"
    env["PROCTOR_WARM"] = "1" if warm else "0"
    runtime = workdir / "run"
    runtime.mkdir(mode=0o700, exist_ok=True)
    env["XDG_RUNTIME_DIR"] = str(runtime)
    return env


def warm_server(workdir: Path) -> tuple[Path, int | None]:
    """The bench's warm server: its socket, and its pid once it listens."""
    sock = next((workdir / "run" / "proctor").glob("warm-*.sock"), None)
    lock = next((workdir / "run" / "proctor").glob("warm-*.lock"), None)
    text = lock.read_text().strip() if lock else ""
    return (sock or workdir / "run" / "none"), (int(text) if text.isdigit() else None)


def wait_warm(workdir: Path) -> int:
    deadline = time.monotonic() + 120
    while True:
        sock, pid = warm_server(workdir)
        if sock.exists() and pid is not None:
            return pid
        if time.monotonic() > deadline:
            raise RuntimeError("the warm server never listened")
        time.sleep(0.05)


def children_cpu(pid: int | None) -> float:
    """CPU seconds of ``pid``'s reaped children (the warm server's: the commands it ran)."""
    if pid is None:
        return 0.0
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[13]) + int(fields[14])) / os.sysconf("SC_CLK_TCK")


def hook_event(i: int) -> str:
    return json.dumps(
        {
            "session_id": "bench-session",
            "hook_event_name": "PreToolUse",
            "tool_name": "Read",
            "tool_input": {"file_path": f"/src/file_{i}.py"},
            "tool_use_id": f"toolu_bench_{i}",
            "cwd": "/src",
        }
    )


def prepare(workdir: Path, approvals_needed: int) -> tuple[Path, list[str]]:
    """A small demo journal with a standing rule that allows Claude Code's Read, and
    ``approvals_needed`` pending approvals for `approve`."""
    from proctor.core import Actor, Journal
    from proctor.sim.demo import build_demo_journal

    path = workdir / "journal.db"
    build_demo_journal(path, "small", seed=33)
    with Journal.open(path, actor=Actor.operator("bench-operator")) as op:
        op.approvals.add_rule("allow", "Read", scope="space", project="claude-code")
    with Journal.open(path, actor=Actor.agent("bench-agent")) as agent:
        run = agent.runs.start("bench", "start-up bench", agent="bench-agent")
        pending = [
            agent.approvals.request(
                run.id, {"tool": "deploy", "args": {"n": i}}, reason="start-up bench"
            ).id
            for i in range(approvals_needed)
        ]
    return path, pending


def timed(argv: list[str], env: dict[str, str], stdin: str = "") -> tuple[float, float]:
    """Wall and CPU seconds of one child process; raises if it failed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(argv, input=stdin, capture_output=True, text=True, env=env, timeout=120)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise RuntimeError(f"{argv} exited {proc.returncode}: {proc.stderr[-1500:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


RESERVED = 100  # pending approvals `approve` may use before `approve warm`'s


def commands(path: Path, pending: list[str]) -> dict[str, Callable[[int], tuple[list[str], str]]]:
    """name -> (round -> argv, stdin)."""
    base = proctor_argv()
    j = ["--journal", str(path)]
    return {
        BARE: lambda i: ([sys.executable, "-c", BARE_CODE, str(path)], ""),
        "hook": lambda i: (
            [*base, "hook", "claude-code", *j, "--timeout", "10"],
            hook_event(i),
        ),
        "version": lambda i: ([*base, "--version"], ""),
        "inbox": lambda i: ([*base, "inbox", *j], ""),
        "show": lambda i: ([*base, "show", pending[0], *j], ""),
        "approve": lambda i: ([*base, "approve", pending[i + 1], *j], ""),
        "hook warm": lambda i: (
            [*base, "hook", "claude-code", *j, "--timeout", "10"],
            hook_event(100_000 + i),
        ),
        "inbox warm": lambda i: ([*base, "inbox", *j], ""),
        "show warm": lambda i: ([*base, "show", pending[0], *j], ""),
        "approve warm": lambda i: ([*base, "approve", pending[i + 2 + RESERVED], *j], ""),
    }


def importtime_top(path: Path, env: dict[str, str], n: int = 10) -> list[tuple[str, int, int]]:
    """The ``n`` largest entries (by cumulative time) of one hook call's ``-X importtime``:
    (module, self us, cumulative us)."""
    hook = ["hook", "claude-code", "--journal", str(path), "--timeout", "10"]
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "proctor", *hook],
        input=hook_event(10_000),
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    rows = []
    for line in proc.stderr.splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|\s*(\S+)", line)
        if m:
            rows.append((m.group(3), int(m.group(1)), int(m.group(2))))
    return sorted(rows, key=lambda r: -r[2])[:n]


def measure(rounds: int, workdir: Path) -> dict:
    """Every command once a round, in its own process and (``… warm``) through the warm
    server; a warm command's CPU is the client's plus what the server's child spent."""
    path, pending = prepare(workdir, rounds + 3 + RESERVED)
    cold, warm = child_env(workdir), child_env(workdir, warm=True)
    cmds = commands(path, pending)
    load_before = load()
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in cmds}
    server: int | None = None
    try:
        for i in range(-1, rounds):  # round -1: warm-up (bytecode caches, the warm server)
            for name, make in cmds.items():
                argv, stdin = make(i)
                before = children_cpu(server)
                wall, cpu = timed(argv, warm if name.endswith(" warm") else cold, stdin)
                cpu += children_cpu(server) - before
                if i >= 0:
                    samples[name].append((wall, cpu))
            if i == -1:
                server = wait_warm(workdir)
    finally:
        _, pid = warm_server(workdir)
        if pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
    return {
        "rounds": rounds,
        "load_before": load_before,
        "load_after": load(),
        "samples": samples,
        "importtime": importtime_top(path, cold),
    }


def summary(result: dict) -> list[dict]:
    bare = result["samples"][BARE]
    rows = []
    for name, got in result["samples"].items():
        wall = [w for w, _ in got]
        cpu = [c for _, c in got]
        rows.append(
            {
                "command": name,
                "wall_ms": statistics.median(wall) * 1000,
                "cpu_ms": statistics.median(cpu) * 1000,
                "wall_ratio": statistics.median(w / b[0] for w, b in zip(wall, bare, strict=True)),
                "cpu_ratio": statistics.median(
                    c / max(b[1], 1e-4) for c, b in zip(cpu, bare, strict=True)
                ),
                "target": TARGETS.get(name),
            }
        )
    return rows


def render(result: dict) -> str:
    lines = [
        f"start-up: {result['rounds']} rounds, medians; load before: {result['load_before']}; "
        f"after: {result['load_after']}",
        "",
        "| command | wall ms | × bare (wall) | cpu ms | × bare (cpu) | target |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for r in summary(result):
        target = f"≤ {r['target']:g}×" if r["target"] else ""
        lines.append(
            f"| {r['command']} | {r['wall_ms']:.0f} | {r['wall_ratio']:.1f} | "
            f"{r['cpu_ms']:.0f} | {r['cpu_ratio']:.1f} | {target} |"
        )
    lines += ["", "hook call, top 10 `-X importtime` entries (cumulative):", ""]
    lines += ["| module | self ms | cumulative ms |", "|---|---:|---:|"]
    for name, self_us, cum_us in result["importtime"]:
        lines.append(f"| {name} | {self_us / 1000:.1f} | {cum_us / 1000:.1f} |")
    return "\n".join(lines)


def figures(result: dict) -> list[Figure]:
    out = []
    bare_wall = statistics.median(w for w, _ in result["samples"][BARE]) * 1000
    for r in summary(result):
        if r["command"] == BARE:
            continue
        out.append(
            Figure(
                suite="bench_startup",
                id=f"start_{r['command']}",
                title=f"`proctor {LABELS[r['command']]}` process start to exit",
                what="one whole process; floor: bare Python opening the journal with sqlite3",
                unit="process",
                procs=1,
                systems={
                    PROCTOR: Measure(p50_ms=r["wall_ms"], n=result["rounds"]),
                    FLOOR: Measure(p50_ms=bare_wall, n=result["rounds"]),
                },
                notes=[
                    f"× bare: wall {r['wall_ratio']:.1f}, cpu {r['cpu_ratio']:.1f}"
                    + (f" (target ≤ {r['target']:g})" if r["target"] else ""),
                    f"load {result['load_before']} -> {result['load_after']}",
                ],
                extra={"cpu_ms": r["cpu_ms"], "importtime_top": result["importtime"]},
            )
        )
    return out


def run(ctx) -> list[Figure]:  # bench_common.BenchContext
    workdir = ctx.workdir / "startup"
    workdir.mkdir(parents=True, exist_ok=True)
    result = measure(5 if ctx.quick else 9, workdir)
    print(render(result), file=sys.stderr)
    return figures(result)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=9, help="counted rounds (default 9)")
    args = p.parse_args(argv)
    workdir = Path(tempfile.mkdtemp(prefix="proctor-startup-"))
    try:
        print(render(measure(args.rounds, workdir)))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
