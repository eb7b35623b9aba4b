"""Proctor workloads (through the public core API) and the statement recorder.

Every workload opens the journal the way an agent process does (``Actor.agent``); the
approval workloads also open it as an operator for ``decide``. Ids, payloads and expected
versions come from ``prepare(i)`` so a recording pass and a timed pass do the same work.
"""

from __future__ import annotations

import pickle
from typing import Any

from bench_common import busy
from bench_data import EVENT_BATCH, action_of, is_write, payload_of
from sqlalchemy import event

from proctor.core import Actor, Journal


def setup_journal(path: str, procs: int, *, memory: bool = False) -> list[dict]:
    """Create the journal and one running run per worker (plus a memory entry if asked).

    Returns one params dict per worker. Untimed; runs in the parent before any worker."""
    params = []
    with Journal.open(path, actor=Actor.agent("bench-setup")) as j:
        for w in range(procs):
            run = j.runs.start("bench", f"worker {w}", agent=f"agent-{w}")
            p: dict[str, Any] = {"run_id": run.id}
            if memory:
                entry = j.memory.add(
                    "project", "bench", f"fact {w}", "initial content", run_id=run.id
                )
                p.update(entry_id=entry.id, version=entry.version)
            params.append(p)
    return params


def sqlite_facts(journal: Journal) -> dict:
    if journal.server:  # a server journal: its durability settings, in its own words

        def settings(conn: Any) -> dict:
            got = {
                name: conn.exec_driver_sql(f"SHOW {name}").scalar()
                for name in ("synchronous_commit", "fsync", "server_version")
            }
            got["synchronous"] = (
                f"PostgreSQL {got['server_version']}, synchronous_commit="
                f"{got['synchronous_commit']}, fsync={got['fsync']}"
            )
            return got

        return journal.read(settings)

    def read(conn: Any) -> dict:
        sync = conn.exec_driver_sql("PRAGMA synchronous").scalar()
        mode = conn.exec_driver_sql("PRAGMA journal_mode").scalar()
        return {
            "synchronous": {0: "OFF", 1: "NORMAL", 2: "FULL", 3: "EXTRA"}.get(sync, sync),
            "journal_mode": mode,
        }

    return journal.read(read)


class ProctorWorkload:
    """Base: one agent journal (and an operator journal when ``operator`` is set)."""

    operator = False

    def __init__(self, path: str, worker: int, params: dict) -> None:
        self.worker = worker
        self.params = params
        self.run_id = params.get("run_id")
        self.tag = f"{params.get('prefix', '')}w{worker}"  # effect keys: unique per journal
        self.agent = Journal.open(path, actor=Actor.agent(f"agent-{worker}"))
        self.op = (
            Journal.open(path, actor=Actor.operator(f"operator-{worker}"))
            if self.operator
            else None
        )

    def journals(self) -> list[Journal]:
        return [j for j in (self.agent, self.op) if j is not None]

    def prepare(self, i: int) -> Any:
        return i

    def rows(self) -> int | None:
        return None  # counted by the recording pass (Recorder.rows)

    def info(self) -> dict:
        return sqlite_facts(self.agent)

    def close(self) -> None:
        for j in self.journals():
            j.close()


class EffectLifecycle(ProctorWorkload):
    """reserve -> begin -> commit (3 transactions; events, a receipt, change rows)."""

    def prepare(self, i: int) -> Any:
        return f"{self.tag}-e{i}", action_of(self.worker, i), {"status": 201, "id": i}

    def unit(self, x: Any, lap: Any) -> None:
        key, action, result = x
        fx = self.agent.effects
        busy(fx.reserve, key, tool="http.post", run_id=self.run_id, action=action, lease_seconds=60)
        lap("reserve")
        busy(fx.begin, key)
        lap("begin")
        busy(fx.commit, key, result, external_id=f"ord-{key}")
        lap("commit")


class ApprovalCycle(ProctorWorkload):
    """request (agent) -> decide (operator) -> consume_and_reserve (agent): 3 transactions."""

    operator = True

    def prepare(self, i: int) -> Any:
        return f"{self.tag}-a{i}", action_of(self.worker, i)

    def unit(self, x: Any, lap: Any) -> Any:
        key, action = x
        approval = busy(
            self.agent.approvals.request,
            self.run_id,
            action,
            reason="send the order to the supplier",
        )
        lap("request")
        busy(self.op.approvals.decide, approval.id, True, expected_version=approval.version)
        lap("decide")
        busy(
            self.agent.approvals.consume_and_reserve,
            approval.id,
            approval.action_digest,
            key,
            lease_seconds=60,
        )
        lap("consume_and_reserve")
        return key


class GovernedAction(ApprovalCycle):
    """The whole governed action: approval cycle, then begin -> commit (5 transactions)."""

    def unit(self, x: Any, lap: Any) -> None:
        key = super().unit(x, lap)
        busy(self.agent.effects.begin, key)
        lap("begin")
        busy(self.agent.effects.commit, key, {"status": 201}, external_id=f"ord-{key}")
        lap("commit")


