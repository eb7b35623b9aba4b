"""SQL read with sqlglot: statement kinds, tables and columns written, DELETE/UPDATE without
WHERE, DROP/TRUNCATE/ALTER, several statements in one string. sqlglot is imported here, on
the first read, never by ``import proctor.core``."""

from __future__ import annotations

import logging
from typing import Any

from proctor.core.lens.facts import Fact, quoted

DESTRUCTIVE = "destructive"
UNSAFE_WRITE = "unsafe_write"
MAX_STATEMENTS = 100  # statements parsed in one string (all are counted)
# tool-name words that pick a dialect (the first that matches)
DIALECTS = (
    ("psql", "postgres"),
    ("postgres", "postgres"),
    ("pg", "postgres"),
    ("mysql", "mysql"),
    ("maria", "mysql"),
    ("sqlite", "sqlite"),
    ("bigquery", "bigquery"),
    ("snowflake", "snowflake"),
    ("duckdb", "duckdb"),
    ("mssql", "tsql"),
    ("sqlserver", "tsql"),
)


def dialect_for(tool: str) -> str | None:
    name = tool.lower()
    return next((d for word, d in DIALECTS if word in name), None)


class Statements:
    """One SQL text split into statements with sqlglot's tokenizer: each statement's
    [start, end) in the text."""

    def __init__(self, text: str, dialect: str | None) -> None:
        from sqlglot.dialects.dialect import Dialect
        from sqlglot.tokens import TokenType

        tokens = Dialect.get_or_raise(dialect).tokenize(text)
        self.spans: list[tuple[int, int]] = []
        first: int | None = None
        last = 0
        for token in tokens:
            if token.token_type == TokenType.SEMICOLON:
                if first is not None:
                    self.spans.append((first, last))
                first = None
                continue
            if first is None:
                first = token.start
            last = token.end + 1
        if first is not None:
            self.spans.append((first, last))


def read_sql(text: str, field: str, offset: int, dialect: str | None) -> tuple[list[Fact], str]:
    """The facts of ``text`` (which starts at ``offset`` of ``field``), and "" or the reason it
    could not be read."""
    import sqlglot
    from sqlglot.errors import SqlglotError

    logging.getLogger("sqlglot").setLevel(logging.ERROR)  # it warns of Command fallbacks
    try:
        spans = Statements(text, dialect).spans
    except SqlglotError:
        return [], f"could not read {field} as SQL"
    facts: list[Fact] = []
    failed = 0
    for start, end in spans[:MAX_STATEMENTS]:
        try:
            tree = sqlglot.parse_one(text[start:end], dialect=dialect)
        except SqlglotError:
            failed += 1
            continue
        facts += statement_facts(tree, text[start:end], field, offset + start, offset + end)
    if len(spans) > 1:
        kinds = ", ".join(quoted(text[s:e].split(None, 1)[0].upper()) for s, e in spans[:6])
        more = "…" if len(spans) > 6 else ""
        facts.append(
            Fact(
                "sql.many_statements",
                f"{len(spans)} SQL statements in one string ({kinds}{more})",
                field,
                offset + spans[0][0],
                offset + spans[-1][1],
                None,
            )
        )
    if len(spans) > MAX_STATEMENTS:
        return (
            facts,
            f"only the first {MAX_STATEMENTS} of {len(spans)} statements in {field} were read",
        )
    if failed or not spans:
        return facts, f"could not read {field} as SQL" + (
            f" ({failed} of {len(spans)} statements)" if failed and len(spans) > 1 else ""
        )
    return facts, ""


def names(tables: list[Any]) -> str:
    return ", ".join(quoted(t.sql()) for t in tables[:4]) + ("…" if len(tables) > 4 else "")


def is_always_true(where: Any) -> bool:
    """WHERE 1=1, WHERE TRUE, WHERE 'a'='a': a condition that keeps every row."""
    from sqlglot import exp

    cond = where.this if isinstance(where, exp.Where) else where
    if isinstance(cond, exp.Boolean):
        return bool(cond.this)
    if isinstance(cond, exp.EQ):
        left, right = cond.left, cond.right
        return isinstance(left, exp.Literal) and left == right
    if isinstance(cond, exp.Or):
        return is_always_true(cond.left) or is_always_true(cond.right)
    return False


