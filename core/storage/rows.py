"""Row -> model conversion and the column sets the read queries share."""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from pydantic import BaseModel
from pydantic import ValidationError as ModelError
from sqlalchemy import Select, Table, bindparam, select

from proctor.core import errors
from proctor.core.kernel.canonical import loads
from proctor.core.kernel.integrity import action_tampered
from proctor.core.kernel.origin import from_text as origin_from_text
from proctor.core.models import (
    Approval,
    ApprovalRule,
    Attempt,
    AuditEntry,
    Conflict,
    Decision,
    Effect,
    MemoryEntry,
    MemoryMutation,
    Question,
    Receipt,
    Run,
    RunEvent,
    ToolCall,
)

from . import schema as s
from .sql import Prepared, row_where

M = TypeVar("M", bound=BaseModel)

JSON_FIELDS: dict[type, tuple[str, ...]] = {
    RunEvent: ("payload",),
    ToolCall: ("request", "result"),
    Approval: ("action", "input_schema", "approved_action", "origin"),
    Question: ("request", "response_schema", "options", "response", "origin"),
    Conflict: ("origin",),
    Decision: ("decision",),
    Effect: ("action", "result", "origin"),
    Receipt: ("evidence",),
    AuditEntry: ("before", "after"),
}
# Models whose action is re-checked against its digest on every read.
DIGESTED = (Approval, Effect)


def to_model(model: type[M], row: Any) -> M:
    """A model from a result row or from a dict of column values (a row just written)."""
    shape = _SHAPES.get(model) or _shape_of(model)
    fields, texts, digested = shape
    pairs = row.items() if isinstance(row, dict) else zip(row._fields, row, strict=True)
    data = {k: v for k, v in pairs if k in fields}
    if digested:
        data["tampered"] = action_tampered(data["action"], data.get("action_digest"))
    for name in texts:
        if name == "origin":
            data[name] = origin_from_text(data.get(name))
        else:
            data[name] = decoded(model, data, name)
    return model.model_validate(data)


def decoded(model: type, data: dict, name: str) -> Any:
    """A stored JSON column's value; a text that does not parse is damage, named by place."""
    try:
        return loads(data[name])
    except ValueError as err:
        ident = data.get("id") or data.get("key") or data.get("sequence") or "?"
        raise errors.Damaged(
            f"{model.__name__.lower()} {ident}, its {name}",
            f"the stored JSON does not parse ({err})",
        ) from None


def _shape_of(model: type[BaseModel]) -> tuple[frozenset[str], tuple[str, ...], bool]:
    """What ``to_model`` needs of a model: its field names, its JSON columns, and whether its
    action is digested."""
    shape = (frozenset(model.model_fields), JSON_FIELDS.get(model, ()), model in DIGESTED)
    return _SHAPES.setdefault(model, shape)


_SHAPES: dict[type, tuple[frozenset[str], tuple[str, ...], bool]] = {}


def to_models(model: type[M], rows: Iterable[Any]) -> list[M]:
    return [to_model(model, r) for r in rows]


def as_written(model: type[M], row: dict) -> M | None:
    """The model of a row this transaction just wrote, from the values it sent (``row``:
    every column, as ``written_row``/``inserted_row`` give them) instead of reading it back.
    The model is built the way a read builds it (``to_model``): the same parsing of its JSON
    columns, the same digest re-check, the same coercions. None when a value is not one a
    read would give back as sent (text given as a number, which SQLite stores as its text):
    the caller then reads the row."""
    try:
        return to_model(model, row)
    except ModelError:
        return None


def written_row(row: Any, values: dict) -> dict:
    """Every column of ``row`` (as read in this transaction) after an UPDATE of ``values``."""
    written = dict(zip(row._fields, row, strict=True))
    written.update(values)
    return written


def inserted_row(table: Table, values: dict) -> dict | None:
    """Every column of the row an INSERT of ``values`` into ``table`` stores (the columns
    it leaves out are NULL); None when a column left out has a default (then the stored
    row is read back)."""
    missing = _OPTIONAL.get(table.name)
    if missing is None:
        missing = _OPTIONAL[table.name] = {
            c.name: c.server_default is None and c.default is None for c in table.columns
        }
    row = dict(values)
    for name, plain in missing.items():
        if name not in row:
            if not plain:
                return None
            row[name] = None
    return row


_OPTIONAL: dict[str, dict[str, bool]] = {}  # table -> column -> left out, it is NULL


# Items that belong to a run carry the run's agent/project/space/title.
RUN_CONTEXT = (s.runs.c.project, s.runs.c.space, s.runs.c.title.label("run_title"))


def approval_select() -> Select:
    return select(s.approvals, *RUN_CONTEXT).join(s.runs, s.runs.c.id == s.approvals.c.run_id)


def question_select() -> Select:
    return select(s.questions, *RUN_CONTEXT).join(s.runs, s.runs.c.id == s.questions.c.run_id)


def conflict_select() -> Select:
    e = s.memory_entries
    return select(s.conflicts, e.c.scope, e.c.scope_key, e.c.title).join(
        e, e.c.id == s.conflicts.c.entry_id
    )


def fetch_one(conn: Any, model: type[M], stmt: Select, what: str) -> M:
    row = conn.execute(stmt).first()
    if row is None:
        raise errors.NotFound(f"{what} does not exist")
    return to_model(model, row)


def fetch_prepared(conn: Any, model: type[M], stmt: Prepared, what: str, **params: Any) -> M:
    """``fetch_one`` for a prepared statement (the write paths read their result with it)."""
    row = stmt.first(conn, **params)
    if row is None:
        raise errors.NotFound(f"{what} does not exist")
    return to_model(model, row)


def one_where(conn: Any, model: type[M], table: Table, what: str, **where: Any) -> M:
    """The row of ``table`` whose columns equal ``where`` (``sql.row_where``), as ``model``;
    NotFound ("``what`` does not exist") when there is none."""
    row = row_where(conn, table, **where)
    if row is None:
        raise errors.NotFound(f"{what} does not exist")
    return to_model(model, row)


def by_id(stmt: Select, column: Any) -> Prepared:
    """``stmt`` (a join: a plain table's row by key is ``one_where``) narrowed to one key,
    prepared: ``.first(conn, key=...)``."""
    return Prepared(stmt.where(column == bindparam("key")))


def all_rows(stmt: Any) -> Callable[[Any], list[Any]]:
    """A read of every row ``stmt`` returns (what ``store.read`` runs): binds ``stmt`` now,
    so a loop may build one per statement."""
    return lambda conn: list(conn.execute(stmt).all())


# ---------------------------------------------------------------- keyset cursors


def encode_cursor(*values: Any) -> str:
    text = "\x1f".join(repr(v) for v in values)
    return base64.urlsafe_b64encode(text.encode()).decode()


def decode_cursor(cursor: str) -> list[Any]:
    import ast

    try:
        text = base64.urlsafe_b64decode(cursor.encode()).decode()
        return [ast.literal_eval(part) for part in text.split("\x1f")]
    except (ValueError, SyntaxError, UnicodeDecodeError) as exc:
        raise errors.ValidationError(f"malformed page cursor {cursor!r}", field="cursor") from exc


__all__ = [
    "Approval",
    "ApprovalRule",
    "Attempt",
    "AuditEntry",
    "Conflict",
    "Decision",
    "Effect",
    "MemoryEntry",
    "MemoryMutation",
    "Question",
    "Receipt",
    "Run",
    "RunEvent",
    "ToolCall",
]