class EventAppend(ProctorWorkload):
    """One event appended to the run's hash chain (1 transaction)."""

    def prepare(self, i: int) -> Any:
        return payload_of(self.worker, i)

    def unit(self, x: Any, lap: Any) -> None:
        busy(self.agent.runs.append_event, self.run_id, "tool.output", x)


class EventBatch(ProctorWorkload):
    """EVENT_BATCH events appended in one transaction (journal.runs.append_events)."""

    def prepare(self, i: int) -> Any:
        return [
            ("tool.output", payload_of(self.worker, i * EVENT_BATCH + k))
            for k in range(EVENT_BATCH)
        ]

    def unit(self, x: Any, lap: Any) -> None:
        busy(self.agent.runs.append_events, self.run_id, x)


class MemoryReplace(ProctorWorkload):
    """memory.replace with the expected version (agent side: entry + mutation row)."""

    def prepare(self, i: int) -> Any:
        text = f"the deploy key rotates every {i % 90 + 1} days; owner: platform team " * 3
        return text, self.params["version"] + i

    def unit(self, x: Any, lap: Any) -> None:
        content, version = x
        busy(
            self.agent.memory.replace,
            self.params["entry_id"],
            content,
            expected_version=version,
            reason="refreshed from the runbook",
            run_id=self.run_id,
        )


# --------------------------------------------------------------------------- recording
class Recorder:
    """Every statement Proctor sends to SQLite, grouped by transaction and by unit.

    A transaction is ``{"kind": "write" | "read", "stmts": [(sql, params, many, rowcount)]}``;
    ``kind`` follows the BEGIN Proctor emitted (IMMEDIATE for writes). Statements outside a
    unit (setup) are not kept. The floor replays the write statements of write transactions."""

    def __init__(self, journals: list[Journal]) -> None:
        self.units: list[list[dict]] = []
        self._open: dict[int, dict] = {}
        self.unscoped = 0
        for j in journals:
            for engine in (j._writer, j._reader):  # the bench may look inside the core
                event.listen(engine, "before_cursor_execute", self._before)
                event.listen(engine, "after_cursor_execute", self._after)
                event.listen(engine, "commit", self._commit)
                event.listen(engine, "rollback", self._rollback)

    def new_unit(self) -> None:
        self.units.append([])

    def _before(
        self,
        conn: Any,
        cursor: Any,
        statement: str,
        parameters: Any,
        context: Any,
        executemany: bool,
    ) -> None:
        head = statement.lstrip()[:16].upper()
        if head.startswith("BEGIN"):
            kind = "write" if "IMMEDIATE" in head else "read"
            self._open[id(conn)] = {"kind": kind, "stmts": []}
            return
        txn = self._open.get(id(conn))
        if txn is None:
            self.unscoped += 1
            return
        params = [tuple(p) for p in parameters] if executemany else tuple(parameters or ())
        txn["stmts"].append([statement, params, executemany, None])

    def _after(
        self,
        conn: Any,
        cursor: Any,
        statement: str,
        parameters: Any,
        context: Any,
        executemany: bool,
    ) -> None:
        txn = self._open.get(id(conn))
        if txn and txn["stmts"] and txn["stmts"][-1][0] == statement:
            txn["stmts"][-1][3] = cursor.rowcount

    def _commit(self, conn: Any) -> None:
        txn = self._open.pop(id(conn), None)
        if txn is not None and self.units:
            self.units[-1].append(txn)

    def _rollback(self, conn: Any) -> None:
        self._open.pop(id(conn), None)

    def save(self, path: str, skip: int = 0) -> None:
        with open(path, "wb") as fh:
            pickle.dump(self.units, fh, protocol=pickle.HIGHEST_PROTOCOL)

    def per_unit(self, skip: int) -> tuple[float, float]:
        """(rows written, write transactions) per unit, over units after the first ``skip``."""
        units = self.units[skip:] or self.units
        rows = txns = 0
        for unit in units:
            for txn in unit:
                if txn["kind"] != "write":
                    continue
                txns += 1
                rows += sum(max(s[3] or 0, 0) for s in txn["stmts"] if is_write(s[0]))
        return rows / len(units), txns / len(units)


def no_sync(dbapi_conn: Any, record: Any, proxy: Any) -> None:
    dbapi_conn.execute("PRAGMA synchronous = OFF")


def record(
    module: str,
    workload: str,
    path: str,
    params: list[dict],
    units: int,
    streams: list[str],
    warmup: int,
) -> tuple[float, float]:
    """Run ``units`` units per worker (sequentially, untimed) on ``path`` and save each worker's
    statement stream. Returns (rows, write transactions) per unit."""
    from bench_common import Lap, load_workload

    rows = txns = 0.0
    for w, p in enumerate(params):
        wl = load_workload(module, workload, path, w, p)
        for j in wl.journals():  # durability is irrelevant to what is captured: skip fsyncs
            for engine in (j._writer, j._reader):
                event.listen(engine, "checkout", no_sync)
        rec = Recorder(wl.journals())
        try:
            for i in range(units):
                rec.new_unit()
                wl.unit(wl.prepare(i), Lap())
        finally:
            wl.close()
        rec.save(streams[w])
        r, t = rec.per_unit(warmup)
        rows, txns = rows + r, txns + t
    return rows / len(params), txns / len(params)
