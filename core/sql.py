"""Prepared statements for the write paths: a Core statement built once, compiled once per
dialect, and run on the driver's cursor.

Building a ``select()``/``insert()`` per call and letting SQLAlchemy derive its cache key costs
~50-80 us a statement; a write transaction sends 5-30 of them while it holds the journal's
write lock. A ``Prepared`` statement is a portable Core construct (named ``bindparam``s, no
SQLite-only SQL) whose compiled text and parameter order are kept, so each execution is one
driver call. When something listens for cursor executions (a benchmark's recorder) the
statement goes through ``Connection.exec_driver_sql`` instead, so the listener sees it.

Rows are tuples with attribute access and ``_mapping`` (what ``rows.to_model`` reads); types
whose driver values need converting (Boolean on SQLite) are converted as SQLAlchemy would.
"""

from __future__ import annotations

import threading
from collections import namedtuple
from collections.abc import Iterable
from typing import Any

from sqlalchemy import Connection, Table, and_, bindparam, exc, insert, update
from sqlalchemy.sql import Executable


class _Plan:
    __slots__ = ("sql", "names", "defaults", "binds", "results", "row")

    def __init__(self, stmt: Any, dialect: Any, column_keys: list[str] | None) -> None:
        compiled = stmt.compile(dialect=dialect, column_keys=column_keys)
        self.sql = compiled.string
        if "POSTCOMPILE" in self.sql:
            raise ValueError("a prepared statement cannot hold an IN list (it is expanded per "
                             "call): compare with or_() instead")
        self.names = tuple(compiled.positiontup or ()) if compiled.positional else None
        self.defaults = {name: bp.effective_value for bp, name in compiled.bind_names.items()
                         if not bp.required}
        self.binds = dict(compiled._bind_processors)
        self.results: list[Any] | None = None
        if getattr(stmt, "is_select", False):
            procs = [c.type._cached_result_processor(dialect, None)
                     for c in stmt.selected_columns]
            self.results = procs if any(procs) else None
        self.row: Any = None  # the row class, made on the first fetch (it needs the names)

    def params(self, values: dict) -> Any:
        merged = {**self.defaults, **values} if self.defaults else values
        if self.binds:
            merged = {k: (self.binds[k](v) if k in self.binds else v) for k, v in merged.items()}
        if self.names is None:
            return merged
        return tuple(merged[n] for n in self.names)

    def make_rows(self, fields: list[str], raw: list[tuple]) -> list[Any]:
        if self.row is None:
            self.row = type("Row", (namedtuple("RowBase", fields, rename=True),),
                            {"__slots__": (), "_mapping": property(_as_mapping)})
        if self.results is not None:
            procs = self.results
            raw = [tuple(p(v) if p else v for p, v in zip(procs, r, strict=True)) for r in raw]
        make = self.row._make
        return [make(r) for r in raw]


def _dialect_key(dialect: Any) -> tuple:
    """What the compiled text depends on (every engine has its own dialect object; keying by
    the object would keep one plan per journal ever opened)."""
    return (type(dialect), dialect.paramstyle, getattr(dialect, "server_version_info", None))


def _as_mapping(row: Any) -> dict:
    return dict(zip(row._fields, row, strict=True))


class Prepared:
    """One Core statement, compiled on first use per dialect (and per set of value keys)."""

    def __init__(self, stmt: Executable) -> None:
        self.stmt = stmt
        self._plans: dict[Any, _Plan] = {}
        self._lock = threading.Lock()

    def plan(self, dialect: Any, column_keys: tuple[str, ...] | None = None) -> _Plan:
        key = (_dialect_key(dialect), column_keys)
        plan = self._plans.get(key)
        if plan is None:
            with self._lock:
                plan = self._plans.get(key) or _Plan(
                    self.stmt, dialect, list(column_keys) if column_keys else None)
                self._plans[key] = plan
        return plan

    # -- execution
    def execute(self, conn: Connection, values: dict | None = None, *,
                column_keys: tuple[str, ...] | None = None) -> int:
        """Run it; the number of rows it changed."""
        plan = self.plan(conn.dialect, column_keys)
        return _run(conn, plan, plan.params(values or {}), fetch=False)[0]

    def execute_many(self, conn: Connection, rows: list[dict],
                     column_keys: tuple[str, ...] | None = None) -> None:
        plan = self.plan(conn.dialect, column_keys)
        _run(conn, plan, [plan.params(r) for r in rows], fetch=False, many=True)

    def all(self, conn: Connection, **values: Any) -> list[Any]:
        plan = self.plan(conn.dialect)
        return _run(conn, plan, plan.params(values), fetch=True)[1]

    def first(self, conn: Connection, **values: Any) -> Any:
        rows = self.all(conn, **values)
        return rows[0] if rows else None

    def scalar(self, conn: Connection, **values: Any) -> Any:
        row = self.first(conn, **values)
        return row[0] if row is not None else None


