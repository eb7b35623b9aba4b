"""What each trigger says, not only its name: the definitions the migrations install (read
from a fresh in-memory SQLite database migrated to the journal's revision, so every trigger
any revision adds is covered without a list kept here) against the journal's own.

A trigger with the expected name whose SQL differs (a no-op put in its place, a WHEN that
never holds) is as good as missing. The server's triggers are PL/pgSQL functions, compared
by name only (a team login cannot replace them: core/storage/pg.py)."""

from __future__ import annotations

import functools
import re
from typing import Any

from sqlalchemy import create_engine

_IF_NOT_EXISTS = re.compile(r"\bif\s+not\s+exists\b", re.IGNORECASE)
_QUOTED = re.compile(r"'(?:[^']|'')*'")


def normalised(sql: str | None) -> str:
    """``sql`` with its layout, letter case outside string literals, ``IF NOT EXISTS``,
    identifier quotes and a trailing semicolon taken away: two texts that install the same
    trigger compare equal."""
    if sql is None:
        return ""
    parts, last = [], 0
    for m in _QUOTED.finditer(sql):
        parts.append(_plain(sql[last : m.start()]))
        parts.append(m.group(0))
        last = m.end()
    parts.append(_plain(sql[last:]))
    return re.sub(r"\s+", " ", "".join(parts)).strip().rstrip(";").strip()


def _plain(text: str) -> str:
    text = _IF_NOT_EXISTS.sub(" ", text).replace('"', "").replace("`", "")
    return re.sub(r"\s*([(),;=])\s*", r" \1 ", text.lower())


def triggers_in(conn: Any) -> dict[str, str]:
    """Name -> normalised SQL of every trigger of the SQLite database ``conn``."""
    rows = conn.exec_driver_sql("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'")
    return {name: normalised(sql) for name, sql in rows}


@functools.lru_cache(maxsize=4)
def installed_by_code(revision: str) -> dict[str, str]:
    """Name -> normalised SQL of every trigger the migrations install up to ``revision``, in
    a fresh in-memory database (made once per process and revision)."""
    from alembic import command
    from alembic.config import Config

    engine = create_engine("sqlite://")
    try:
        with engine.connect() as conn:
            cfg = Config()
            cfg.set_main_option("script_location", "proctor.core.storage:migrations")
            cfg.attributes["connection"] = conn
            with conn.begin():
                command.upgrade(cfg, revision)
            return triggers_in(conn)
    finally:
        engine.dispose()


def altered(conn: Any, revision: str) -> dict[str, str]:
    """The triggers of ``conn``'s journal whose definition is not the one the code installs
    at ``revision``: name -> what differs (missing ones are the name check's)."""
    expected, actual = installed_by_code(revision), triggers_in(conn)
    return {
        name: "its definition is not the one Proctor installs"
        for name, sql in sorted(actual.items())
        if name in expected and expected[name] != sql
    }