def statement_facts(tree: Any, text: str, field: str, start: int, end: int) -> list[Fact]:
    from sqlglot import exp

    def fact(code: str, sentence: str, implies: str | None) -> Fact:
        return Fact(code, sentence, field, start, end, implies)

    if tree is None:
        return []
    if isinstance(tree, exp.Drop):
        kind = str(tree.args.get("kind") or "object").upper()
        what = names(tree.args.get("tables") or []) or quoted(tree.this.sql() if tree.this else "")
        return [fact("sql.drop", f"DROP {kind} {what}: it is gone with its data", DESTRUCTIVE)]
    if isinstance(tree, exp.TruncateTable):
        what = names(tree.expressions)
        return [fact("sql.truncate", f"TRUNCATE {what}: it deletes every row", DESTRUCTIVE)]
    if isinstance(tree, exp.Alter):
        what = quoted(tree.this.sql()) if tree.this else "a table"
        drops = any(isinstance(a, exp.Drop) for a in tree.args.get("actions") or [])
        return [
            fact(
                "sql.alter",
                f"ALTER {what}" + (": it drops a column and its data" if drops else ""),
                DESTRUCTIVE if drops else UNSAFE_WRITE,
            )
        ]
    if isinstance(tree, exp.Command):
        word = str(tree.this).upper()
        if word == "TRUNCATE":
            return [fact("sql.truncate", "TRUNCATE: it deletes every row", DESTRUCTIVE)]
        if word in {"REPLACE", "UPSERT", "COPY", "LOAD", "GRANT", "REVOKE", "VACUUM", "REINDEX"}:
            return [fact("sql.write", f"{word} statement changes the database", UNSAFE_WRITE)]
        return []
    return write_facts(tree, fact)


def write_facts(tree: Any, fact: Any) -> list[Fact]:
    from sqlglot import exp

    facts: list[Fact] = []
    if isinstance(tree, exp.Delete | exp.Update):
        verb = "DELETE FROM" if isinstance(tree, exp.Delete) else "UPDATE"
        targets = tree.args.get("tables") or [tree.this]
        table = names([t for t in targets if t is not None]) or "a table"
        where = tree.args.get("where")
        if where is None or is_always_true(where):
            how = "has no WHERE" if where is None else "has a WHERE that keeps every row"
            effect = "it deletes every row" if verb == "DELETE FROM" else "it changes every row"
            facts.append(
                fact("sql.unbounded_write", f"{verb} {table} {how}: {effect}", DESTRUCTIVE)
            )
        columns = ""
        if isinstance(tree, exp.Update):
            cols = [e.this.sql() for e in tree.expressions if isinstance(e, exp.EQ)]
            columns = f" (columns {', '.join(quoted(c) for c in cols[:6])})" if cols else ""
        kind = "deletes rows of" if verb == "DELETE FROM" else "updates"
        facts.append(fact("sql.write", f"{kind} {table}{columns}", UNSAFE_WRITE))
    elif isinstance(tree, exp.Insert):
        target = tree.this
        cols = [c.sql() for c in target.expressions] if isinstance(target, exp.Schema) else []
        table = target.this if isinstance(target, exp.Schema) else target
        columns = f" (columns {', '.join(quoted(c) for c in cols[:6])})" if cols else ""
        name = quoted(table.sql()) if table is not None else "a table"
        facts.append(fact("sql.write", f"inserts into {name}{columns}", UNSAFE_WRITE))
    elif isinstance(tree, exp.Merge):
        name = quoted(tree.this.sql()) if tree.this else "a table"
        facts.append(fact("sql.write", f"MERGE into {name}", UNSAFE_WRITE))
    elif isinstance(tree, exp.Create):
        kind = str(tree.args.get("kind") or "").upper()
        name = quoted(tree.this.sql()) if tree.this else ""
        facts.append(fact("sql.write", f"creates {kind} {name}".replace("  ", " "), UNSAFE_WRITE))
    elif isinstance(tree, exp.Grant | exp.Copy):
        facts.append(
            fact("sql.write", f"{type(tree).__name__.upper()} changes the database", UNSAFE_WRITE)
        )
    return facts
