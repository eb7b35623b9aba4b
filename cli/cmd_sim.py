"""`proctor simulate` (live agent traffic) and `proctor demo-journal` (a ready-made journal)."""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time
from pathlib import Path
from typing import Any

from .ops_base import EPILOG, EXIT_OK, EXIT_REFUSED, EXIT_USAGE, guarded


class ProgressBar:
    """A one-line progress bar on stderr (a line every few seconds when not a terminal)."""

    def __init__(self, label: str, stream: Any = None) -> None:
        self.label = label
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self.started = time.monotonic()
        self.last = 0.0

    def __call__(self, done: int, total: int, message: str = "") -> None:
        now = time.monotonic()
        finished = done >= total
        if not finished and now - self.last < (0.1 if self.tty else 5.0):
            return
        self.last = now
        frac = done / total if total else 1.0
        filled = int(frac * 30)
        line = (
            f"{self.label} [{'#' * filled}{'.' * (30 - filled)}] {frac:4.0%}  "
            f"{done:,}/{total:,} runs  {message}  {now - self.started:.0f}s"
        )
        if self.tty:
            self.stream.write("\r" + line + ("\n" if finished else ""))
        else:
            self.stream.write(line + "\n")
        self.stream.flush()


def remove_journal(path: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        target = path.with_name(path.name + suffix)
        if target.exists():
            target.unlink()


def cmd_demo_journal(args: argparse.Namespace) -> int:
    from proctor.sim.demo import build_demo_journal

    path = Path(args.path)
    if path.is_dir():
        print(
            f"proctor demo-journal: error: {path} is a folder; name a journal file inside it",
            file=sys.stderr,
        )
        return EXIT_USAGE
    if path.exists() and path.stat().st_size > 0:
        if not args.force:
            print(f"proctor demo-journal: error: {path} already exists", file=sys.stderr)
            print("  hint: pass --force to replace it", file=sys.stderr)
            return EXIT_REFUSED
        remove_journal(path)
    bar = None if args.quiet else ProgressBar(f"building {args.size} journal")
    summary = build_demo_journal(path, size=args.size, seed=args.seed, progress=bar)
    if args.json:
        print(json.dumps(summary, indent=2))
        return EXIT_OK
    pending = summary["pending"]
    print(
        f"{summary['path']}: {summary['runs']:,} runs, {summary['events']:,} events, "
        f"{summary['pending_total']:,} waiting ({pending['approval']} approvals, "
        f"{pending['question']} questions, {pending['conflict']} memory conflicts, "
        f"{pending['effect']} ambiguous effects), {summary['memory_entries']} memory "
        f"entries; {summary['bytes'] / 1e6:,.1f} MB in {summary['seconds']:.1f} s"
    )
    return EXIT_OK


class Interrupted(Exception):
    pass


def _interrupt(*_: Any) -> None:
    raise Interrupted


def cmd_simulate(args: argparse.Namespace) -> int:
    from proctor.sim.agents import start_agents

    if args.agents < 1 or args.rate <= 0:
        print("proctor simulate: error: --agents must be >= 1 and --rate > 0", file=sys.stderr)
        return EXIT_USAGE
    handle = start_agents(
        args.journal_path,
        agents=args.agents,
        rate=args.rate,
        duration=args.duration,
        seed=args.seed,
        drain=args.drain,
        fault_rate=args.fault_rate,
    )
    print(
        f"simulating {args.agents} agents on {args.journal_path} "
        f"({'until Ctrl+C' if args.duration is None else f'for {args.duration:g} s'}; "
        f"seed {args.seed})",
        file=sys.stderr,
        flush=True,
    )
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        while not handle.wait(0.2):  # until every agent ended and none is to be restarted
            pass
    except (KeyboardInterrupt, Interrupted):
        print("stopping the agents…", file=sys.stderr, flush=True)
    finally:
        signal.signal(signal.SIGTERM, previous)
        handle.stop(timeout=5)
    totals = handle.totals()
    minutes = max(totals["elapsed"], 1e-6) / 60
    line = (
        f"simulation: {args.agents} agents, {totals['elapsed']:.1f} s, "
        f"{totals.get('runs', 0)} runs, {totals['items']} items for a person "
        f"({totals['items'] / minutes:.0f}/min): {totals.get('approvals', 0)} approvals, "
        f"{totals.get('questions', 0)} questions, {totals.get('conflicts', 0)} memory "
        f"conflicts, {totals.get('ambiguous', 0)} ambiguous effects; "
        f"{handle.restarts()} restarts"
    )
    print(line, flush=True)
    if args.json:
        print(json.dumps(totals, sort_keys=True))
    failed = handle.failures()
    if failed:
        names = ", ".join(f"{name} (exit {code})" for name, code in failed)
        print(
            f"proctor simulate: error: the simulation stopped early: {names} ended before "
            "their time and could not be restarted",
            file=sys.stderr,
        )
        print(
            "  hint: an agent was killed from outside, or keeps crashing; its log is above.",
            file=sys.stderr,
        )
        return EXIT_REFUSED
    return EXIT_OK


def register(sub: Any) -> None:
    fmt = argparse.RawDescriptionHelpFormatter
    p = sub.add_parser(
        "simulate",
        help="run simulated agent processes against a journal",
        description="Start N agent processes that write realistic runs, approvals, "
        "questions, memory and effects to JOURNAL (created if missing), and "
        "wait for a person to decide. Crashed agents are restarted; Ctrl+C stops "
        "them all cleanly. Each agent prints a one-line summary at the end.",
        epilog=EPILOG,
        formatter_class=fmt,
    )
    p.add_argument("journal_path", metavar="JOURNAL")
    p.add_argument("--agents", type=int, default=3, help="agent processes (default 3)")
    p.add_argument(
        "--rate", type=float, default=1.0, help="steps per second per agent (default 1.0)"
    )
    p.add_argument(
        "--duration",
        type=float,
        default=None,
        metavar="S",
        help="start no new run after S seconds (default: run until Ctrl+C)",
    )
    p.add_argument(
        "--drain",
        type=float,
        default=10.0,
        metavar="S",
        help="after --duration, how long a waiting run keeps waiting (default 10)",
    )
    p.add_argument("--seed", type=int, default=0, help="same seed, same behaviour (default 0)")
    p.add_argument(
        "--fault-rate",
        type=float,
        default=0.08,
        metavar="P",
        help="chance that an effect crashes its agent or outlives its lease",
    )
    p.add_argument("--json", action="store_true", help="also print the totals as JSON")
    p.set_defaults(func=guarded(cmd_simulate))

    p = sub.add_parser(
        "demo-journal",
        help="build a realistic demo journal",
        description="Write a new journal full of believable runs. small: a few hundred "
        "runs with every kind of waiting item; large: over 1M events, 10k runs "
        "and 1k waiting items, for benchmarks. The same --seed gives the same "
        "journal (identical digests).",
        epilog=EPILOG,
        formatter_class=fmt,
    )
    p.add_argument("path", metavar="PATH")
    p.add_argument("--size", choices=["small", "large"], default="small")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--force", action="store_true", help="replace PATH if it exists")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.set_defaults(func=guarded(cmd_demo_journal))
