"""The approved action is the action that runs, and evidence cannot be rewritten (issue 15,
[integrity], schema half): identity columns immutable by trigger, no INSERT OR REPLACE or
upsert over an existing key on any evidence table, the action digest re-checked on every
read, and `verify` covering every evidence table. Every attack here is raw SQL on a plain
sqlite3 connection (recursive_triggers off, as a tampering process leaves it)."""

from __future__ import annotations

import shutil
import sqlite3

import pytest

from proctor.core import Actor, Journal, errors
from proctor.core.audit.verify import verify
from proctor.core.kernel.canonical import canonical_json, digest_of, sha256_hex
from proctor.core.storage import db as core_db
from proctor.core.storage import schema as s
from proctor.core.storage.schema import IDENTITY_COLUMNS, UNIQUE_KEYS

from .helpers import drop_immutability_triggers, raw, row_counts, snapshot

LS = {"tool": "shell", "args": {"command": "ls"}}
RM = {"tool": "shell", "args": {"command": "rm -rf /"}}
EVIDENCE = ("events", "receipts", "decisions", "audit", "memory_mutations", "changes")


@pytest.fixture
def busy_path(tmp_path, busy_template):
    """A copy of the session's busy journal, plus rows whose secondary keys are set (an
    operator request id on a decision and an audit row, a memory idempotency key)."""
    path = tmp_path / "busy.db"
    shutil.copy2(busy_template[0], path)
    run_id = busy_template[1]["runs"][1]
    with (
        Journal.open(path, actor=Actor.agent("bot")) as agent,
        Journal.open(path, actor=Actor.operator("alice")) as alice,
    ):
        pending = agent.approvals.request(run_id, {"tool": "deploy"}, reason="ship")
        alice.approvals.decide(pending.id, True, expected_version=1, request_id="click-1")
        agent.memory.add("project", "proj", "keyed", "v1", idempotency_key="mem-1")
    return path


def tamper(path, *statements: tuple[str, tuple]) -> None:
    """What a same-user process can do: drop every trigger, then write."""
    with raw(path) as conn:
        drop_immutability_triggers(conn)
        for sql, params in statements:
            conn.execute(sql, params)


def restore_triggers(journal: Journal) -> None:
    journal.write(lambda tx: core_db.create_all_triggers(tx.conn))


def problems(journal: Journal) -> list[tuple[str, str]]:
    return [(p.what, p.where) for p in verify(journal).problems]


# ---------------------------------------------------------------- identity is immutable


IDENTITY = [(t, c) for t, cols in IDENTITY_COLUMNS.items() for c in cols]


@pytest.mark.parametrize(("table", "column"), IDENTITY)
def test_identity_columns_cannot_be_updated_by_raw_sql(busy_path, table, column):
    before = snapshot(busy_path)
    with raw(busy_path) as conn, pytest.raises(sqlite3.IntegrityError, match="immutable"):
        conn.execute(f"UPDATE {table} SET {column} = COALESCE({column} || 'x', 'x')")
    assert snapshot(busy_path) == before


@pytest.mark.parametrize("table", list(IDENTITY_COLUMNS))
def test_the_columns_that_change_with_state_still_change(busy_path, table):
    """The trigger guards identity only: status, version, snoozes are ordinary state."""
    with raw(busy_path) as conn:
        assert conn.execute(f"UPDATE {table} SET snoozed_until = 5.0").rowcount > 0


def test_every_identity_named_by_the_issue_is_guarded():
    assert {
        "action",
        "action_digest",
        "run_id",
        "attempt",
        "agent",
        "safety_class",
        "requested_scope",
        "expires_at",
        "on_expiry",
    } <= set(IDENTITY_COLUMNS["approvals"])
    assert {"key", "tool", "action", "action_digest", "run_id"} <= set(IDENTITY_COLUMNS["effects"])


# ---------------------------------------------------------------- no REPLACE, no upsert


def rewrite_cases() -> list[tuple[str, tuple[str, ...]]]:
    return [(t, key) for t, keys in UNIQUE_KEYS.items() for key in keys]


