"""Server roles as groups (team mode, 0018e; docs/team.md, docs/policies.md).

On a team server a group of operators is also a server role, ``proctor_group_<group>``
(NOLOGIN), and a member is a login granted it: ``proctor team add-user NAME --role operator
--group ops`` makes the role if it is missing, grants it, and writes the journal's group
change (as the owner) so ``proctor groups``, ``proctor verify`` and a trusting agent read the
same membership. The store's step check (``proctor_group_member``, called by
``trg_approval_steps_member``) then asks both: the journal's last change for the person adds
them, and the server says the person's login is a member of the group's role
(``pg_has_role``; a superuser, a member of every role, never counts). Granting a role takes
the owner (or a CREATEROLE role): an agent or operator login that writes journal rows — a
group change naming itself, with a decision row of its own — gains no step. A file journal
keeps journal-kept groups only (``proctor_group_member`` is not used there)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import text

from proctor.core import errors
from proctor.core.storage.deadline_sql import GROUP_ROLE as PREFIX
from proctor.core.storage.deadline_sql import member_function_sql

__all__ = ["grant_groups", "member_function_sql", "record_groups", "role_of"]

MAX_ROLE = 63  # PostgreSQL's identifier length


def role_of(group: str) -> str:
    """The server role of ``group`` (``ValidationError`` when the name cannot be one)."""
    from proctor.core.policies.groups import check_group

    check_group(group)
    role = PREFIX + group
    if len(role) > MAX_ROLE:
        raise errors.ValidationError(
            f"group {group!r} is too long for a server role ({MAX_ROLE - len(PREFIX)} "
            "characters at most in team mode)",
            field="group",
        )
    return role


def grant_groups(conn: Any, login: str, groups: list[str]) -> None:
    """Make each group's role if it is missing and grant it to ``login`` (as the owner)."""
    for group in groups:
        role = role_of(group)
        found = conn.execute(text("SELECT 1 FROM pg_roles WHERE rolname = :r"), {"r": role}).first()
        ident = '"' + role.replace('"', '""') + '"'
        if found is None:
            conn.exec_driver_sql(f"CREATE ROLE {ident} NOLOGIN NOINHERIT")
        conn.exec_driver_sql(f'GRANT {ident} TO "{login}"')


def record_groups(journal: Any, login: str, groups: list[str]) -> None:
    """The journal's group change for each group ``login`` is not in yet (by the owner)."""
    for group in groups:
        if login not in journal.policies.groups().get(group, []):
            journal.policies.add_member(
                group, login, reason="team add-user: granted the group's server role"
            )
