"""`proctor migrate-to`: a journal file copied whole into another journal (a file here; the
PostgreSQL variants are in test_migrate_to_server.py), verified on arrival; a target with
anything in it is refused with nothing written."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from sqlalchemy import select

from proctor.core import Actor, Journal, errors
from proctor.core.audit.verify import verify
from proctor.core.decisions.keys import OperatorKey, trust_file
from proctor.core.ops.migrate_to import copied_tables, migrate_to
from proctor.core.storage import schema as s

from .conftest import AGENT, OPERATOR
from .helpers import drop_immutability_triggers, raw


@pytest.fixture
def key() -> OperatorKey:
    return OperatorKey.generate(OPERATOR)


@pytest.fixture
def trust_path(tmp_path, key) -> Path:
    path = tmp_path / "trusted.json"
    path.write_text(json.dumps(trust_file([{"name": OPERATOR, "public_key": key.public_key}])))
    return path


@pytest.fixture
def source(tmp_path, busy_template, key) -> Path:
    """A journal with a row in every table, plus decisions signed by the operator's key."""
    path = tmp_path / "source.db"
    shutil.copy2(busy_template[0], path)
    with (
        Journal.open(path, actor=Actor.agent(AGENT)) as agent,
        Journal.open(path, actor=Actor.operator(OPERATOR), signer=key) as signer,
    ):
        run = agent.runs.start("proj", "signed run")
        for n in range(3):
            approval = agent.approvals.request(run.id, {"tool": "shell", "n": n}, reason="go")
            signer.approvals.decide(
                approval.id, n != 1, expected_version=1, reason=None if n != 1 else "no"
            )
        fill_policies(agent, Journal.open(path, actor=Actor.operator("bob")), run.id)
    return path


def fill_policies(agent: Journal, op: Journal, run_id: str) -> None:
    """0014p's tables filled (unsigned, as the busy journal's are): a group, a policy and a
    revoked one, a request under a policy with one of its two steps."""
    from proctor.core.policies.models import PolicyDraft, PolicyStage

    with op:
        op.policies.add_member("ops", "bob")
        stage = PolicyStage(groups=["ops"], need=2)
        op.policies.add(PolicyDraft(name="two", action_pattern="pay", stages=[stage]))
        old = op.policies.add(PolicyDraft(name="old", action_pattern="old", stages=[stage]))
        op.policies.revoke(old.id, "replaced")
        op.policies.delegate("carol", until=op.now() + 3600, reason="away")
        ended = op.policies.delegate("dave", until=op.now() + 3600, reason="away")
        op.policies.end_delegation(ended.id, reason="back early")  # 0018e
        late = dict(escalate_after=60, escalate_to="managers", at_deadline="deny", deadline=3600)
        op.policies.add(PolicyDraft(name="late", action_pattern="late", stages=[stage], **late))
        asked = agent.approvals.request(run_id, {"tool": "pay"}, reason="governed")
        op.approvals.decide(asked.id, True, expected_version=asked.version)
        op.assignments.assign_to_me("approval", asked.id)  # 0016a's row


def every_row(journal: Journal) -> dict[str, list[tuple]]:
    """Every table's rows as stored, in key order (journal_meta included)."""

    def read(conn):
        tables = [*copied_tables(), s.journal_meta]
        return {
            t.name: [tuple(r) for r in conn.execute(select(t).order_by(*t.primary_key.columns))]
            for t in tables
        }

    return journal.read(read)


def migrate(source_path: Path, target_url: str, trust=None):
    with (
        Journal.open(source_path, actor=Actor.operator(OPERATOR), read_only=True) as src,
        Journal.open(target_url, actor=Actor.operator(OPERATOR)) as dst,
    ):
        return migrate_to(src, dst, trust=trust), every_row(src), every_row(dst)


def test_every_row_arrives_byte_for_byte_and_every_chain_verifies(source, tmp_path, trust_path):
    target = tmp_path / "team.db"
    report, before, after = migrate(source, str(target))
    assert report.ok, report.verify.problems
    assert after == before  # ids, times, JSON text, digests, signatures, the journal id
    assert all(before[t.name] for t in copied_tables()), "the source must fill every table"
    assert report.rows == {
        name: len(rows) for name, rows in before.items() if name != "journal_meta"
    }
    assert report.verify.checked_runs == len(before["runs"])
    # signatures name the journal id: with trust, the copy verifies exactly as the source
    with Journal.open(source, actor=Actor.operator(OPERATOR), read_only=True) as j:
        at_home = verify(j, trust=trust_path)
    with Journal.open(target, actor=Actor.operator(OPERATOR), read_only=True) as j:
        arrived = verify(j, trust=trust_path)
    assert arrived.signatures == at_home.signatures
    assert arrived.signatures["signed"] == 3 and arrived.signatures["invalid"] == 0
    assert arrived.problems == at_home.problems  # the busy journal's unsigned decisions


def test_the_copy_keeps_its_evidence_protected(source, tmp_path):
    target = tmp_path / "team.db"
    migrate(source, str(target))
    with Journal.open(target, actor=Actor.operator(OPERATOR)) as j:
        assert j.missing_triggers() == set()
        assert verify(j).ok
    with raw(target) as conn:
        for statement in (
            "UPDATE journal_meta SET value = 'jnl_other'",
            "UPDATE events SET payload = '{}'",
            "DELETE FROM decisions",
        ):
            with pytest.raises(Exception, match="immutable"):
                conn.execute(statement)


def test_a_target_with_anything_in_it_is_refused_and_nothing_is_written(source, tmp_path):
    target = tmp_path / "team.db"
    with Journal.open(target, actor=Actor.agent(AGENT)) as j:
        j.runs.start("proj", "already here")
        before = every_row(j)
    with pytest.raises(errors.NotAllowed, match=r"not empty: its [a-z_]+ table has rows"):
        migrate(source, str(target))
    with Journal.open(target, actor=Actor.agent(AGENT)) as j:
        assert every_row(j) == before


def test_a_second_migration_into_the_same_target_is_refused(source, tmp_path):
    target = tmp_path / "team.db"
    migrate(source, str(target))
    with pytest.raises(errors.NotAllowed, match="not empty"):
        migrate(source, str(target))


def test_a_source_altered_behind_the_journal_does_not_verify_on_arrival(source, tmp_path):
    with raw(source) as conn:
        drop_immutability_triggers(conn)
        conn.execute(
            "UPDATE events SET payload = '{\"i\": 99}' WHERE sequence = 2 AND "
            "run_id = (SELECT run_id FROM events WHERE sequence = 2 LIMIT 1)"
        )
    report, _before, _after = migrate(source, str(tmp_path / "team.db"))
    assert not report.ok
    assert report.verify.problems[0].what == "event chain broken"
    assert "event #2" in report.verify.problems[0].where
