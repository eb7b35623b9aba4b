"""Suite "core": the write paths, Proctor vs ctrlrun vs apsimo-hostworker vs the floor.

For each figure and each process count (1 and 4):

1. a fresh journal is created and set up (one run per worker; a memory entry if needed);
2. two copies are taken with SQLite's backup API: one for the recording pass, one for the floor;
3. the recording pass runs the same units (untimed) and saves every statement Proctor sent;
4. timed: Proctor through the core API; each peer on its own fresh file; the floor replaying
   the recorded write statements with raw sqlite3 (bench_floor.py);
5. 1 process only: "Proctor's SQL alone" (every recorded statement, reads included, raw).

All files live in one scratch folder (same file system), all in WAL with synchronous=FULL.

"Proctor on PostgreSQL" (``proctor_pg``): the same workload through the same core API on a
server journal, in the same run and units: a private PostgreSQL server on this machine
(tests/pg_server.py, durable: fsync and synchronous_commit on), reached over TCP on
127.0.0.1, one fresh database per figure. n/a when no PostgreSQL binaries are installed.
"""

from __future__ import annotations

import shutil
import sqlite3
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

from bench_common import (
    FLOOR,
    PROCTOR,
    BenchContext,
    Figure,
    Measure,
    run_round,
    summarize,
)
from bench_data import EVENT_BATCH
from bench_peers import create_apsimo, create_ctrlrun, unavailable
from bench_proctor import record, setup_journal

CTRLRUN = "ctrlrun"
APSIMO = "apsimo-hostworker"
PEERS = (CTRLRUN, APSIMO)
ALONE = "proctor_sql_alone"  # diagnostic: every recorded statement replayed raw
ON_SERVER = "proctor_pg"  # the same workload on a server journal (PostgreSQL over TCP)
CREATE = {CTRLRUN: create_ctrlrun, APSIMO: create_apsimo}


@dataclass
class Peer:
    workload: str | None = None  # class in bench_peers
    na: str | None = None  # why there is no number
    txns: int | None = None  # durable transactions per unit
    calls: str = ""  # what the unit calls


@dataclass
class Spec:
    id: str
    title: str
    unit: str
    proctor: str  # class in bench_proctor
    what: str
    peers: dict[str, Peer]
    memory: bool = False
    heavy: bool = False
    notes: list[str] = field(default_factory=list)


NO_EFFECT = "n/a: no standalone effect reservation (executions start from a gated proposal)"
NO_EVENTS = "n/a: no event API (events are written only inside its transitions)"

SPECS = [
    Spec(
        "effect_lifecycle",
        "Effect lifecycle: reserve → begin → commit",
        "lifecycle",
        "EffectLifecycle",
        "effects.reserve(key, run_id, action) → effects.begin → effects.commit(result, "
        "external_id): the effect row, one chained run event per step, a receipt, change rows",
        {
            CTRLRUN: Peer(
                "CtrlrunEffect", txns=3, calls="reserve_effect → begin_execution → commit_effect"
            ),
            APSIMO: Peer(na=NO_EFFECT),
        },
    ),
    Spec(
        "approval_cycle",
        "Approval: request → decide → consume-and-reserve",
        "approval",
        "ApprovalCycle",
        "agent approvals.request → operator approvals.decide(expected_version) → agent "
        "approvals.consume_and_reserve(digest, effect key): approval, decision, audit row, "
        "run events, effect reservation",
        {
            CTRLRUN: Peer(
                "CtrlrunApproval",
                txns=3,
                calls="put_approval_request → grant_approval → consume_approval_and_reserve",
            ),
            APSIMO: Peer(
                "ApsimoWorkload",
                txns=4,
                calls="propose → gate (owner evidence) → lease_next → "
                "begin_owner_authorized_dispatch",
            ),
        },
    ),
    Spec(
        "governed_action",
        "Governed action end to end: approval cycle → begin → commit",
        "action",
        "GovernedAction",
        "the approval cycle, then effects.begin → effects.commit (5 transactions)",
        {
            CTRLRUN: Peer(
                "CtrlrunGoverned", txns=5, calls="approval cycle → begin_execution → commit_effect"
            ),
            APSIMO: Peer(
                "ApsimoGoverned",
                txns=7,
                calls="propose → gate → lease_next → dispatch → accept → verify → complete",
            ),
        },
        heavy=True,
    ),
    Spec(
        "event_append",
        "Event append, one per transaction",
        "event",
        "EventAppend",
        "runs.append_event(run_id, type, ~300-byte payload): sequence, sha256 chain link, "
        "run version bump, change rows",
        {
            CTRLRUN: Peer(
                "CtrlrunEvent", txns=1, calls="append_event (autocommit INSERT, no hash chain)"
            ),
            APSIMO: Peer(na=NO_EVENTS),
        },
    ),
    Spec(
        "event_batch",
        f"Event append, batch of {EVENT_BATCH} in one transaction",
        "batch",
        "EventBatch",
        f"runs.append_events(run_id, {EVENT_BATCH} events): as above, one transaction",
        {
            CTRLRUN: Peer(na="n/a: no batch API (append_event is one autocommit INSERT)"),
            APSIMO: Peer(na=NO_EVENTS),
        },
    ),
    Spec(
        "memory_replace",
        "Memory mutation with expected version",
        "mutation",
        "MemoryReplace",
        "memory.replace(entry, content, expected_version) by an agent: CAS update of the "
        "entry, a mutation row with before/after hashes",
        {CTRLRUN: Peer(na="n/a: no memory entity"), APSIMO: Peer(na="n/a: no memory entity")},
        memory=True,
    ),
]


