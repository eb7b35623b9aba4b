"""Team mode from a shell: `proctor migrate-to URL` (a journal file into a server journal,
verified on arrival), `proctor team init URL` (the schema and the three roles the server
enforces) and `proctor team add-user NAME --role ROLE` (a login in one of them).

A URL is shown with its password hidden, in every line and error; give the password in
the URL, in ``PGPASSWORD`` or in ``~/.pgpass`` (libpq reads both).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from proctor.core import Actor, Journal, errors

from .ops_base import (
    EXIT_OK,
    EXIT_REFUSED,
    Unusable,
    UsageError,
    add,
    common_parser,
    dump,
    emit_json,
    journal_path,
    open_journal,
    operator_name,
)
from .ops_render import clean

PASSWORD_IN_URL = re.compile(r"(://[^:/@\s]*:)[^@\s]*@")


def hidden(url: str) -> str:
    """``url`` with its password (if any) shown as ***."""
    return PASSWORD_IN_URL.sub(r"\1***@", url)


@contextmanager
def no_password_shown(url: str) -> Iterator[None]:
    """Errors raised inside name ``url`` only with its password hidden."""
    secret = PASSWORD_IN_URL.search(url)
    try:
        yield
    except errors.ProctorError as err:
        if secret is None or (
            url not in f"{err.message} {err.hint}"
            and secret.group(0) not in f"{err.message} {err.hint}"
        ):
            raise
        raise type(err)(
            err.message.replace(url, hidden(url)), hint=err.hint.replace(url, hidden(url))
        ) from None


def is_url(text: str) -> bool:
    return "://" in text


def open_target(url: str, args: argparse.Namespace) -> Journal:
    """The journal at ``url`` (a file is created when missing; a server database must exist:
    an empty one is given the schema)."""
    with no_password_shown(url):
        return Journal.open(
            url, actor=Actor.operator(operator_name(args)), busy_timeout=args.timeout
        )


# ---------------------------------------------------------------- migrate-to


def cmd_migrate_to(args: argparse.Namespace) -> int:
    from proctor.core.ops.migrate_to import migrate_to

    source_path = journal_path(args)
    if is_url(source_path) and not source_path.startswith("sqlite:///"):
        raise Unusable(
            f"the source must be a journal file, not {hidden(source_path)}",
            "Pass the file with --journal PATH.",
        )
    source = open_journal(args, write=False)
    try:
        target = open_target(args.url, args)
        try:
            trust = None
            if args.trust:
                from proctor.core.decisions.trust import Trust

                trust = Trust.load(args.trust)
            with no_password_shown(args.url):
                report = migrate_to(source, target, trust=trust)
        finally:
            target.close()
    finally:
        source.close()
    if args.json:
        emit_json(dump(report) | {"source": str(source.path), "target": hidden(args.url)})
    else:
        show_migration(report, str(Path(source_path).expanduser()), hidden(args.url))
    return EXIT_OK if report.verify.ok else EXIT_REFUSED


def show_migration(report: Any, source: str, target: str) -> None:
    out = sys.stdout
    total = sum(report.rows.values())
    out.write(
        f"copied {clean(source, one_line=True)} to {clean(target, one_line=True)}: {total} rows\n"
    )
    for name, count in report.rows.items():
        if count:
            out.write(f"  {name.replace('_', ' ')}: {count}\n")
    v = report.verify
    if v.ok:
        out.write(
            f"verified on arrival: {v.checked_runs} runs, {v.checked_events} events "
            f"and {v.checked_audit} audit rows; every chain and digest holds\n"
        )
    else:
        first = v.problems[0]
        out.write(
            f"FAILED verification on arrival: {clean(first.what, one_line=True)} at "
            f"{clean(first.where, one_line=True)}: "
            f"{clean(first.detail, 2000, one_line=True, more='')}\n"
        )


# ---------------------------------------------------------------- team init / add-user


def cmd_team_init(args: argparse.Namespace) -> int:
    from proctor.core.ops.team import init

    with no_password_shown(args.url):
        report = init(args.url)
    if args.json:
        emit_json(dump(report))
        return EXIT_OK
    made = ", ".join(report.created_roles) or "none (they existed)"
    print(
        f"team journal ready at {clean(hidden(report.url), one_line=True)} "
        f"(schema {report.schema_revision})"
    )
    print(f"  roles: {', '.join(report.roles)}; created now: {made}")
    print(f"  checked by the server on every write: {len(report.checked_tables)} tables")
    print(
        "  next: proctor team add-user NAME --role agent|operator|observer "
        f"--journal {clean(hidden(args.url), one_line=True)}"
    )
    return EXIT_OK


def stdin_line() -> str:
    """One line of stdin, read byte by byte: the next command of a script gets the next
    line (a buffered read would swallow them all)."""
    import os

    data = b""
    while not data.endswith(b"\n"):
        byte = os.read(sys.stdin.fileno(), 1)
        if not byte:
            break
        data += byte
    return data.decode("utf-8").rstrip("\r\n")


def read_password(args: argparse.Namespace) -> str:
    if args.password_file == "-":
        return stdin_line()
    if args.password_file:
        try:
            return Path(args.password_file).read_text(encoding="utf-8").rstrip("\n")
        except OSError as err:
            raise UsageError(f"cannot read {args.password_file}: {err.strerror or err}") from err
    if not sys.stdin.isatty():  # piped: one line of stdin, as `--password-file -`
        line = stdin_line()
        if not line:
            raise UsageError(
                "no password: give the new login's password on stdin, with "
                "--password-file FILE, or run this in a terminal to be asked"
            )
        return line
    import getpass

    first = getpass.getpass(f"password for {args.name}: ")
    if getpass.getpass("again: ") != first:
        raise UsageError("the two passwords differ; nothing was changed")
    return first


def cmd_team_add_user(args: argparse.Namespace) -> int:
    from proctor.core.ops.team import ROLES, RoleName, add_user

    url = journal_path(args)
    if not is_url(url):
        raise UsageError(
            f"{url} is a journal file: logins and roles need a server journal "
            "(--journal postgresql+psycopg://OWNER@HOST:PORT/DATABASE)"
        )
    groups = tuple(args.group or ())
    role: RoleName | None = args.role or ("operator" if groups else None)
    if role is None:
        raise UsageError("name the login's role with --role agent|operator|observer")
    password = read_password(args)
    with no_password_shown(url):
        created = add_user(url, args.name, role, password, groups)
    verb = "created" if created else "updated"
    print(f"{verb} login {args.name} in {ROLES[role]} on {clean(hidden(url), one_line=True)}")
    for group in groups:
        print(f"  in group {clean(group, one_line=True)} (server role proctor_group_{group})")
    return EXIT_OK


# ---------------------------------------------------------------- parsers


def register(sub: Any) -> None:
    common = common_parser()
    p = add(
        sub,
        "migrate-to",
        cmd_migrate_to,
        "copy a journal file into a new (server) journal and verify it there",
        [common],
        "Copy every row of the journal file (--journal, default $PROCTOR_JOURNAL) into "
        "the journal at URL — postgresql+psycopg://USER@HOST:PORT/DATABASE for a team "
        "server, or another file — byte for byte, in one transaction, then verify every "
        "event chain, the audit chain, every digest and signature there. The target must "
        "be empty (a new database, or one `proctor team init` prepared); a non-empty one "
        "is refused and nothing is written. The file is not changed.",
    )
    p.add_argument("url", metavar="URL", help="the target journal (a server URL or a file)")
    p.add_argument(
        "--trust",
        metavar="FILE",
        help="a trusted-operators file: also check every decision's signature",
    )
    p.add_argument("--json", action="store_true", help="machine-readable report")

    team = sub.add_parser(
        "team",
        help="a team journal on a PostgreSQL server: schema, roles, logins",
        description="Team mode (docs/team.md): `team init URL` creates the "
        "schema and the roles the server enforces; `team "
        "add-user NAME --role ROLE` makes a login in one.",
    )
    team_sub = team.add_subparsers(dest="team_command", metavar="COMMAND", required=True)
    p = add(
        team_sub,
        "init",
        cmd_team_init,
        "create the schema and the agent, operator and observer roles",
        [common],
        "Create (or upgrade) the journal's schema in the database at URL — it must exist "
        "(createdb) — and the roles proctor_agent, proctor_operator and proctor_observer, "
        "their grants and the checks the server runs on every write. Run it as the "
        "database's owner; running it again is safe.",
    )
    p.add_argument("url", metavar="URL", help="postgresql+psycopg://OWNER@HOST:PORT/DATABASE")
    p.add_argument("--json", action="store_true", help="machine-readable report")
    p = add(
        team_sub,
        "add-user",
        cmd_team_add_user,
        "make a login in one of the roles",
        [common],
        "Create a login NAME in the role (or set its password and role if it "
        "exists), on the server journal given by --journal (or "
        "$PROCTOR_JOURNAL), connecting as its owner.",
    )
    p.add_argument("name", metavar="NAME", help="the login (lower-case letters, digits, _)")
    p.add_argument("--role", choices=["agent", "operator", "observer"])
    p.add_argument(
        "--group",
        action="append",
        metavar="GROUP",
        help="an operator's group (repeat for more): granted its server role "
        "proctor_group_GROUP, made if missing, and recorded in the journal; --role "
        "defaults to operator",
    )
    p.add_argument(
        "--password-file",
        metavar="FILE",
        help="read the new login's password from FILE (- for stdin); default: "
        "ask in a terminal, else read one line of stdin",
    )


__all__ = ["cmd_migrate_to", "cmd_team_add_user", "cmd_team_init", "hidden", "register"]
