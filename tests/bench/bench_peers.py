"""Peer stores on the same work: ctrlrun's SQLiteStateStore and apsimo-hostworker's
SqliteActionStore, called through their public store APIs.

Durability is matched to Proctor's ``synchronous=FULL``:

- ctrlrun 0.12 opens one connection per thread and sets ``synchronous=NORMAL`` on it
  (``SQLiteStateStore._connection``). The workload takes that thread's connection once and
  runs ``PRAGMA synchronous=FULL`` on it before any timed call; ``info()`` reads it back.
- apsimo-hostworker 0.2 already sets ``synchronous=FULL`` (and WAL) itself; nothing changed.

Both stores are created once in the parent (their migrations/DDL) before workers open them.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from typing import Any

from bench_common import busy
from bench_data import action_of, payload_of

SYNC_NAMES = {0: "OFF", 1: "NORMAL", 2: "FULL", 3: "EXTRA"}


def peer_versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for name in ("ctrlrun", "apsimo-hostworker"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = ""
    return out


def unavailable(name: str) -> str | None:
    """Why peer ``name`` cannot be measured here, or None."""
    module = {"ctrlrun": "ctrlrun.state", "apsimo-hostworker": "apsimo_hostworker"}[name]
    try:
        __import__(module)
    except ImportError as err:
        return f"not installed ({err.name or err}); install the bench extra: uv sync --extra bench"
    return None


# --------------------------------------------------------------------------- ctrlrun
def create_ctrlrun(path: str) -> None:
    from ctrlrun.state import SQLiteStateStore

    SQLiteStateStore(path).close()


class CtrlrunWorkload:
    def __init__(self, path: str, worker: int, params: dict) -> None:
        from ctrlrun.action import Principal
        from ctrlrun.state import SQLiteStateStore

        self.worker = worker
        self.store = SQLiteStateStore(path)
        self.conn = self.store._connection()  # this thread's connection, reused by every call
        self.conn.execute(f"PRAGMA synchronous={params.get('synchronous', 'FULL')}")
        self.principal = Principal(agent=f"agent-{worker}")

    def action(self, i: int) -> Any:
        from ctrlrun.action import Action

        a = action_of(self.worker, i)
        return Action(
            name=a["tool"], arguments=a["args"], principal=self.principal, resource=a["args"]["url"]
        )

    def prepare(self, i: int) -> Any:
        return f"w{self.worker}-e{i}", self.action(i)

    def rows(self) -> int:
        return self.conn.total_changes

    def info(self) -> dict:
        sync = self.conn.execute("PRAGMA synchronous").fetchone()[0]
        return {
            "synchronous": SYNC_NAMES.get(sync, sync),
            "journal_mode": self.conn.execute("PRAGMA journal_mode").fetchone()[0],
            "how": "PRAGMA synchronous=FULL on the store's per-thread connection "
            "(it sets NORMAL itself)",
        }

    def close(self) -> None:
        self.store.close()


class CtrlrunEffect(CtrlrunWorkload):
    """reserve_effect -> begin_execution -> commit_effect."""

    def unit(self, x: Any, lap: Any) -> None:
        key, action = x
        busy(self.store.reserve_effect, key, action.action_id, timedelta(seconds=60))
        lap("reserve")
        busy(self.store.begin_execution, key, action.action_id)
        lap("begin")
        busy(self.store.commit_effect, key, action.action_id, {"status": 201})
        lap("commit")


class CtrlrunApproval(CtrlrunWorkload):
    """put_approval_request -> grant_approval -> consume_approval_and_reserve."""

    def unit(self, x: Any, lap: Any) -> Any:
        from ctrlrun.approval import ApprovalRequest

        key, action = x
        digest = action.action_hash
        now = datetime.now(UTC)
        request_id = f"apr-{key}"
        busy(
            self.store.put_approval_request,
            ApprovalRequest(
                request_id=request_id,
                action_hash=digest,
                action=action,
                created_at=now,
                expires_at=now + timedelta(hours=1),
            ),
        )
        lap("request")
        busy(self.store.grant_approval, request_id, f"operator-{self.worker}")
        lap("decide")
        busy(
            self.store.consume_approval_and_reserve,
            request_id,
            digest,
            key,
            action.action_id,
            timedelta(seconds=60),
        )
        lap("consume_and_reserve")
        return key, action


class CtrlrunGoverned(CtrlrunApproval):
    """The approval cycle, then begin_execution -> commit_effect."""

    def unit(self, x: Any, lap: Any) -> None:
        key, action = super().unit(x, lap)
        busy(self.store.begin_execution, key, action.action_id)
        lap("begin")
        busy(self.store.commit_effect, key, action.action_id, {"status": 201})
        lap("commit")


class CtrlrunEvent(CtrlrunWorkload):
    """append_event: one autocommit INSERT (ctrlrun events carry no hash chain)."""

    def prepare(self, i: int) -> Any:
        return payload_of(self.worker, i)

    def unit(self, x: Any, lap: Any) -> None:
        from ctrlrun.receipt import Event, EventType

        busy(
            self.store.append_event,
            Event(
                type=EventType.EXECUTION_STARTED,
                action_id=f"act-w{self.worker}",
                ts=datetime.now(UTC),
                data=x,
            ),
        )


# --------------------------------------------------------------------------- apsimo
def create_apsimo(path: str) -> None:
    from apsimo_hostworker.sqlite_store import SqliteActionStore

    SqliteActionStore(path).close()


class ApsimoWorkload:
    """propose -> gate -> lease_next -> begin_owner_authorized_dispatch, as its worker does
    (the lease is scoped to the action just proposed so concurrent workers never share one)."""

    def __init__(self, path: str, worker: int, params: dict) -> None:
        from apsimo_hostworker.sqlite_store import SqliteActionStore

        self.worker = worker
        self.owner = f"worker-{worker}"
        self.store = SqliteActionStore(path)

    def prepare(self, i: int) -> Any:
        from apsimo_hostworker.conformance.harness import build_envelope, build_intent

        intent = build_intent(seed=f"w{self.worker}u{i:06d}")
        return intent, build_envelope(intent)

    def unit(self, x: Any, lap: Any) -> Any:
        from apsimo_hostworker.conformance.harness import delivery_gate_evidence
        from apsimo_hostworker.gate import assert_dispatchable, validate_owner_gate
        from apsimo_hostworker.worker import (
            DEFAULT_ACTION_TYPE,
            DEFAULT_SOURCE_PREFIX,
            build_execution_request,
        )

        intent, envelope = x
        st = self.store
        action = busy(
            st.propose,
            intent.idempotency_key,
            DEFAULT_SOURCE_PREFIX + "bench-host",
            DEFAULT_ACTION_TYPE,
            envelope,
            source_ref=intent.intent_id,
        )
        aid = action["action_id"]
        lap("request")
        now = time.time()
        evidence = delivery_gate_evidence(action, decided_at=now, expires_at=now + 3600)
        _, gate = busy(st.gate, aid, evidence, external_id=evidence["approval_id"])
        lap("decide")
        leased = busy(
            st.lease_next, self.owner, lease_seconds=60, states=("gated",), action_ids=(aid,)
        )
        authorization = validate_owner_gate(
            leased, st.list_receipts(aid), tool_name=intent.tool_name, now=time.time()
        )
        request = build_execution_request(leased, intent, authorization)

        def validator(action_: Any, receipts: Any, at: float) -> Any:
            return assert_dispatchable(
                validate_owner_gate(action_, receipts, tool_name=intent.tool_name, now=at)
            )

        busy(
            st.begin_owner_authorized_dispatch,
            aid,
            self.owner,
            gate_receipt_key=gate["receipt_key"],
            expected_source=leased["source"],
            expected_source_ref=leased["source_ref"],
            expected_action_type=leased["action_type"],
            expected_payload=leased["payload"],
            expected_approval_id=evidence["approval_id"],
            expected_decision_id=evidence["decision_id"],
            expected_execution_digest=request["execution_digest"],
            observation_window_seconds=600,
            max_observations=5,
            gate_validator=validator,
        )
        lap("lease_and_dispatch")
        return aid, request["execution_digest"]

    def rows(self) -> int:
        return self.store._conn.total_changes

    def info(self) -> dict:
        conn = self.store._conn
        sync = conn.execute("PRAGMA synchronous").fetchone()[0]
        return {
            "synchronous": SYNC_NAMES.get(sync, sync),
            "journal_mode": conn.execute("PRAGMA journal_mode").fetchone()[0],
            "how": "its own default (it sets WAL + synchronous=FULL)",
        }

    def close(self) -> None:
        self.store.close()


class ApsimoGoverned(ApsimoWorkload):
    """The approval cycle, then accept -> verify -> complete (7 transactions in all)."""

    def unit(self, x: Any, lap: Any) -> None:
        aid, digest = super().unit(x, lap)
        st = self.store
        projection = {"status": "completed", "execution_digest": digest, "observed": "bench"}
        acceptance = "governed-action-acceptance:" + digest
        busy(
            st.accept,
            aid,
            self.owner,
            acceptance,
            "governed_action_acceptance",
            projection,
            external_id=aid,
        )
        busy(
            st.verify,
            aid,
            self.owner,
            "governed-action-verification:" + digest,
            projection,
            qualifying_receipt_keys=(acceptance,),
        )
        lap("accept_and_verify")
        busy(st.complete, aid, self.owner, {"status": "completed"})
        lap("complete")