def snapshot(src: Path, dst: Path) -> None:
    """A consistent copy of ``src`` (SQLite backup API), in WAL like the original."""
    source, target = sqlite3.connect(src), sqlite3.connect(dst)
    try:
        source.backup(target)
        target.execute("PRAGMA journal_mode = WAL")
    finally:
        target.close()
        source.close()


def measure_figure(ctx: BenchContext, spec: Spec, procs: int) -> Figure:
    folder = ctx.fresh(f"{spec.id}-{procs}p")
    n, warmup, rounds = ctx.n_units(procs, spec.heavy), ctx.warmup(), ctx.rounds()
    db, rec_db, floor_db = folder / "proctor.db", folder / "record.db", folder / "floor.db"
    params = setup_journal(str(db), procs, memory=spec.memory)
    snapshot(db, rec_db)
    snapshot(db, floor_db)
    if procs == 1:
        snapshot(db, folder / "sql.db")
    streams = [str(folder / f"stream-{w}.pkl") for w in range(procs)]
    rows, txns = record(
        "bench_proctor", spec.proctor, str(rec_db), params, rounds * (warmup + n), streams, warmup
    )

    plan: dict[str, tuple] = {PROCTOR: ("bench_proctor", spec.proctor, db, params, txns)}
    systems: dict[str, Measure] = {}
    server, why_not = bench_server()
    if server is None:
        systems[ON_SERVER] = Measure.not_available(why_not)
    else:
        url = server.url(server.fresh_database())
        plan[ON_SERVER] = (
            "bench_proctor",
            spec.proctor,
            url,
            setup_journal(url, procs, memory=spec.memory),
            txns,
        )
    for name in PEERS:
        peer = spec.peers[name]
        why = peer.na.removeprefix("n/a: ") if peer.na else unavailable(name)
        if why:
            systems[name] = Measure.not_available(why)
            continue
        path = folder / f"{name}.db"
        CREATE[name](str(path))
        plan[name] = ("bench_peers", peer.workload, path, {}, peer.txns)
    plan[FLOOR] = (
        "bench_floor",
        "Replay",
        floor_db,
        [{"stream": s, "mode": "writes"} for s in streams],
        txns,
    )
    if procs == 1:
        plan[ALONE] = (
            "bench_floor",
            "Replay",
            folder / "sql.db",
            [{"stream": streams[0], "mode": "all"}],
            txns,
        )

    raw: dict[str, list] = {name: [] for name in plan}
    order = list(plan)
    for r in range(rounds):  # systems take turns, so drift on a shared machine hits all alike
        for name in order[r % len(order) :] + order[: r % len(order)]:
            module, workload, path, p, _ = plan[name]
            raw[name].append(
                run_round(
                    module,
                    workload,
                    path,
                    procs=procs,
                    n=n,
                    warmup=warmup,
                    params=p,
                    offset=r * (warmup + n),
                )
            )
    for name, (_, _, _, _, t) in plan.items():
        systems[name] = summarize(raw[name], t)
    systems[PROCTOR].rows_per_unit = rows
    for name in PEERS:
        if name in plan:
            systems[name].info["calls"] = spec.peers[name].calls
    extra = {}
    if ALONE in systems:
        extra["proctor_sql_alone"] = asdict(systems.pop(ALONE))
    ordered = {k: systems[k] for k in (PROCTOR, ON_SERVER, *PEERS, FLOOR)}
    if not ctx.keep:
        shutil.rmtree(folder, ignore_errors=True)
    return Figure(
        suite="core",
        id=spec.id,
        title=spec.title,
        what=spec.what,
        unit=spec.unit,
        procs=procs,
        systems=ordered,
        notes=list(spec.notes),
        extra=extra,
    )


_SERVER: dict[str, object] = {}


def bench_server() -> tuple[object | None, str]:
    """The run's PostgreSQL server (started once, durable, stopped at exit), or why not."""
    if "server" not in _SERVER:
        import atexit

        repo_tests = str(Path(__file__).resolve().parents[1])
        if repo_tests not in sys.path:
            sys.path.insert(0, repo_tests)
        import pg_server

        bindir = pg_server.find_bin()
        if bindir is None:
            _SERVER.update(server=None, why="no PostgreSQL server binaries on this machine")
        else:
            try:
                server = pg_server.PgServer(bindir, durable=True).start()
                atexit.register(server.stop)
                _SERVER.update(server=server, why="")
            except Exception as err:  # noqa: BLE001 - a figure says why, the run goes on
                _SERVER.update(server=None, why=f"PostgreSQL did not start: {err}")
    return _SERVER["server"], str(_SERVER["why"])


def run(ctx: BenchContext) -> list[Figure]:
    figures = []
    for spec in SPECS:
        for procs in ctx.procs:
            figure = measure_figure(ctx, spec, procs)
            ctx.progress(figure)
            figures.append(figure)
    return figures
