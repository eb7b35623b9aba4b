"""Store faults below the desk: a file-size limit during a decision, a migration of an older
journal (and one killed half way), a damaged page found by `proctor verify`.

An honest older schema: these tests add a test-only Alembic revision after the real head
(test_probe: one new table) in a copy of the migration scripts and tell the code that
test_probe is its head. A real journal at the real head with data is then upgraded through
``Journal.open``'s own migrate path: the VACUUM INTO backup, then Alembic.
"""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from proctor import cli
from proctor.core import Actor, Journal, errors
from proctor.core.audit.verify import verify
from proctor.core.storage import db as core_db
from proctor.core.storage import revisions as core_revisions

TIMEOUT = 60


@pytest.fixture
def journal(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    path = tmp_path / "journal.db"
    with Journal.open(path, actor=Actor.agent("bot")) as agent:
        run = agent.runs.start("shop", "older data")
        agent.runs.append_events(run.id, [("step", {"n": n}) for n in range(20)])
        pending = agent.approvals.request(run.id, {"tool": "deploy"}, reason="ship")
    return path, {"run": run.id, "approval": pending.id}


def table_rows(path: Path, sql: str) -> list[tuple]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


# ---------------------------------------------------------------- a file-size limit

DECIDE_UNDER_A_LIMIT = r"""
import resource, signal, sqlite3, sys
from proctor.core import Actor, Journal, errors

path, approval_id = sys.argv[1], sys.argv[2]
journal = Journal.open(path, actor=Actor.operator("alice"))
version = journal.approvals.get(approval_id).version
conn = sqlite3.connect(path)
conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # the decision must grow the -wal
conn.close()
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails (EFBIG)
resource.setrlimit(resource.RLIMIT_FSIZE, (4096, resource.RLIM_INFINITY))
try:
    journal.approvals.decide(approval_id, True, expected_version=version, request_id="click-1")
    print("decided", flush=True)
except errors.StoreError as exc:
    print("refused", type(exc).__name__, "|", exc.hint, flush=True)
sys.stdin.readline()
resource.setrlimit(resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
journal.approvals.decide(approval_id, True, expected_version=version, request_id="click-1")
print("retried", journal.approvals.get(approval_id).status.value, flush=True)
"""


def test_a_file_size_limit_during_a_decision_records_nothing(journal):
    path, ids = journal
    child = subprocess.Popen(
        [sys.executable, "-c", DECIDE_UNDER_A_LIMIT, str(path), ids["approval"]],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = child.stdout.readline()
        assert line.startswith("refused StoreFull"), line + child.stderr.read()
        assert "free space" in line  # the next step, for the operator
        assert table_rows(path, "SELECT COUNT(*) FROM decisions") == [(0,)]
        assert table_rows(path, "SELECT status FROM approvals") == [("pending",)]
        assert table_rows(path, "PRAGMA quick_check") == [("ok",)]
        out, err = child.communicate("\n", timeout=TIMEOUT)
    finally:
        if child.poll() is None:
            child.kill()
    assert out.strip() == "retried approved", err
    with Journal.open(path, actor=Actor.operator("checker"), read_only=True) as j:
        assert len(j.approvals.decisions(ids["approval"])) == 1
        assert verify(j).ok


# ---------------------------------------------------------------- an older schema

HEAD, PROBE = core_db.SCHEMA_HEAD, "test_probe"  # the real head; the test-only next one
REVISION_0002 = '''
"""test-only second revision: one new table"""
import os
import sys
import time

import sqlalchemy as sa
from alembic import op

revision = "{probe}"
down_revision = "{head}"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table("upgrade_probe", sa.Column("id", sa.Integer, primary_key=True))
    op.execute("INSERT INTO upgrade_probe (id) VALUES (1)")
    if os.environ.get("PROCTOR_TEST_PAUSE_MIGRATION"):
        print("migrating", flush=True)
        time.sleep(600)


def downgrade() -> None:
    op.drop_table("upgrade_probe")
'''

KNOW_0002 = """
import alembic.config
from proctor.core.storage import db, revisions

def know_0002(scripts):
    for module in (db, revisions):  # db re-exports what revisions defines
        module.SCHEMA_REVISIONS = (*db.SCHEMA_REVISIONS, "test_probe")
        module.SCHEMA_HEAD = "test_probe"
    plain = alembic.config.Config.set_main_option

    def set_main_option(self, name, value):
        plain(self, name, scripts if name == "script_location" else value)

    alembic.config.Config.set_main_option = set_main_option
"""


@pytest.fixture
def scripts_with_0002(tmp_path: Path) -> Path:
    source = Path(core_db.__file__).with_name("migrations")
    target = tmp_path / "migrations"
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"))
    (target / "versions" / "test_probe.py").write_text(
        textwrap.dedent(REVISION_0002.replace("{probe}", PROBE).replace("{head}", HEAD))
    )
    return target


@pytest.fixture
def code_knows_0002(scripts_with_0002, monkeypatch) -> None:
    namespace: dict = {}
    exec(KNOW_0002, namespace)  # the same patch the child process applies
    import alembic.config

    for module in (core_db, core_revisions):
        monkeypatch.setattr(module, "SCHEMA_REVISIONS", core_db.SCHEMA_REVISIONS)
        monkeypatch.setattr(module, "SCHEMA_HEAD", core_db.SCHEMA_HEAD)
    monkeypatch.setattr(
        alembic.config.Config, "set_main_option", alembic.config.Config.set_main_option
    )
    namespace["know_0002"](str(scripts_with_0002))


def backups(path: Path) -> list[Path]:
    return sorted(path.parent.glob(f"{path.name}.backup-*"))


def test_an_older_journal_is_migrated_after_a_backup(journal, code_knows_0002):
    path, ids = journal
    with Journal.open(path, actor=Actor.operator("alice")) as j:
        assert j.schema_revision == PROBE and not j.read_only
        assert len(j.runs.events(ids["run"], limit=100)) == 22
        assert verify(j).ok
    assert table_rows(path, "SELECT version_num FROM alembic_version") == [(PROBE,)]
    assert table_rows(path, "SELECT id FROM upgrade_probe") == [(1,)]
    [backup] = backups(path)
    assert backup.stat().st_mode & 0o777 == 0o600
    assert table_rows(backup, "SELECT version_num FROM alembic_version") == [(HEAD,)]
    assert table_rows(backup, "SELECT COUNT(*) FROM events") == [(22,)]
    Journal.open(path, actor=Actor.operator("alice")).close()
    assert len(backups(path)) == 1  # nothing more to migrate, no second backup


def test_an_older_journal_can_be_refused_or_observed_instead(journal, code_knows_0002, capsys):
    path, _ = journal
    with pytest.raises(errors.SchemaTooOld) as refused:
        Journal.open(path, on_old_schema="error")
    assert str(path) in str(refused.value)
    with Journal.open(path, on_old_schema="read_only") as j:
        assert j.read_only and j.schema_revision == HEAD
    assert backups(path) == []
    assert table_rows(path, "SELECT version_num FROM alembic_version") == [(HEAD,)]


MIGRATE_AND_PAUSE = (
    KNOW_0002
    + """
import sys
from proctor.core import Actor, Journal
know_0002(sys.argv[2])
Journal.open(sys.argv[1], actor=Actor.operator("alice"))
"""
)


def test_a_migration_killed_half_way_changes_nothing(journal, scripts_with_0002, tmp_path):
    path, ids = journal
    env = {**os.environ, "PROCTOR_TEST_PAUSE_MIGRATION": "1"}
    child = subprocess.Popen(
        [sys.executable, "-c", MIGRATE_AND_PAUSE, str(path), str(scripts_with_0002)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert child.stdout.readline().strip() == "migrating", child.stderr.read()
    finally:
        child.send_signal(signal.SIGKILL)
        child.communicate(timeout=TIMEOUT)
    # this code (the real head) opens it as before: the half-done upgrade was rolled back
    with Journal.open(path, actor=Actor.operator("alice")) as j:
        assert j.schema_revision == HEAD
        assert j.integrity_check() == ["ok"] and verify(j).ok
        assert len(j.runs.events(ids["run"], limit=100)) == 22
    assert table_rows(path, "SELECT name FROM sqlite_master WHERE name = 'upgrade_probe'") == []
    [backup] = backups(path)  # the backup was finished before the upgrade began
    with Journal.open(backup, actor=Actor.operator("alice"), read_only=True) as copy:
        assert copy.integrity_check() == ["ok"] and verify(copy).ok


# ---------------------------------------------------------------- a damaged data page


def test_a_damaged_page_is_named_by_verify_and_open_writes_nothing(journal, capsys):
    path, ids = journal
    with Journal.open(path, actor=Actor.agent("bot")) as agent:  # enough pages to damage one
        agent.runs.append_events(ids["run"], [("bulk", {"pad": "x" * 800}) for _ in range(300)])
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    conn.close()
    data = bytearray(path.read_bytes())
    victim = pages // 2
    data[victim * page_size : victim * page_size + 64] = os.urandom(64)
    path.write_bytes(bytes(data))
    before = path.read_bytes()
    capsys.readouterr()
    assert cli.main(["verify", str(path)]) in (1, 3)
    out = capsys.readouterr()
    assert "integrity" in out.out or "damaged" in out.err
    assert path.read_bytes() == before
