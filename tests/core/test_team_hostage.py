"""A team server (`proctor team init`) against an agent or observer login used as an adversary
(psycopg, raw SQL, on a real PostgreSQL server): it cannot hold operators' writes hostage (the
write lock, row locks taken outside it, LOCK TABLE), and it withdraws and expires only its own
requests, and only when they are due by the server's clock."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
import team_fixtures
from team_fixtures import Team

from proctor.core import Actor, Journal, errors
from proctor.core.ops.team import AGENT_SETTINGS, AGENT_TABLES, init
from proctor.core.storage import pg

team, team_logins = team_fixtures.team, team_fixtures.team_logins  # the fixtures

ACTION = {"tool": "shell", "args": {"command": "make build"}}
# every mode that blocks another session's writes or reads (ROW EXCLUSIVE and below block
# neither: they are what INSERT and SELECT take themselves)
BLOCKING_MODES = ("SHARE UPDATE EXCLUSIVE", "SHARE", "SHARE ROW EXCLUSIVE", "EXCLUSIVE",
                  "ACCESS EXCLUSIVE")  # fmt: skip


@pytest.fixture
def agent(team) -> Iterator[Journal]:
    with team.journal("agent_a", Actor.agent("builder")) as j:
        yield j


@pytest.fixture
def operator(team) -> Iterator[Journal]:
    with team.journal("op_dana", Actor.operator("op_dana")) as j:
        yield j


def refused(conn: Any, sql: str, params: Any = None) -> str:
    with pytest.raises(psycopg.errors.InsufficientPrivilege) as err:
        conn.execute(sql, params)
    return str(err.value)


def status_of(team: Team, table: str, row_id: str) -> str:
    with team.owner() as conn:
        return conn.execute(f"SELECT status FROM {table} WHERE id = %s", (row_id,)).fetchone()[0]


def ended(conn: psycopg.Connection) -> bool:
    """The server ended this session: its next statement fails on the connection."""
    deadline = time.monotonic() + 20
    while True:
        try:
            conn.execute("SELECT 1")
        except psycopg.OperationalError:
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)


# ---------------------------------------------------------------- LOCK TABLE


@pytest.mark.parametrize("login", ["agent_b", "obs_fay"])
def test_no_agent_or_observer_login_can_lock_a_table_against_operators(team, login):
    with team.raw(login) as conn:
        for table in AGENT_TABLES:
            for mode in BLOCKING_MODES:
                conn.execute("BEGIN")
                refused(conn, f"LOCK TABLE {table} IN {mode} MODE")
                conn.execute("ROLLBACK")


def test_an_agent_login_still_writes_every_column_it_wrote(team, agent, operator):
    """Column-level UPDATE instead of the table's: what agents write still goes through
    (helpers.populate in test_team_roles covers every kind of write)."""
    run = agent.runs.start("proj", "columns")
    approval = agent.approvals.request(run.id, ACTION, reason="build")
    operator.approvals.decide(approval.id, True, expected_version=1)
    agent.approvals.consume_and_reserve(approval.id, approval.action_digest, "fx", owner="w")
    agent.effects.begin("fx", owner="w")
    agent.effects.commit("fx", {"ok": True}, owner="w")
    assert agent.runs.get(run.id).id == run.id


# ---------------------------------------------------------------- the write lock


def pending_approval(agent: Journal) -> Any:
    run = agent.runs.start("proj", "hostage")
    return agent.approvals.request(run.id, ACTION, reason="build it")


HOLDS = {
    # the write lock, in a transaction left idle (the client's own idle timeout is its own)
    "xact lock, idle in transaction": [
        "SET idle_in_transaction_session_timeout = 0",
        "BEGIN",
        pg.LOCK_SQL,
    ],
    # the write lock for the session, outside any transaction
    "session lock": [f"SELECT pg_advisory_lock({pg.WRITE_LOCK[0]}, {pg.WRITE_LOCK[1]})"],
    # a shared hold of the same key blocks the exclusive one as well
    "shared session lock": [
        f"SELECT pg_advisory_lock_shared({pg.WRITE_LOCK[0]}, {pg.WRITE_LOCK[1]})"
    ],
}


@pytest.mark.parametrize("login", ["agent_b", "obs_fay"])
@pytest.mark.parametrize("hold", list(HOLDS))
def test_a_login_holding_the_write_lock_does_not_stop_an_operators_decision(
    team, agent, operator, login, hold
):
    approval = pending_approval(agent)
    adversary = team.raw(login)
    for statement in HOLDS[hold]:
        adversary.execute(statement)
    decided = operator.approvals.decide(approval.id, True, expected_version=1, reason="ok")
    assert decided.status == "approved"
    assert ended(adversary)  # the server ended the session that kept the lock
    adversary.close()


def test_a_login_holding_the_write_lock_in_a_long_statement_is_ended(team, agent, operator):
    approval = pending_approval(agent)
    adversary = team.raw("agent_b")
    adversary.execute("SET statement_timeout = 0")
    started = threading.Event()

    def hold() -> None:
        try:
            adversary.execute("BEGIN")
            adversary.execute(pg.LOCK_SQL)
            started.set()
            adversary.execute("SELECT pg_sleep(600)")
        except psycopg.OperationalError:
            pass

    holder = threading.Thread(target=hold, daemon=True)
    holder.start()
    assert started.wait(20)
    decided = operator.approvals.decide(approval.id, True, expected_version=1)
    assert decided.status == "approved"
    holder.join(20)
    assert not holder.is_alive()
    adversary.close()


@pytest.mark.parametrize(
    "lock_rows",
    [
        "SELECT id FROM approvals WHERE id = %s FOR UPDATE",
        "SELECT id FROM approvals WHERE id = %s FOR SHARE",
        "UPDATE approvals SET version = version WHERE id = %s",
    ],
)
def test_an_agent_locking_the_row_outside_the_write_lock_does_not_stop_the_operator(
    team, agent, operator, lock_rows
):
    approval = pending_approval(agent)
    adversary = team.raw("agent_b")
    adversary.execute("SET idle_in_transaction_session_timeout = 0")
    adversary.execute("BEGIN")
    adversary.execute(lock_rows, (approval.id,))
    decided = operator.approvals.decide(approval.id, True, expected_version=1)
    assert decided.status == "approved"
    assert ended(adversary)
    adversary.close()


def test_an_operators_lock_is_never_taken_from_it(team, agent):
    """The rule ends agent and observer sessions only: an operator login that holds the lock
    keeps it, and another writer waits (and gets StoreBusy past its timeout)."""
    approval = pending_approval(agent)
    holder = team.raw("op_eli")
    holder.execute("BEGIN")
    holder.execute(pg.LOCK_SQL)
    with (
        team.journal("op_dana", Actor.operator("op_dana"), busy_timeout=1.5) as impatient,
        pytest.raises(errors.StoreBusy),
    ):
        impatient.approvals.decide(approval.id, True, expected_version=1)
    holder.execute("ROLLBACK")
    assert not ended_quickly(holder)
    holder.close()


def ended_quickly(conn: psycopg.Connection) -> bool:
    try:
        conn.execute("SELECT 1")
    except psycopg.OperationalError:
        return True
    return False


def test_agents_writing_alongside_operators_are_never_ended(team, agent, operator):
    """Proctor's own agent writes hold the lock for milliseconds: decisions in between do not
    end them."""
    run = agent.runs.start("proj", "busy")
    failures: list[BaseException] = []
    stop = threading.Event()

    def write() -> None:
        with team.journal("agent_b", Actor.agent("logger")) as other:
            other_run = other.runs.start("proj", "logger")
            while not stop.is_set():
                try:
                    other.runs.append_event(other_run.id, "note", {"n": 1})
                except BaseException as err:  # noqa: BLE001 - any failure is the finding
                    failures.append(err)
                    return

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    for _ in range(15):
        a = agent.approvals.request(run.id, ACTION, reason="again")
        operator.approvals.decide(a.id, False, expected_version=1, reason="no")
    stop.set()
    writer.join(30)
    assert failures == []


def test_agent_and_observer_sessions_get_short_timeouts_and_init_upgrades_them(team):
    with team.owner() as owner:
        for name, _ in AGENT_SETTINGS.items():
            owner.execute(f"ALTER ROLE agent_b RESET {name}")  # a login made by an older init
    init(team.url())
    for login in ("agent_b", "obs_fay"):
        with team.raw(login) as conn:
            for name, value in AGENT_SETTINGS.items():
                assert conn.execute(f"SHOW {name}").fetchone()[0] == value
    with team.raw("op_dana") as conn:
        assert conn.execute("SHOW statement_timeout").fetchone()[0] == "0"


# ---------------------------------------------------------------- withdraw and expire


def test_an_agent_login_cannot_withdraw_or_expire_another_logins_request(team, agent):
    run = agent.runs.start("proj", "theirs")
    approval = agent.approvals.request(run.id, ACTION, reason="mine", expires_in=3600)
    question = agent.questions.ask(run.id, "choice", "which?", options=["a", "b"])
    with team.raw("agent_b") as conn:
        for status in ("cancelled", "expired"):
            refused(
                conn,
                "UPDATE approvals SET status = %s, decided_at = 1, version = version + 1 "
                "WHERE id = %s",
                (status, approval.id),
            )
            refused(
                conn,
                "UPDATE interactions SET status = %s, version = version + 1 WHERE id = %s",
                (status, question.id),
            )
    with team.journal("agent_b", Actor.agent("builder")) as same_name_other_login:
        with pytest.raises(errors.NotAllowed):
            same_name_other_login.approvals.withdraw(approval.id, "not yours")
        with pytest.raises(errors.NotAllowed):
            same_name_other_login.questions.withdraw(question.id, "not yours")
    assert status_of(team, "approvals", approval.id) == "pending"
    assert status_of(team, "interactions", question.id) in ("requested", "presented")
    agent.approvals.withdraw(approval.id, "mine to withdraw")  # its own login may
    assert status_of(team, "approvals", approval.id) == "cancelled"


def test_an_agent_login_expires_its_own_request_only_once_it_is_due(team, agent):
    run = agent.runs.start("proj", "expiry")
    later = agent.approvals.request(run.id, ACTION, reason="later", expires_in=3600)
    never = agent.approvals.request(run.id, {**ACTION, "n": 1}, reason="no expiry")
    kept = agent.approvals.request(
        run.id, {**ACTION, "n": 2}, reason="kept", expires_in=0.2, on_expiry="keep_pending"
    )
    soon = agent.approvals.request(run.id, {**ACTION, "n": 3}, reason="soon", expires_in=0.2)
    asked = agent.questions.ask(run.id, "choice", "which?", options=["a"], expires_in=3600)
    with team.raw("agent_a") as conn:
        for row in (later, never):
            refused(
                conn,
                "UPDATE approvals SET status = 'expired', decided_by = 'system:expiry', "
                "decided_at = 1, version = version + 1 WHERE id = %s",
                (row.id,),
            )
        refused(
            conn,
            "UPDATE interactions SET status = 'expired', version = version + 1 WHERE id = %s",
            (asked.id,),
        )
        time.sleep(0.4)  # `kept` and `soon` are now past their expiry
        refused(  # keep_pending: past its expiry it stays pending for the operator
            conn,
            "UPDATE approvals SET status = 'expired', version = version + 1 WHERE id = %s",
            (kept.id,),
        )
    with team.journal("agent_b", Actor.agent("other")) as other:
        assert other.approvals.expire_due() == 0  # not its login's: left alone, no error
    assert status_of(team, "approvals", soon.id) == "pending"
    assert agent.approvals.expire_due() == 1  # its own, due: expired
    assert status_of(team, "approvals", soon.id) == "expired"
    for row in (later, never, kept):
        assert status_of(team, "approvals", row.id) == "pending"


def test_an_agent_login_cannot_lapse_an_approval_before_its_time(team, agent, operator):
    run = agent.runs.start("proj", "lapse")
    approval = agent.approvals.request(run.id, ACTION, reason="use it soon", expires_in=3600)
    operator.approvals.decide(approval.id, True, expected_version=1)
    with team.raw("agent_a") as conn:
        refused(
            conn,
            "UPDATE approvals SET status = 'expired', version = version + 1 WHERE id = %s",
            (approval.id,),
        )
    assert status_of(team, "approvals", approval.id) == "approved"


def test_an_agent_login_locks_or_writes_rows_only_under_the_write_lock(team, agent):
    """Row-level security: an agent login's row lock or write takes the write lock; while
    another writer holds it, the agent's FOR UPDATE locks nothing and its INSERT fails."""
    approval = pending_approval(agent)
    holder = team.raw("op_eli")
    holder.execute("BEGIN")
    holder.execute(pg.LOCK_SQL)
    with team.raw("agent_b") as conn:
        conn.execute("BEGIN")
        locked = conn.execute(
            "SELECT id FROM approvals WHERE id = %s FOR UPDATE", (approval.id,)
        ).fetchall()
        assert locked == []
        conn.execute("ROLLBACK")
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="row-level security"):
            conn.execute(
                "INSERT INTO audit (id) VALUES ('forged-outside-the-lock')",
            )
    holder.execute("ROLLBACK")
    holder.close()


def test_an_agent_that_takes_the_lock_again_each_time_it_is_ended_does_not_stop_decisions(
    team, agent, operator
):
    ids = [pending_approval(agent).id for _ in range(3)]
    stop = threading.Event()
    taken: list[int] = []

    def hostage() -> None:
        while not stop.is_set():
            try:
                with team.raw("agent_b") as conn:
                    conn.execute("SET idle_in_transaction_session_timeout = 0")
                    conn.execute("BEGIN")
                    conn.execute(pg.LOCK_SQL)
                    taken.append(1)
                    while not stop.wait(0.02):
                        conn.execute("SELECT 1")
            except psycopg.Error:
                continue

    thread = threading.Thread(target=hostage, daemon=True)
    thread.start()
    try:
        for index, approval_id in enumerate(ids):
            held_again(taken, index + 1)  # each decision meets the lock held again
            assert operator.approvals.decide(approval_id, True, expected_version=1).status == (
                "approved"
            )
    finally:
        stop.set()
        thread.join(20)
    assert len(taken) >= len(ids)


def held_again(taken: list[int], times: int, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while len(taken) < times:
        assert time.monotonic() < deadline, f"the agent took the lock {len(taken)} times"
        time.sleep(0.01)