def forged_row(conn: sqlite3.Connection, table: str, key: tuple[str, ...]) -> dict:
    """An existing row with ``key`` kept, every other key made fresh and one ordinary
    column changed: what INSERT OR REPLACE would swap in for the row with that key."""
    conn.row_factory = sqlite3.Row
    where = " AND ".join(f"{c} IS NOT NULL" for c in key)
    row = dict(conn.execute(f"SELECT * FROM {table} WHERE {where} LIMIT 1").fetchone())
    conn.row_factory = None
    for other in UNIQUE_KEYS[table]:
        for col in other:
            if col in key:
                continue
            if isinstance(row[col], int):
                row[col] = conn.execute(f"SELECT MAX({col}) + 1000 FROM {table}").fetchone()[0]
            else:
                row[col] = f"forged-{col}"
    changeable = "created_at" if "created_at" in row else "status"
    row[changeable] = (row[changeable] + 1) if isinstance(row[changeable], float) else "forged"
    return row


def conflict_where(table: str, key: tuple[str, ...]) -> str:
    """`` WHERE …`` when ``key`` is unique by a partial index (0008x: only where it is set):
    an upsert's conflict target must name its rows, or the statement is not even valid."""
    for index in s.metadata.tables[table].indexes:
        where = index.dialect_options["sqlite"]["where"]
        if index.unique and where is not None and tuple(c.name for c in index.columns) == key:
            return f" WHERE {where}"
    return ""


@pytest.mark.parametrize(("table", "key"), rewrite_cases())
@pytest.mark.parametrize("how", ["INSERT OR REPLACE", "REPLACE", "upsert"])
def test_an_insert_onto_an_existing_key_is_refused(busy_path, table, key, how):
    """REPLACE's implicit delete fires no DELETE trigger (recursive_triggers is off on a
    tampering connection) and an upsert's DO UPDATE is an update of the old row: both
    must be refused by the schema itself."""
    before = snapshot(busy_path)
    with raw(busy_path) as conn:
        assert conn.execute("PRAGMA recursive_triggers").fetchone()[0] == 0
        row = forged_row(conn, table, key)
        cols, marks = ", ".join(row), ", ".join("?" * len(row))
        if how == "upsert":
            sets = ", ".join(f"{c} = excluded.{c}" for c in row if c not in key)
            sql = (
                f"INSERT INTO {table} ({cols}) VALUES ({marks}) "
                f"ON CONFLICT ({', '.join(key)}){conflict_where(table, key)} "
                f"DO UPDATE SET {sets}"
            )
        else:
            sql = f"{how} INTO {table} ({cols}) VALUES ({marks})"
        with pytest.raises(sqlite3.IntegrityError, match="immutable"):
            conn.execute(sql, tuple(row.values()))
    assert snapshot(busy_path) == before


def test_every_evidence_table_is_closed_to_replace():
    assert set(EVIDENCE) | {"approvals", "effects"} <= set(UNIQUE_KEYS)
    assert set(UNIQUE_KEYS) <= {t for t in (*EVIDENCE, "approvals", "effects")}


def test_new_keys_still_insert(agent, operator, run):
    """The no-replace triggers cost nothing to honest writes: a batch of events, a
    decision, a receipt, a memory change."""
    agent.runs.append_events(run.id, [("step", {"n": n}) for n in range(50)])
    approval = agent.approvals.request(run.id, LS, reason="list")
    operator.approvals.decide(approval.id, True, expected_version=1, request_id="r-1")
    agent.approvals.consume_and_reserve(approval.id, approval.action_digest, "fx", owner="w")
    agent.effects.begin("fx", owner="w")
    agent.effects.commit("fx", {"ok": 1}, owner="w")
    entry = agent.memory.add("project", "proj", "t", "a", idempotency_key="k")
    agent.memory.replace(entry.id, "b", expected_version=1)
    assert verify(operator).ok


# ---------------------------------------------------------------- the action is re-checked


def rewrite_action(
    path, table: str, key_col: str, key: str, action: dict, digest: str | None = None
) -> None:
    sets, params = "action = ?", [canonical_json(action)]
    if digest is not None:
        sets, params = sets + ", action_digest = ?", [*params, digest]
    tamper(path, (f"UPDATE {table} SET {sets} WHERE {key_col} = ?", (*params, key)))


