"""Comment threads on inbox items (issue 35) on both stores: a comment is written with its
decision (signed when the operator has a key) and audit row, chained per item, and the
store refuses what a same-user process tries by hand (raw SQL on the file; psycopg as the
journal's owner on a server): an UPDATE of any column, a DELETE, a put over its key, a
comment out of order, with another previous digest, on no item, by an agent or without its
decision. What verify names once the triggers are dropped (or replaced by a no-op)."""

from __future__ import annotations

import sqlite3

import pytest

from proctor.core import Actor, errors
from proctor.core.audit.verify import verify
from proctor.core.kernel.canonical import ZERO_DIGEST
from proctor.core.models import ChangeKind
from proctor.core.storage import census

from .helpers import drop_trigger, raw, snapshot

ACTION = {"tool": "pay", "args": {"account": "acme", "amount": 9000}}


@pytest.fixture
def asked(agent, run):
    return agent.approvals.request(run.id, ACTION, reason="invoice 7")


@pytest.fixture
def thread(operator, open_journal, asked):
    """Three comments on one approval: alice, bob, alice."""
    bob = open_journal(Actor.operator("bob"))
    operator.comments.add(asked.id, "who is acme?")
    bob.comments.add(asked.id, "our cloud vendor; the amount matches the PO")
    operator.comments.add(asked.id, "thanks")
    return asked


def whats(journal) -> set[str]:
    return {p.what for p in verify(journal).problems}


def test_a_comment_is_evidence_with_its_decision_and_audit_row(operator, open_journal, asked):
    posted = operator.comments.add(asked.id, "  who is acme?\n")
    assert (posted.seq, posted.author, posted.text) == (1, "operator:alice", "who is acme?")
    assert posted.item_kind == "approval" and posted.item_id == asked.id
    bob = open_journal(Actor.operator("bob"))
    second = bob.comments.add(asked.id, "our vendor")
    assert [(c.seq, c.author) for c in operator.comments.thread(asked.id)] == [
        (1, "operator:alice"),
        (2, "operator:bob"),
    ]
    decisions = operator.approvals.decisions(second.id)
    assert [(d.target_kind, d.actor) for d in decisions] == [("comment", "operator:bob")]
    assert decisions[0].decision["digest"] == second.digest
    assert [a.action for a in operator.audit.for_entity(second.id)] == ["comment.added"]
    feed = operator.changes.since(0)
    assert asked.id in feed.ids(ChangeKind.COMMENT)
    assert operator.approvals.get(asked.id).status == "pending"  # a comment decides nothing
    assert verify(operator).ok


def test_a_question_and_an_effect_take_comments_too(operator, agent, run):
    question = agent.questions.ask(run.id, "question", "Which region?")
    operator.comments.add(question.id, "eu, as last time")
    assert [c.item_kind for c in operator.comments.thread(question.id)] == ["question"]
    effect = agent.effects.reserve("send-invoice-7", tool="mail", run_id=run.id)
    operator.comments.add(effect.key, "watch this one", kind="effect")
    assert [c.item_kind for c in operator.comments.thread(effect.key)] == ["effect"]
    assert verify(operator).ok


def test_an_agent_cannot_comment_and_bad_text_is_refused_whole(
    operator, agent, asked, journal_path
):
    before = snapshot(journal_path)
    with pytest.raises(errors.NotAllowed):
        agent.comments.add(asked.id, "I approve myself")
    for text in ("", "   ", "x" * 20_001, "a\x00b"):
        with pytest.raises(errors.ValidationError):
            operator.comments.add(asked.id, text)
    with pytest.raises(errors.NotFound):
        operator.comments.add("apr_nothing", "hello")
    with pytest.raises(errors.ValidationError):
        operator.comments.add(asked.id, "hello", kind="run")
    assert snapshot(journal_path) == before


def test_the_same_request_id_writes_one_comment(operator, asked):
    first = operator.comments.add(asked.id, "once", request_id="req-1")
    again = operator.comments.add(asked.id, "once", request_id="req-1")
    assert again.id == first.id and len(operator.comments.thread(asked.id)) == 1
    with pytest.raises(errors.IdempotencyConflict):
        operator.comments.add(asked.id, "twice", request_id="req-1")


def test_a_comment_is_signed_with_the_operators_key(open_journal, tmp_path, agent, asked):
    import json

    from proctor.core.decisions.keys import OperatorKey, trust_file

    key = OperatorKey.generate("carol")
    trust = tmp_path / "trusted.json"
    trust.write_text(json.dumps(trust_file([{"name": "carol", "public_key": key.public_key}])))
    carol = open_journal(Actor.operator("carol"), signer=key)
    posted = carol.comments.add(asked.id, "signed words")
    decision = carol.approvals.decisions(posted.id)[0]
    assert carol.signatures.states([decision.id])[decision.id].state == "signed"
    report = verify(carol, trust=trust)
    assert report.ok, report.problems
    assert report.signatures["unsigned"] == 0


