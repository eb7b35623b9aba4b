"""Every operator command: its happy path and its main refusals, by exit code and message."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from proctor.core import Actor, InboxFilter, InboxKind, Journal

from .conftest import OPERATOR

COMMANDS = [
    "inbox",
    "show",
    "approve",
    "deny",
    "answer",
    "resolve-effect",
    "resolve-memory",
    "snooze",
    "cancel",
    "runs",
    "timeline",
    "verify",
    "export",
    "simulate",
    "demo-journal",
]


def pending(path: Path, kind: str, **filters: object) -> list:
    """The open items of ``kind``, newest first, but for those under an approval policy (the
    demo's deploy needs two people of ops: one operator alone does not decide it)."""
    with Journal.open(path, read_only=True) as j:
        f = InboxFilter(kinds=frozenset({InboxKind(kind)}), **filters)
        return [i for i in j.inbox.list(f, limit=500).items if i.progress is None]


def question_of(path: Path, kind: str) -> str:
    with Journal.open(path, read_only=True) as j:
        for item in pending(path, "question"):
            if j.questions.get(item.id).kind.value == kind:
                return item.id
    raise AssertionError(f"no open {kind} question")


def read(path: Path, fn):
    with Journal.open(path, read_only=True) as j:
        return fn(j)


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help_naming_the_exit_codes(cli, command: str) -> None:
    result = cli(command, "--help")
    assert result.rc == 0
    assert "exit status" in result.out and "3  the journal cannot be used" in result.out


def test_inbox_lists_every_kind(cli, journal: Path) -> None:
    result = cli("inbox", "--limit", "500")
    assert result.rc == 0
    from collections import Counter

    from proctor.core import Journal
    from proctor.core.models import InboxFilter

    with Journal.open(journal, read_only=True) as j:
        kinds = Counter(i.kind.value for i in j.inbox.list(InboxFilter(), limit=500).items)
    assert all(kinds[k] > 0 for k in ("approval", "question", "conflict", "effect"))
    total = sum(kinds.values())
    assert (
        f"{total} waiting (approval {kinds['approval']}, question {kinds['question']}, "
        f"conflict {kinds['conflict']}, effect {kinds['effect']})"
    ) in result.out
    data = json.loads(cli("inbox", "--json", "--details", "--limit", "500").out)
    assert {i["kind"] for i in data["items"]} == {"approval", "question", "conflict", "effect"}
    assert data["counts"] == dict(kinds)
    approval = next(i for i in data["items"] if i["kind"] == "approval")
    assert approval["detail"]["action"]["tool"] == approval["summary"].split(":")[0]
    only = json.loads(cli("inbox", "--json", "--kind", "effect").out)["items"]
    assert len(only) == 8 and {i["kind"] for i in only} == {"effect"}
    page = json.loads(cli("inbox", "--json", "--limit", "5").out)
    rest = json.loads(cli("inbox", "--json", "--limit", "5", "--cursor", page["next_cursor"]).out)
    assert not {i["id"] for i in page["items"]} & {i["id"] for i in rest["items"]}


def test_a_missing_or_unnamed_journal_is_explained(
    cli, journal: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = cli("inbox", "--journal", tmp_path / "nope.db")
    assert result.rc == 3 and "no journal at" in result.err
    assert not (tmp_path / "nope.db").exists(), "a typo must not create a journal"
    monkeypatch.delenv("PROCTOR_JOURNAL")
    result = cli("runs")
    assert result.rc == 2 and "--journal PATH or set PROCTOR_JOURNAL" in result.err


def test_a_newer_or_foreign_file_is_refused(cli, journal: Path, tmp_path: Path) -> None:
    with sqlite3.connect(journal) as conn:
        conn.execute("UPDATE alembic_version SET version_num = '9999'")
    result = cli("inbox")
    assert result.rc == 3 and "newer than this Proctor knows" in result.err
    assert "Upgrade Proctor" in result.err
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not a database" * 100)
    result = cli("runs", "--journal", junk)
    assert result.rc == 3 and "error:" in result.err


def test_a_locked_journal_is_reported_busy(cli, journal: Path) -> None:
    item = pending(journal, "approval")[0]
    holder = sqlite3.connect(journal, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        result = cli("approve", item.id, "--timeout", "0.2", "--yes")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert result.rc == 3 and "busy" in result.err
    assert cli("approve", item.id, "--yes").rc == 0


def test_show_dispatches_by_id(cli, journal: Path) -> None:
    approval = pending(journal, "approval")[0]
    result = cli("show", approval.id)
    assert result.rc == 0 and f"approval {approval.id}  [pending]" in result.out
    assert f"next: proctor approve {approval.id}" in result.out
    merge = question_of(journal, "merge_conflict")
    result = cli("show", merge)
    assert result.rc == 0 and "merge_conflict" in result.out
    assert "ours (" in result.out and "theirs (" in result.out and "answer schema" in result.out
    conflict = pending(journal, "conflict")[0]
    result = cli("show", conflict.id)
    assert result.rc == 0 and "local (version" in result.out and "incoming" in result.out
    entry_id = json.loads(cli("show", conflict.id, "--json").out)["entry"]["id"]
    assert "history:" in cli("show", entry_id).out
    effect = pending(journal, "effect")[0]
    result = cli("show", effect.id)
    assert result.rc == 0 and "[ambiguous]" in result.out and "resolve-effect" in result.out
    result = cli("show", approval.run_id, "--json")
    data = json.loads(result.out)
    assert data["kind"] == "run" and data["item"]["id"] == approval.run_id
    assert approval.id in {a["id"] for a in data["approvals"]}


def test_show_refuses_unknown_ids(cli, journal: Path) -> None:
    result = cli("show", "apr_doesnotexist")
    assert result.rc == 1 and "does not exist" in result.err
    result = cli("show", "no-such-thing")
    assert result.rc == 1 and "nothing has the id" in result.err and "apr_" in result.err


def test_show_prints_agent_text_literally_and_bounded(cli, journal: Path) -> None:
    hostile = (
        "<img src=x onerror=alert(1)> <b>bold</b> \x1b[31mred\x1b[0m "
        "evil\u202egpj.exe\n" + "A" * 5000
    )
    with Journal.open(journal, actor=Actor.agent("mallory")) as agent:
        run = agent.runs.start("infra", "<script>alert(1)</script>")
        asked = agent.questions.ask(run.id, "question", hostile)
    out = cli("show", asked.id).out
    assert "<img src=x onerror=alert(1)> <b>bold</b>" in out
    assert "\x1b" not in out and "\u202e" not in out
    assert "\\x1b[31mred" in out and "evil\\u202egpj.exe" in out
    assert "more characters; use --full" in out
    assert "A" * 5000 in cli("show", asked.id, "--full").out
    assert "<script>alert(1)</script>" in cli("runs", "--limit", "3").out


def test_show_names_where_a_request_came_from_escaped(cli, journal: Path) -> None:
    origin = {
        "runtime": "mcp",
        "process": "refund_agent\x1b]0;owned\x07",
        "pid": 4242,
        "host": "build-7",
        "tool": "request_approval",
        "client": "refund-bot\n1.0",
    }
    with Journal.open(journal, actor=Actor.agent("refund-bot")) as agent:
        run = agent.runs.start("shop", "refunds")
        approval = agent.approvals.request(run.id, {"tool": "refund"}, reason="r", origin=origin)
        effect = agent.effects.reserve(
            "fx-origin",
            tool="bank.refund",
            run_id=run.id,
            origin={"runtime": "langgraph", "tool": "refund"},
        )
    out = cli("show", approval.id).out
    [line] = [li for li in out.splitlines() if li.startswith("origin")]
    assert "mcp · refund_agent\\x1b]0;owned\\x07 (pid 4242 on build-7)" in line
    assert "tool request_approval · client refund-bot\\n1.0" in line
    assert "(as the agent reports it)" in line and "\x1b" not in out
    assert "origin      langgraph" in cli("show", effect.key).out


def test_approve_then_refusals(cli, journal: Path) -> None:
    first, second = pending(journal, "approval")[:2]
    result = cli("approve", first.id, "--reason", "looks right", "--yes")
    assert result.rc == 0 and result.out.startswith(f"approved {first.id}")
    decided = read(journal, lambda j: j.approvals.get(first.id))
    assert decided.status.value == "approved" and decided.decided_by == f"operator:{OPERATOR}"
    assert decided.decision_reason == "looks right"
    decisions = read(journal, lambda j: j.approvals.decisions(first.id))
    assert decisions[-1].source == "cli" and decisions[-1].request_id.startswith("cli-")
    again = cli("approve", first.id, "--yes")
    assert again.rc == 1 and "already approved by operator:tester" in again.err
    stale = cli("approve", second.id, "--expect-version", "9", "--yes")
    assert stale.rc == 1 and "you saw 9" in stale.err and "Reload" in stale.err
    own = cli("approve", second.id, "--as", second.agent, "--yes")
    assert own.rc == 1 and "cannot approve it" in own.err
    wrong = cli("approve", pending(journal, "question")[0].id)
    assert wrong.rc == 1 and "is not an approval id" in wrong.err


def test_approve_for_the_run_creates_a_rule(cli, journal: Path) -> None:
    item = pending(journal, "approval")[0]
    result = cli("approve", item.id, "--scope", "run", "--yes")
    assert result.rc == 0 and "scope run, rule rule_" in result.out
    rules = read(journal, lambda j: j.approvals.rules())
    assert any(r.source_approval_id == item.id and r.run_id == item.run_id for r in rules)


def test_a_retried_request_id_is_safe(cli, journal: Path) -> None:
    item = pending(journal, "approval")[0]
    args = (
        "approve",
        item.id,
        "--request-id",
        "retry-1",
        "--expect-version",
        item.version,
        "--yes",
    )
    assert cli(*args).rc == 0
    assert cli(*args).rc == 0
    assert len(read(journal, lambda j: j.approvals.decisions(item.id))) == 1


def test_deny_needs_a_reason(cli, journal: Path) -> None:
    item = pending(journal, "approval")[0]
    result = cli("deny", item.id)
    assert result.rc == 2 and "--reason" in result.err
    result = cli("deny", item.id, "--reason", "use the staging account")
    assert result.rc == 0 and result.out.startswith(f"denied {item.id}")
    assert read(journal, lambda j: j.approvals.get(item.id)).status.value == "denied"


def test_answer_is_validated_against_the_schema(cli, journal: Path) -> None:
    ident = question_of(journal, "diff_review")
    bad = cli("answer", ident, "--json", '{"verdict": "maybe"}')
    assert bad.rc == 1 and "verdict" in bad.err and f"proctor show {ident}" in bad.err
    missing = cli("answer", ident, "--json", '{"comment": "?"}')
    assert missing.rc == 1 and "verdict" in missing.err
    malformed = cli("answer", ident, "--json", '{"verdict": ')
    assert malformed.rc == 2 and "not valid JSON" in malformed.err
    good = cli("answer", ident, "--json", '{"verdict": "approve", "comment": "ship it"}')
    assert good.rc == 0 and good.out.strip() == f"answered {ident} (diff_review)"
    answered = read(journal, lambda j: j.questions.get(ident))
    assert answered.status.value == "resolved" and answered.response["comment"] == "ship it"
    again = cli("answer", ident, "--json", '{"verdict": "approve"}')
    assert again.rc == 1 and "already resolved" in again.err


def test_answer_shortcuts(cli, journal: Path, tmp_path: Path) -> None:
    assert cli("answer", question_of(journal, "question"), "--text", "use stg-db-3").rc == 0
    assert cli("answer", question_of(journal, "choice"), "--choice", "quarantine").rc == 0
    assert cli("answer", question_of(journal, "confirmation"), "--decline").rc == 0
    answer = tmp_path / "answer.json"
    answer.write_text('{"credential_ref": "vault://shared/github"}')
    assert cli("answer", question_of(journal, "credential_binding"), "--json", f"@{answer}").rc == 0
    result = cli("answer", question_of(journal, "form"), "--text", "hello")
    assert result.rc == 1 and "does not fit" in result.err


def test_resolve_effect(cli, journal: Path) -> None:
    key = pending(journal, "effect")[0].id
    assert cli("resolve-effect", key, "committed").rc == 2
    result = cli(
        "resolve-effect",
        key,
        "committed",
        "--reason",
        "seen in the dashboard",
        "--external-id",
        "re_42",
        "--evidence",
        '{"screenshot": "s.png"}',
    )
    assert result.rc == 0 and "as committed" in result.out
    effect = read(journal, lambda j: j.effects.get(key))
    assert effect.status.value == "committed" and effect.resolved_by == f"operator:{OPERATOR}"
    receipts = read(journal, lambda j: j.effects.receipts(key))
    assert receipts[-1].external_id == "re_42"
    assert [d.source for d in read(journal, lambda j: j.approvals.decisions(key))] == ["cli"]
    resolved = read(journal, lambda j: j.audit.for_entity(key))[-1]
    assert resolved.action == "effect.resolved_committed" and resolved.source == "cli"
    again = cli("resolve-effect", key, "failed", "--reason", "changed my mind")
    assert again.rc == 1 and "not ambiguous" in again.err


def test_resolve_conflict(cli, journal: Path) -> None:
    item = pending(journal, "conflict")[0]
    assert cli("resolve-conflict", item.id, "merge").rc == 2
    result = cli("resolve-conflict", item.id, "take-incoming", "--reason", "newer")
    assert result.rc == 0 and "accepted_incoming" in result.out
    conflict = read(journal, lambda j: j.memory.conflict(item.id))
    entry = read(journal, lambda j: j.memory.get(conflict.entry_id))
    assert entry.content == conflict.incoming_content
    assert [d.source for d in read(journal, lambda j: j.approvals.decisions(item.id))] == ["cli"]
    assert read(journal, lambda j: j.audit.for_entity(item.id))[-1].source == "cli"
    again = cli("resolve-conflict", item.id, "dismiss", "--reason", "stale")
    assert again.rc == 1 and "already" in again.err
    other = pending(journal, "conflict")[0]
    assert cli("resolve-conflict", other.id, "keep-local").rc == 2  # a reason, as on the desk
    assert cli("resolve-conflict", other.id, "keep-local", "--reason", "  ").rc == 1
    assert read(journal, lambda j: j.memory.conflict(other.id)).status.value == "pending"
    assert (
        cli(
            "resolve-conflict",
            other.id,
            "merge",
            "--content",
            "both are true",
            "--reason",
            "both hold",
        ).rc
        == 0
    )


def test_the_retired_cli_words_still_work(cli, journal: Path) -> None:
    """``resolve-memory`` and ``--kind memory`` were the names before "conflict"."""
    item = pending(journal, "conflict")[0]
    result = cli("resolve-memory", item.id, "dismiss", "--reason", "stale")
    assert result.rc == 0 and "dismissed" in result.out
    listed = cli("inbox", "--kind", "memory", "--json")
    assert listed.rc == 0 and "--kind memory is now --kind conflict" in listed.err
    kinds = {i["kind"] for i in json.loads(listed.out)["items"]}
    assert kinds == {"conflict"}


def test_answer_credential_needs_a_reference(cli, journal: Path) -> None:
    ident = question_of(journal, "credential_binding")
    for not_a_reference in (
        "sk_live_51HxYzAbC123dEfGhIjKlMnOp",
        "my github token",
        "vault:sk_live_51HxYzAbC123dEfGhIjKlMnOp",
        "https://alice:hunter2@vault.example/x",
    ):
        result = cli("answer", ident, "--json", json.dumps({"credential_ref": not_a_reference}))
        assert result.rc == 1 and "credential_ref" in result.err, not_a_reference
    assert read(journal, lambda j: j.questions.get(ident)).status.value != "resolved"
    assert cli("answer", ident, "--json", '{"credential_ref": "vault://team/github"}').rc == 0


def test_cancel_asks_the_agent_to_stop(cli, journal: Path) -> None:
    run_id = pending(journal, "approval")[0].run_id
    assert cli("cancel", run_id).rc == 2
    result = cli("cancel", run_id, "--reason", "wrong customer")
    assert result.rc == 0
    run = read(journal, lambda j: j.runs.get(run_id))
    assert run.cancel_requested and run.cancel_reason == "wrong customer"
    entry = read(journal, lambda j: j.audit.for_entity(run_id))[-1]
    assert entry.action == "run.cancel_requested" and entry.source == "cli"
    done = json.loads(cli("runs", "--json", "--status", "completed", "--limit", "1").out)
    finished = cli("cancel", done["items"][0]["id"], "--reason", "too late")
    assert finished.rc == 1 and "completed" in finished.err


def test_a_second_cancel_is_refused_with_who_asked_first(cli, journal: Path) -> None:
    run_id = pending(journal, "approval")[0].run_id
    assert cli("cancel", run_id, "--reason", "wrong customer").rc == 0
    again = cli("cancel", run_id, "--reason", "changed my mind")
    assert again.rc == 1, again.err
    assert "already requested" in again.err and OPERATOR in again.err
    assert "wrong customer" in again.err and "bug in Proctor" not in again.err
    run = read(journal, lambda j: j.runs.get(run_id))
    assert run.cancel_reason == "wrong customer"  # what the agent was told stays


def test_runs_lists_and_filters(cli, journal: Path) -> None:
    result = cli("runs", "--limit", "5")
    assert result.rc == 0 and result.out.startswith("ID") and "more: --cursor" in result.out
    data = json.loads(cli("runs", "--json", "--status", "waiting_for_user", "--limit", "500").out)
    assert data["items"] and {r["status"] for r in data["items"]} == {"waiting_for_user"}
    assert all(r["open_items"] >= 1 for r in data["items"])
    assert cli("runs", "--status", "sleeping").rc == 2


def test_timeline_and_export(cli, journal: Path, tmp_path: Path) -> None:
    run_id = json.loads(cli("runs", "--json", "--limit", "1").out)["items"][0]["id"]
    run = read(journal, lambda j: j.runs.get(run_id))
    result = cli("timeline", run_id, "--limit", "3")
    assert result.rc == 0 and "#1 " in result.out and "run.started" in result.out
    assert "more: --after 3" in result.out
    data = json.loads(cli("timeline", run_id, "--json", "--after", "1").out)
    assert [e["sequence"] for e in data["items"]] == list(range(2, run.last_sequence + 1))
    lines = cli("export", run_id).out.splitlines()
    events = [json.loads(line) for line in lines]
    assert [e["sequence"] for e in events] == list(range(1, run.last_sequence + 1))
    assert events[-1]["digest"] and events[0]["prev_digest"] == "0" * 64
    target = tmp_path / "run.jsonl"
    assert cli("export", run_id, "-o", target).rc == 0
    assert target.read_text().splitlines() == lines
    assert cli("timeline", "run_nope").rc == 1
    assert cli("export", "run_nope").rc == 1


def test_verify_names_the_first_problem(
    cli, journal: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PROCTOR_JOURNAL")
    result = cli("verify", journal)
    assert result.rc == 0 and result.out.startswith("ok: ") and "triggers present" in result.out
    with sqlite3.connect(journal) as conn:
        conn.execute("DROP TRIGGER trg_events_no_update")
        conn.execute("UPDATE events SET payload = '{}' WHERE sequence = 2")
    result = cli("verify", journal)
    assert result.rc == 1
    assert result.out.startswith("FAILED: trigger missing at trg_events_no_update")
    assert "more problems" in result.out
    report = json.loads(cli("verify", journal, "--json").out)
    assert {p["what"] for p in report["problems"]} >= {"trigger missing", "event chain broken"}


def test_operator_name_comes_from_as_env_or_config(
    cli, journal: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "config.toml"
    config.write_text('operator = "from-config"\n')
    monkeypatch.setenv("PROCTOR_CONFIG", str(config))
    monkeypatch.delenv("PROCTOR_OPERATOR")
    first, second = pending(journal, "approval")[:2]
    assert cli("approve", first.id, "--yes").rc == 0
    assert cli("approve", second.id, "--as", "dana", "--yes").rc == 0
    assert read(journal, lambda j: j.approvals.get(first.id)).decided_by == "operator:from-config"
    assert read(journal, lambda j: j.approvals.get(second.id)).decided_by == "operator:dana"
    config.write_text("operator = [broken")
    assert cli("inbox").rc == 2


def test_snooze_several_items_through_core(cli, journal: Path) -> None:
    approval = pending(journal, "approval")[0]
    question = pending(journal, "question")[0]
    conflict = pending(journal, "conflict")[0]
    ids = [approval.id, question.id, conflict.id]
    result = cli("snooze", *ids, "--minutes", "60")
    assert result.rc == 0, result.err
    assert result.out.splitlines() == [f"snoozed for 60 min {i}" for i in ids]
    assert {i.id for i in pending(journal, "approval", snoozed=True)} >= {approval.id}
    assert not {i.id for i in pending(journal, "approval")} & {approval.id}
    stale = cli("snooze", approval.id, "--wake", "--expect-version", "1")
    assert stale.rc == 1 and stale.out.startswith(f"refused {approval.id}")
    woke = cli("snooze", approval.id, "--wake")
    assert woke.rc == 0 and approval.id in {i.id for i in pending(journal, "approval")}
    assert cli("snooze", "run_123", "--wake").rc == 2


def test_show_run_names_what_blocks_a_new_attempt(cli, journal: Path) -> None:
    """The resume gate's blockers, by id (issue 15): what `start_attempt` would refuse on."""
    approval = pending(journal, "approval")[0]
    blockers = read(journal, lambda j: j.runs.resume_blockers(approval.run_id))
    assert ("approval", approval.id) in blockers
    result = cli("show", approval.run_id)
    assert result.rc == 0 and "a new attempt waits on" in result.out
    assert f"approval {approval.id}" in result.out.split("a new attempt waits on")[1]
    data = json.loads(cli("show", approval.run_id, "--json").out)
    assert {"kind": "approval", "id": approval.id} in data["resume_blockers"]