def test_a_pending_action_rewritten_to_ls_is_shown_tampered_and_cannot_pass(
    agent, operator, run, journal_path
):
    """The issue's attack: the agent asks for `rm -rf /`, the file is rewritten so the
    operator would see `ls`; the digest still names `rm -rf /`."""
    asked = agent.approvals.request(run.id, RM, reason="clean up")
    rewrite_action(journal_path, "approvals", "id", asked.id, LS)
    restore_triggers(operator)
    shown = operator.approvals.get(asked.id)
    assert shown.action == LS and shown.tampered
    assert [a.tampered for a in operator.approvals.for_run(run.id)] == [True]
    before = row_counts(journal_path)
    with pytest.raises(errors.Tampered) as refused:
        operator.approvals.decide(asked.id, True, expected_version=asked.version)
    assert asked.id in str(refused.value) and refused.value.details["id"] == asked.id
    [result] = operator.approvals.bulk_decide([(asked.id, asked.version)], True)
    assert not result.ok and result.error_type == "Tampered"
    assert row_counts(journal_path) == before
    assert operator.approvals.get(asked.id).status == "pending"
    assert ("approval action tampered", f"approval {asked.id} (shell) in run {run.id}") in problems(
        operator
    )


def test_an_approved_ls_rewritten_to_rm_is_not_consumed_and_verify_names_it(
    agent, operator, run, journal_path
):
    """The operator saw and approved `ls`; then the file says `rm -rf /` (triggers dropped,
    the digest left alone): consuming is refused whatever digest the agent sends."""
    asked = agent.approvals.request(run.id, LS, reason="list")
    operator.approvals.decide(asked.id, True, expected_version=asked.version)
    rewrite_action(journal_path, "approvals", "id", asked.id, RM)
    restore_triggers(operator)
    before = snapshot(journal_path)
    for digest in (asked.action_digest, digest_of(RM)):
        with pytest.raises(errors.Tampered, match=asked.id):
            agent.approvals.consume_and_reserve(asked.id, digest, "fx-1", owner="w")
    assert snapshot(journal_path) == before  # no effect, no consumption, no event
    assert agent.approvals.get(asked.id).tampered
    report = verify(operator)
    assert not report.ok
    assert report.first_problem.what == "approval action tampered"
    assert asked.id in report.first_problem.where


def test_an_action_rewritten_with_a_matching_digest_differs_from_its_request_event(
    agent, operator, run, journal_path
):
    """Rewriting action and digest together passes the read check; the run's hash chain
    still says what was asked."""
    asked = agent.approvals.request(run.id, LS, reason="list")
    rewrite_action(journal_path, "approvals", "id", asked.id, RM, digest_of(RM))
    restore_triggers(operator)
    assert (
        "approval differs from its request event",
        f"approval {asked.id} (shell) in run {run.id}",
    ) in problems(operator)


def test_a_rewritten_effect_is_flagged_refused_and_reported(agent, operator, run, journal_path):
    asked = agent.approvals.request(run.id, LS, reason="list")
    operator.approvals.decide(asked.id, True, expected_version=asked.version)
    reserved = agent.approvals.consume_and_reserve(asked.id, asked.action_digest, "fx-1", owner="w")
    assert reserved.action_digest == asked.action_digest and not reserved.tampered
    rewrite_action(journal_path, "effects", "key", "fx-1", RM)
    restore_triggers(operator)
    assert agent.effects.get("fx-1").tampered
    assert agent.effects.context("fx-1").effect.tampered
    assert [e.tampered for e in agent.effects.list().items] == [True]
    with pytest.raises(errors.Tampered, match="fx-1"):
        agent.effects.begin("fx-1", owner="w")
    assert agent.effects.get("fx-1").status == "reserved"
    assert ("effect action tampered", "effect fx-1 (shell)") in problems(operator)


def test_an_effect_rewritten_with_a_matching_digest_differs_from_its_approval(
    agent, operator, run, journal_path
):
    asked = agent.approvals.request(run.id, LS, reason="list")
    operator.approvals.decide(asked.id, True, expected_version=asked.version)
    agent.approvals.consume_and_reserve(asked.id, asked.action_digest, "fx-1", owner="w")
    rewrite_action(journal_path, "effects", "key", "fx-1", RM, digest_of(RM))
    restore_triggers(operator)
    assert ("effect differs from its approval", "effect fx-1 (shell)") in problems(operator)


# ---------------------------------------------------------------- verify covers every table


def test_the_busy_journal_verifies_every_evidence_table(busy_path):
    counts = row_counts(busy_path)
    with Journal.open(busy_path, actor=Actor.operator("auditor")) as j:
        report = verify(j)
    assert report.ok, report.problems
    assert report.checked_rows == {
        t: counts[t] for t in ("receipts", "approvals", "effects", "memory_mutations")
    }