def _listened(conn: Connection) -> bool:
    dispatch = conn.dispatch
    return bool(dispatch.before_cursor_execute or dispatch.after_cursor_execute)


def _run(conn: Connection, plan: _Plan, params: Any, *, fetch: bool,
         many: bool = False) -> tuple[int, list[Any]]:
    if _listened(conn):
        result = conn.exec_driver_sql(plan.sql, params)
        if not fetch:
            return result.rowcount, []
        return 0, _rows_via(plan, result)
    dbapi = conn.dialect.loaded_dbapi
    cursor = conn.connection.driver_connection.cursor()  # type: ignore[union-attr]  # checked out: never None
    try:
        if many:
            cursor.executemany(plan.sql, params)
        else:
            cursor.execute(plan.sql, params)
        if not fetch:
            return cursor.rowcount, []
        raw = cursor.fetchall()
        return 0, plan.make_rows([d[0] for d in cursor.description], raw)
    except dbapi.Error as err:
        raise exc.DBAPIError.instance(plan.sql, params, err, dbapi.Error,
                                      dialect=conn.dialect) from err
    finally:
        cursor.close()


def _rows_via(plan: _Plan, result: Any) -> list[Any]:
    fields = list(result.keys())
    return plan.make_rows(fields, [tuple(r) for r in result])


# ---------------------------------------------------------------- statements by shape
_SHAPES: dict[Any, Prepared] = {}
_SHAPES_LOCK = threading.Lock()


def _shape(key: Any, build: Any) -> Prepared:
    found = _SHAPES.get(key)
    if found is None:
        with _SHAPES_LOCK:
            found = _SHAPES.get(key) or Prepared(build())
            _SHAPES[key] = found
    return found


def insert_rows(conn: Connection, table: Table, rows: Iterable[dict]) -> None:
    """INSERT each row (all rows with the same keys) in one executemany."""
    rows = list(rows)
    if not rows:
        return
    keys = tuple(rows[0])
    stmt = _shape(("insert", table.name), lambda: insert(table))
    if len(rows) == 1:
        stmt.execute(conn, rows[0], column_keys=keys)
    else:
        stmt.execute_many(conn, rows, column_keys=keys)


def update_where(conn: Connection, table: Table, values: dict, **where: Any) -> int:
    """UPDATE ``table`` SET ``values`` WHERE each ``where`` column equals its value; the
    number of rows changed."""
    keys = _where_keys(where)
    stmt = _shape(("update", table.name, keys), lambda: update(table).where(
        _where(table, keys)))
    params = {**values, **{f"w_{k}": v for k, v in where.items() if v is not None}}
    return stmt.execute(conn, params, column_keys=tuple(values))


def row_where(conn: Connection, table: Table, **where: Any) -> Any:
    """The first row of ``table`` whose columns equal ``where`` (None if there is none)."""
    from sqlalchemy import select

    keys = _where_keys(where)
    stmt = _shape(("select", table.name, keys), lambda: select(table).where(
        _where(table, keys)))
    return stmt.first(conn, **{f"w_{k}": v for k, v in where.items() if v is not None})


def _where_keys(where: dict) -> tuple[tuple[str, bool], ...]:
    """The shape of a WHERE of equalities: each column, and whether it is compared with None
    (``IS NULL``, never ``= NULL``)."""
    return tuple(sorted((k, v is None) for k, v in where.items()))


def _where(table: Table, keys: tuple[tuple[str, bool], ...]) -> Any:
    return and_(*(table.c[k].is_(None) if null else table.c[k] == bindparam(f"w_{k}")
                  for k, null in keys))