# ---------------------------------------------------------------- by hand


def refused(journal_path, sql: str, params: tuple = (), match: str | None = None) -> None:
    before = snapshot(journal_path)
    with raw(journal_path) as conn, pytest.raises(sqlite3.IntegrityError, match=match):
        conn.execute(sql, params)
    assert snapshot(journal_path) == before


def first_row(journal_path, item_id: str) -> dict:
    with raw(journal_path) as conn:
        cur = conn.execute(
            "SELECT * FROM comments WHERE item_id = ? ORDER BY seq LIMIT 1", (item_id,)
        )
        names = [d[0] for d in cur.description]
        return dict(zip(names, cur.fetchone(), strict=True))


@pytest.mark.parametrize("column", census.columns("comments"))
def test_an_update_of_any_column_is_refused(thread, journal_path, column):
    value = 7 if column in ("seq", "created_at") else "forged"
    refused(
        journal_path,
        f"UPDATE comments SET {column} = ? WHERE item_id = ?",
        (value, thread.id),
        match="immutable",
    )


def test_a_delete_or_a_put_over_its_key_is_refused(thread, journal_path):
    refused(journal_path, "DELETE FROM comments WHERE item_id = ?", (thread.id,), "immutable")
    row = first_row(journal_path, thread.id)
    cols = ", ".join(row)
    marks = ", ".join("?" for _ in row)
    forged = {**row, "body": "I never said that"}
    refused(
        journal_path,
        f"INSERT OR REPLACE INTO comments ({cols}) VALUES ({marks})",
        tuple(forged.values()),
    )
    other = {**forged, "id": "cmt_other"}  # a new id over the item's first place
    refused(
        journal_path,
        f"INSERT INTO comments ({cols}) VALUES ({marks})",
        tuple(other.values()),
    )


def forged_insert(item_id: str, *, seq: int, prev: str, decision: str, author="operator:alice"):
    return (
        "INSERT INTO comments (id, item_kind, item_id, seq, author, body, decision_id, "
        "created_at, prev_digest, digest) VALUES ('cmt_forged', 'approval', ?, ?, ?, "
        "'forged', ?, 1.0, ?, 'x')",
        (item_id, seq, author, decision, prev),
    )


def forged_decision(journal_path, run_id: str, actor="operator:alice", did="dec_forged") -> str:
    with raw(journal_path) as conn:
        conn.execute(
            "INSERT INTO decisions (id, target_kind, target_id, run_id, decision, actor, source, "
            "reason, created_at, digest) VALUES (?, 'comment', 'cmt_forged', ?, "
            "'{}', ?, 'cli', NULL, 1.0, 'x')",
            (did, run_id, actor),
        )
    return did


def test_a_comment_out_of_its_chain_is_refused(thread, journal_path, run):
    decision = forged_decision(journal_path, run.id)
    with raw(journal_path) as conn:
        last = conn.execute(
            "SELECT digest FROM comments WHERE item_id = ? AND seq = 3", (thread.id,)
        ).fetchone()[0]
    cases: tuple[tuple[int, str, str | None], ...] = (
        (4, ZERO_DIGEST, "digest of the item's previous comment"),
        (4, "f" * 64, "digest of the item's previous comment"),
        (6, last, None),  # a gap (refused as out of order or as naming no previous one)
        (2, last, None),  # a place taken already
    )
    for seq, prev, match in cases:
        sql, params = forged_insert(thread.id, seq=seq, prev=prev, decision=decision)
        refused(journal_path, sql, params, match)


def test_a_comment_without_its_decision_by_an_agent_or_on_no_item_is_refused(
    thread, journal_path, run
):
    with raw(journal_path) as conn:
        last = conn.execute(
            "SELECT digest FROM comments WHERE item_id = ? AND seq = 3", (thread.id,)
        ).fetchone()[0]
    sql, params = forged_insert(thread.id, seq=4, prev=last, decision="dec_none")
    refused(journal_path, sql, params, "recorded with its decision")
    decision = forged_decision(journal_path, run.id, actor="agent:agent-1")
    sql, params = forged_insert(
        thread.id, seq=4, prev=last, decision=decision, author="agent:agent-1"
    )
    refused(journal_path, sql, params, "written by an operator")
    decision = forged_decision(journal_path, run.id, did="dec_alice")
    sql, params = forged_insert("apr_nothing", seq=1, prev=ZERO_DIGEST, decision=decision)
    refused(journal_path, sql, params, "that exists")


def test_the_migration_installs_the_triggers_the_head_builds():
    import importlib

    from proctor.core.storage import comment_sql

    frozen = importlib.import_module("proctor.core.storage.migrations.versions.0017c_comments")
    assert comment_sql.sqlite_sql() == frozen.SQLITE
    assert comment_sql.server_sql() == frozen.SERVER


# ---------------------------------------------------------------- past dropped triggers