def test_a_rewritten_receipt_is_named(busy_path):
    with raw(busy_path) as conn:
        [rid] = conn.execute("SELECT id FROM receipts ORDER BY id LIMIT 1").fetchone()
    tamper(
        busy_path, ('UPDATE receipts SET evidence = \'{"result":"forged"}\' WHERE id = ?', (rid,))
    )
    with Journal.open(busy_path, actor=Actor.operator("auditor")) as j:
        restore_triggers(j)
        found = [p for p in verify(j).problems if p.what == "receipt digest mismatch"]
    assert len(found) == 1 and rid in found[0].where


def entry_with_history(path) -> tuple[str, list[str]]:
    with Journal.open(path, actor=Actor.agent("bot")) as agent:
        entry = agent.memory.add("project", "proj", "deploy day", "Monday")
        for n, day in enumerate(("Tuesday", "Wednesday", "Thursday"), start=1):
            agent.memory.replace(entry.id, day, expected_version=n)
        return entry.id, [m.id for m in agent.memory.history(entry.id)]


def test_a_rewritten_memory_mutation_breaks_its_entry_chain_at_the_first_edit(busy_path):
    entry_id, mutations = entry_with_history(busy_path)
    for version in (3, 2):  # two edits: verify names the earlier
        tamper(
            busy_path,
            (
                "UPDATE memory_mutations SET after_content = 'Friday' "
                "WHERE entry_id = ? AND version = ?",
                (entry_id, version),
            ),
        )
    with Journal.open(busy_path, actor=Actor.operator("auditor")) as j:
        restore_triggers(j)
        found = [(p.what, p.where) for p in verify(j).problems]
    assert found == [
        ("memory chain broken", f"memory entry {entry_id} mutation v2 ({mutations[1]})")
    ]


def test_a_deleted_memory_mutation_is_a_gap(busy_path):
    _entry_id, mutations = entry_with_history(busy_path)
    tamper(busy_path, ("DELETE FROM memory_mutations WHERE id = ?", (mutations[1],)))
    with Journal.open(busy_path, actor=Actor.operator("auditor")) as j:
        restore_triggers(j)
        [problem] = verify(j).problems
    assert problem.what == "memory mutation gap" and mutations[2] in problem.where


def test_a_memory_entry_rewritten_outside_its_history_is_named(busy_path):
    """An entry's fields change only with a new version (0009b's trigger); with the
    triggers dropped, its chain's end says what it must be."""
    entry_id, _ = entry_with_history(busy_path)
    rewrite = (
        "UPDATE memory_entries SET content = 'Sunday', content_hash = ? WHERE id = ?",
        (sha256_hex("Sunday"), entry_id),
    )
    with raw(busy_path) as conn, pytest.raises(sqlite3.IntegrityError, match="new version"):
        conn.execute(*rewrite)
    tamper(busy_path, rewrite)
    with Journal.open(busy_path, actor=Actor.operator("auditor")) as j:
        restore_triggers(j)
        assert problems(j) == [("memory head mismatch", f"memory entry {entry_id}")]


def test_a_cut_memory_history_tail_no_longer_matches_the_entry(busy_path):
    entry_id, mutations = entry_with_history(busy_path)
    tamper(busy_path, ("DELETE FROM memory_mutations WHERE id = ?", (mutations[-1],)))
    with Journal.open(busy_path, actor=Actor.operator("auditor")) as j:
        restore_triggers(j)
        assert problems(j) == [("memory head mismatch", f"memory entry {entry_id}")]


# ---------------------------------------------------------------- migration 0005


def test_a_0004_journal_upgrades_with_digests_backfilled(busy_path, downgrade):
    downgrade(busy_path, "0004")
    with raw(busy_path) as conn:
        names = {
            r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")
        }
    assert names == core_db.expected_trigger_names("0004")
    with Journal.open(busy_path, read_only=True) as old:  # not upgraded: still verifies
        assert old.schema_revision == "0004" and verify(old).ok, verify(old).problems
        assert old.effects.get("fx-1").action_digest is None
    with Journal.open(busy_path, actor=Actor.operator("alice")) as j:
        assert j.schema_revision == core_db.SCHEMA_HEAD and not j.missing_triggers()
        report = verify(j)
        assert report.ok, report.problems
        assert report.checked_rows["memory_mutations"] == row_counts(busy_path)["memory_mutations"]
        effect = j.effects.get("fx-1")
        assert effect.action_digest == digest_of(effect.action) and not effect.tampered
    with raw(busy_path) as conn:
        assert conn.execute(
            "SELECT COUNT(*) FROM memory_mutations WHERE digest IS NULL OR prev_digest IS NULL"
        ).fetchone() == (0,)
