"""`proctor migrate-to URL`: counts and the verification on arrival; a second run into the
same target is refused (exit 1) with nothing written; a password in the URL is never shown."""

from __future__ import annotations

from proctor.cmd_team import hidden


def test_migrate_to_copies_the_demo_journal_and_verifies_it(cli, journal, tmp_path):
    target = tmp_path / "team" / "team.db"
    result = cli("migrate-to", target)
    assert result.rc == 0, result.err
    assert result.out.startswith(f"copied {journal} to {target}: ")
    assert "  events: " in result.out and "  decisions: " in result.out
    assert "verified on arrival: " in result.out and "every chain and digest holds" in result.out
    check = cli("verify", target)
    assert check.rc == 0 and check.out.startswith("ok: ")
    assert cli("runs", "--journal", target, "--json").out == cli("runs", "--json").out


def test_a_second_migration_is_refused_and_says_why(cli, journal, tmp_path):
    target = tmp_path / "team.db"
    assert cli("migrate-to", target).rc == 0
    again = cli("migrate-to", target)
    assert again.rc == 1
    assert "not empty" in again.err and "nothing was copied" in again.err


def test_the_source_must_be_a_file(cli, journal, tmp_path):
    result = cli(
        "migrate-to",
        tmp_path / "x.db",
        "--journal",
        "postgresql+psycopg://u:hunter2@127.0.0.1:1/db",
    )
    assert result.rc == 3 and "must be a journal file" in result.err
    assert "hunter2" not in result.err + result.out


def test_a_url_is_shown_without_its_password():
    assert (
        hidden("postgresql+psycopg://ops:s3cret@db:5432/p")
        == "postgresql+psycopg://ops:***@db:5432/p"
    )
    assert hidden("postgresql+psycopg://ops@db/p") == "postgresql+psycopg://ops@db/p"