COMMENT_TRIGGERS = (
    "trg_comments_no_update",
    "trg_comments_no_delete",
    "trg_comments_no_replace",
    "trg_comments_in_order",
    "trg_comments_chained",
    "trg_comments_decided",
)


def without_triggers(journal_path, *statements: tuple[str, tuple]) -> None:
    with raw(journal_path) as conn:
        for name in COMMENT_TRIGGERS:
            drop_trigger(conn, name, "comments")
        for sql, params in statements:
            conn.execute(sql, params)


def test_verify_names_an_edited_comment(thread, journal_path, operator):
    without_triggers(
        journal_path,
        ("UPDATE comments SET body = 'approve it' WHERE item_id = ? AND seq = 2", (thread.id,)),
    )
    found = whats(operator)
    assert {"trigger missing", "comment altered"} <= found


def test_verify_names_a_deleted_comment(thread, journal_path, operator):
    without_triggers(
        journal_path, ("DELETE FROM comments WHERE item_id = ? AND seq = 2", (thread.id,))
    )
    assert {"comment chain broken", "comment missing"} <= whats(operator)


def test_verify_names_the_last_comment_deleted(thread, journal_path, operator):
    without_triggers(
        journal_path, ("DELETE FROM comments WHERE item_id = ? AND seq = 3", (thread.id,))
    )
    assert "comment missing" in whats(operator)


def test_verify_names_a_reordered_thread(thread, journal_path, operator):
    without_triggers(
        journal_path,
        ("UPDATE comments SET seq = 10 WHERE item_id = ? AND seq = 1", (thread.id,)),
        ("UPDATE comments SET seq = 1 WHERE item_id = ? AND seq = 2", (thread.id,)),
        ("UPDATE comments SET seq = 2 WHERE item_id = ? AND seq = 10", (thread.id,)),
    )
    assert {"comment chain broken", "comment altered"} <= whats(operator)


def test_verify_names_a_forged_comment_that_keeps_the_chain(
    thread, journal_path, operator, open_journal, tmp_path, run
):
    """The forger recomputes the digests (sha256 is no secret) and writes a decision row:
    the decision lacks its audit row, and with trust configured it is unsigned."""
    import json

    from proctor.core.comments.rows import digest_of_row
    from proctor.core.decisions.keys import OperatorKey, trust_file
    from proctor.core.kernel.canonical import digest_of

    with raw(journal_path) as conn:
        last = conn.execute(
            "SELECT digest FROM comments WHERE item_id = ? AND seq = 3", (thread.id,)
        ).fetchone()[0]
    row = dict(
        id="cmt_forged",
        item_kind="approval",
        item_id=thread.id,
        seq=4,
        author="operator:bob",
        body="approved on the phone",
        created_at=5.0,
        prev_digest=last,
    )
    row["digest"] = digest_of_row(last, row)
    content = {"item_kind": "approval", "item_id": thread.id, "seq": 4, "digest": row["digest"]}
    body = {
        "target_kind": "comment",
        "target_id": "cmt_forged",
        "decision": content,
        "actor": "operator:bob",
        "reason": None,
        "created_at": 5.0,
    }
    with raw(journal_path) as conn:
        conn.execute(
            "INSERT INTO decisions (id, target_kind, target_id, run_id, decision, actor, source, "
            "reason, created_at, digest) VALUES ('dec_forged', 'comment', 'cmt_forged', ?, ?, "
            "'operator:bob', 'cli', NULL, 5.0, ?)",
            (run.id, json.dumps(content, sort_keys=True, separators=(",", ":")), digest_of(body)),
        )
        conn.execute(
            "INSERT INTO comments (id, item_kind, item_id, seq, author, body, decision_id, "
            "created_at, prev_digest, digest) VALUES (?, ?, ?, ?, ?, ?, 'dec_forged', ?, ?, ?)",
            (
                row["id"],
                row["item_kind"],
                row["item_id"],
                row["seq"],
                row["author"],
                row["body"],
                row["created_at"],
                row["prev_digest"],
                row["digest"],
            ),
        )
    assert "decision without audit row" in whats(operator)
    key = OperatorKey.generate("alice")
    trust = tmp_path / "trusted.json"
    trust.write_text(json.dumps(trust_file([{"name": "bob", "public_key": key.public_key}])))
    problems = verify(operator, trust=trust).problems
    assert any(p.what == "decision unsigned" and "cmt_forged" in p.where for p in problems), (
        problems
    )


@pytest.mark.sqlite_only
def test_verify_names_a_trigger_put_back_as_a_no_op(thread, journal_path, operator):
    with raw(journal_path) as conn:
        conn.execute("DROP TRIGGER trg_comments_no_update")
        conn.execute(
            "CREATE TRIGGER trg_comments_no_update BEFORE UPDATE ON comments BEGIN SELECT 1; END"
        )
        conn.execute("UPDATE comments SET body = 'approve it' WHERE item_id = ?", (thread.id,))
    found = whats(operator)
    assert {"trigger altered", "comment altered"} <= found
