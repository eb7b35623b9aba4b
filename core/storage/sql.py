"""The write executor: Core statements compiled once per dialect and run on the driver.

Building a ``select()``/``insert()`` per call and letting SQLAlchemy derive its cache key costs
~50-80 us a statement; a write transaction sends 5-30 of them while it holds the journal's
write lock. A ``Prepared`` statement is a portable Core construct (named ``bindparam``s, no
SQLite-only SQL) compiled once per dialect with SQLAlchemy's public compiler API (its text, its
parameters in order, their bind processors, its columns' result processors), so each execution
is one driver call. A PostgreSQL store compiles the same tables with its own dialect.

Each statement shape has one idiom: ``insert_rows``, ``update_where`` and ``row_where`` (and
``row_and_parent``/``parent_and_row``: a ``row_where`` with the row it links to, or that links
to it, read in the same statement) build their statement once per table and shape; anything
else is a module-level ``Prepared``.

The store registers the connection each of its threads holds (``bind``), with whether anything
listens for cursor executions (a benchmark's recorder, a test), decided once per transaction:
then a statement goes through ``Connection.exec_driver_sql`` so the listener sees it; otherwise
it goes straight to the driver. A connection the store did not register is asked each time.

Rows are tuples with attribute access and ``_mapping`` (what ``rows.to_model`` reads); types
whose driver values need converting (Boolean on SQLite) are converted as SQLAlchemy would.
"""

from __future__ import annotations

import functools
import operator
import threading
from collections import namedtuple
from collections.abc import Iterable
from typing import Any

from sqlalchemy import Connection, Integer, Table, and_, bindparam, exc, insert, select, update
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql import Executable
from sqlalchemy.sql.functions import FunctionElement


class Link:
    """What the executor needs of one store connection: its driver connection, its dialect's
    key, and whether this transaction's statements must be seen by a listener."""

    __slots__ = (
        "busy",
        "conn",
        "dialect",
        "driver",
        "executemany",
        "generation",
        "key",
        "listened",
        "owner",
        "runs",
        "touched",
        "trans",
    )

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self.driver: Any = conn.connection.driver_connection  # checked out: never None
        self.executemany = _executemany(self.driver)
        self.dialect = conn.dialect
        self.key = _dialect_key(conn.dialect)
        self.listened = False
        # kept by db.ThreadConnections: in a transaction, its SQLAlchemy transaction (when
        # listened), which reset it belongs to, the thread that keeps it (None: borrowed)
        self.busy = False
        self.trans: Any = None
        self.generation = 0
        self.owner: Any = None
        # the unit of work's run heads, this transaction only (tx.Tx.run_row)
        self.runs: dict[str, Any] | None = None
        # the runs this transaction's statements wrote to (db.watch_runs)
        self.touched: set[str] | None = None


def _executemany(driver: Any) -> Any:
    """The driver connection's ``executemany`` (sqlite3 has one; psycopg's is a cursor's)."""
    found = getattr(driver, "executemany", None)
    if found is not None:
        return found

    def many(sql: str, params: Any) -> Any:
        cursor = driver.cursor()
        cursor.executemany(sql, params)
        return cursor

    return many


_LINKS: dict[int, Link] = {}


def bind(conn: Connection) -> Link:
    """Register ``conn`` (a connection a store keeps for one thread)."""
    link = Link(conn)
    _LINKS[id(conn)] = link
    return link


def unbind(conn: Connection) -> None:
    _LINKS.pop(id(conn), None)


def listened(conn: Connection) -> bool:
    """True if something listens for ``conn``'s cursor executions."""
    dispatch = conn.dispatch
    return bool(dispatch.before_cursor_execute or dispatch.after_cursor_execute)


def _link_of(conn: Connection) -> Link:
    link = _LINKS.get(id(conn))
    if link is not None and link.conn is conn:
        return link
    return _loose_link(conn)


def _loose_link(conn: Connection) -> Link:
    """A link for a connection no store keeps: made (and its listeners asked) each time."""
    link = Link(conn)
    link.listened = listened(conn)
    return link


def link_of(conn: Connection) -> Link | None:
    """The store's link for ``conn`` (None for a connection no store keeps)."""
    link = _LINKS.get(id(conn))
    return link if link is not None and link.conn is conn else None


_DIALECTS: dict[tuple, int] = {}
_DIALECTS_LOCK = threading.Lock()


def _dialect_key(dialect: Any) -> int:
    """What the compiled text depends on, as a small number (every engine has its own dialect
    object; keying by the object would keep one plan per journal ever opened)."""
    facts = (type(dialect), dialect.paramstyle, getattr(dialect, "server_version_info", None))
    with _DIALECTS_LOCK:  # two dialects first seen at once never share a number
        return _DIALECTS.setdefault(facts, len(_DIALECTS))


class _Plan:
    """One statement compiled for one dialect (and one set of value keys)."""

    __slots__ = (
        "convert",
        "defaults",
        "names",
        "order",
        "pick",
        "procs",
        "results",
        "row",
        "single",
        "sql",
    )

    def __init__(self, stmt: Any, dialect: Any, column_keys: list[str] | None) -> None:
        compiled = stmt.compile(dialect=dialect, column_keys=column_keys)
        self.sql = compiled.string
        if "POSTCOMPILE" in self.sql:
            raise ValueError(
                "a prepared statement cannot hold an IN list (it is expanded per "
                "call): compare with or_() instead"
            )
        binds = compiled.binds  # name -> BindParameter
        self.names = tuple(compiled.positiontup or ()) if compiled.positional else None
        self.defaults = {name: bp.effective_value for name, bp in binds.items() if not bp.required}
        procs = {name: bp.type.bind_processor(dialect) for name, bp in binds.items()}
        self.procs = {k: p for k, p in procs.items() if p is not None}
        # positional: each parameter's name, bind processor and default, in order
        self.order = tuple(
            (n, self.procs.get(n), self.defaults.get(n, _REQUIRED)) for n in self.names or ()
        )
        # positional, every parameter required: picked in C, then the few that need their
        # bind processor (a Float, a Boolean) converted in place
        # (``single``: the one parameter's name, sent as a 1-tuple)
        self.pick: Any = None
        self.single: str | None = None
        self.convert: tuple[tuple[int, Any], ...] = ()
        if self.names and all(d is _REQUIRED for _, _, d in self.order):
            self.convert = tuple((i, p) for i, (_, p, _) in enumerate(self.order) if p is not None)
            if len(self.names) > 1:
                self.pick = operator.itemgetter(*self.names)
            elif not self.convert:
                self.single = self.names[0]
        self.results = None  # the columns that need their result processor, by index
        if getattr(stmt, "is_select", False):
            found = [c.type.result_processor(dialect, None) for c in stmt.selected_columns]
            self.results = tuple((i, p) for i, p in enumerate(found) if p) or None
        self.row: Any = None  # the row class, made on the first fetch (it needs the names)

    def params(self, values: dict) -> Any:
        if self.single is not None:
            return (values[self.single],)
        pick = self.pick
        if pick is not None:
            if not self.convert:
                return pick(values)
            picked = list(pick(values))
            for i, p in self.convert:
                picked[i] = p(picked[i])
            return tuple(picked)
        if self.names is None:  # a named paramstyle: the values by name
            merged = {**self.defaults, **values} if self.defaults else values
            procs = self.procs
            if procs:
                merged = {k: (procs[k](v) if k in procs else v) for k, v in merged.items()}
            return merged
        return tuple(
            [
                (values[n] if d is _REQUIRED else values.get(n, d))
                if p is None
                else p(values[n] if d is _REQUIRED else values.get(n, d))
                for n, p, d in self.order
            ]
        )

    def make_rows(self, fields: list[str], raw: list[tuple]) -> list[Any]:
        if self.row is None:
            self.row = row_class(fields)
        make = self.row._new
        if self.results is None:
            return list(map(make, raw))
        rows = []
        for r in raw:
            values = list(r)
            for i, p in self.results:
                values[i] = p(values[i])
            rows.append(make(values))
        return rows


_REQUIRED = object()  # a parameter with no default


def _as_mapping(row: Any) -> dict:
    return dict(zip(row._fields, row, strict=True))


class Prepared:
    """One Core statement, compiled on first use per dialect (and per set of value keys)."""

    __slots__ = ("_lock", "_plans", "stmt")

    def __init__(self, stmt: Executable) -> None:
        self.stmt = stmt
        self._plans: dict[Any, _Plan] = {}
        self._lock = threading.Lock()

    def plan(self, link: Link, column_keys: tuple[str, ...] | None = None) -> _Plan:
        key = (link.key, column_keys)
        plan = self._plans.get(key)
        if plan is None:
            with self._lock:
                plan = self._plans.get(key) or _Plan(
                    self.stmt, link.dialect, list(column_keys) if column_keys else None
                )
                self._plans[key] = plan
        return plan

    # -- execution (each a straight line: the link, the plan, the driver call)
    def execute(
        self,
        conn: Connection,
        values: dict | None = None,
        *,
        column_keys: tuple[str, ...] | None = None,
    ) -> int:
        """Run it; the number of rows it changed."""
        link = _LINKS.get(id(conn))
        if link is None or link.conn is not conn:
            link = _loose_link(conn)
        plan = self._plans.get((link.key, column_keys)) or self.plan(link, column_keys)
        return _write(link, plan, plan.params(values or {}), many=False)

    def execute_many(
        self, conn: Connection, rows: list[dict], column_keys: tuple[str, ...] | None = None
    ) -> None:
        link = _link_of(conn)
        plan = self.plan(link, column_keys)
        params = plan.params
        _write(link, plan, [params(r) for r in rows], many=True)

    def all(self, conn: Connection, **values: Any) -> list[Any]:
        link = _LINKS.get(id(conn))
        if link is None or link.conn is not conn:
            link = _loose_link(conn)
        plan = self._plans.get((link.key, None)) or self.plan(link)
        return _read(link, plan, plan.params(values))

    def first(self, conn: Connection, **values: Any) -> Any:
        return self.first_of(conn, values)

    def first_of(self, conn: Connection, values: dict) -> Any:
        """``first(conn, **values)``, the values given as they are."""
        link = _LINKS.get(id(conn))
        if link is None or link.conn is not conn:
            link = _loose_link(conn)
        plan = self._plans.get((link.key, None)) or self.plan(link)
        rows = _read(link, plan, plan.params(values))
        return rows[0] if rows else None

    def scalar(self, conn: Connection, **values: Any) -> Any:
        row = self.first(conn, **values)
        return row[0] if row is not None else None


def _write(link: Link, plan: _Plan, params: Any, *, many: bool) -> int:
    if link.listened:
        return link.conn.exec_driver_sql(plan.sql, params).rowcount
    try:
        if many:
            return link.executemany(plan.sql, params).rowcount
        return link.driver.execute(plan.sql, params).rowcount
    except link.dialect.loaded_dbapi.Error as err:
        raise _wrapped(link, plan, params, err) from err


def _read(link: Link, plan: _Plan, params: Any) -> list[Any]:
    if link.listened:
        result = link.conn.exec_driver_sql(plan.sql, params)
        return plan.make_rows(list(result.keys()), [tuple(r) for r in result])
    try:
        cursor = link.driver.execute(plan.sql, params)
        raw = cursor.fetchall()
    except link.dialect.loaded_dbapi.Error as err:
        raise _wrapped(link, plan, params, err) from err
    return plan.make_rows([d[0] for d in cursor.description] if plan.row is None else [], raw)


def _wrapped(link: Link, plan: _Plan, params: Any, err: Exception) -> Exception:
    dbapi = link.dialect.loaded_dbapi
    return exc.DBAPIError.instance(plan.sql, params, err, dbapi.Error, dialect=link.dialect)


# ---------------------------------------------------------------- statements by shape
# Each idiom keeps its statements by table and shape (the WHERE's columns in the caller's
# order: one per call site), built on first use; a hot call builds no key but the shape.
_INSERTS: dict[Table, Prepared] = {}
_UPDATES: dict[tuple[Table, tuple[Any, ...]], tuple[Prepared, tuple[str, ...]]] = {}
_SELECTS: dict[tuple[Table, tuple[Any, ...]], Prepared] = {}
_NUMBERED: dict[tuple[Any, ...], Prepared] = {}
# rows per numbered INSERT: its statements are kept one per row count, and 4 columns of 200
# rows stay under the 999 parameters an old SQLite allows
NUMBERED_ROWS = 200
_JOINED: dict[tuple[Any, ...], tuple[Prepared, Any]] = {}
_SHAPES_LOCK = threading.Lock()


def _shape(kept: dict, key: Any, build: Any) -> Any:
    with _SHAPES_LOCK:
        found = kept.get(key)
        if found is None:
            found = kept[key] = build()
    return found


def insert_rows(conn: Connection, table: Table, rows: Iterable[dict]) -> None:
    """INSERT each row (all rows with the same keys) in one executemany."""
    if type(rows) is not list:
        rows = list(rows)
    if not rows:
        return
    stmt = _INSERTS.get(table) or _shape(_INSERTS, table, lambda: Prepared(insert(table)))
    if len(rows) == 1:
        stmt.execute(conn, rows[0], column_keys=tuple(rows[0]))
    else:
        stmt.execute_many(conn, rows, column_keys=tuple(rows[0]))


def insert_numbered(conn: Connection, table: Table, rows: list[dict], key: str) -> list[Any]:
    """INSERT the rows (all with the same keys) in one multi-row statement (per NUMBERED_ROWS)
    ``RETURNING`` the ``key`` column the database fills in: each row's value, in the rows'
    order. For a key that grows row by row under the write lock (the change feed's seq) the
    rows get ascending values in the order they are listed, so the values returned are
    sorted (no dialect promises an order for RETURNING's rows)."""
    found: list[Any] = []
    for start in range(0, len(rows), NUMBERED_ROWS):
        chunk = rows[start : start + NUMBERED_ROWS]
        keys = tuple(chunk[0])
        shape = (table, key, keys, len(chunk))
        stmt = _NUMBERED.get(shape) or _shape(
            _NUMBERED, shape, functools.partial(_numbered, table, key, keys, len(chunk))
        )
        values = {f"r{i}_{k}": row[k] for i, row in enumerate(chunk) for k in keys}
        found.extend(sorted(r[0] for r in stmt.all(conn, **values)))
    return found


def _numbered(table: Table, key: str, keys: tuple[str, ...], n: int) -> Prepared:
    values = [{k: bindparam(f"r{i}_{k}", type_=table.c[k].type) for k in keys} for i in range(n)]
    return Prepared(insert(table).values(values).returning(table.c[key]))


def update_where(conn: Connection, table: Table, values: dict, **where: Any) -> int:
    """UPDATE ``table`` SET ``values`` WHERE each ``where`` column equals its value; the
    number of rows changed."""
    keys = tuple(where) if None not in where.values() else _where_keys(where)
    found = _UPDATES.get((table, keys)) or _shape(
        _UPDATES,
        (table, keys),
        lambda: (
            Prepared(update(table).where(_where(table, keys, "w_"))),
            tuple("w_" + k for k in where),
        ),
    )
    stmt, renamed = found
    params = dict(values)
    if len(keys) == len(where):
        params.update(zip(renamed, where.values(), strict=True))
    else:  # a None one is not sent (IS NULL has no parameter)
        params.update((w, v) for w, v in zip(renamed, where.values(), strict=True) if v is not None)
    return stmt.execute(conn, params, column_keys=tuple(values))


def row_where(conn: Connection, table: Table, **where: Any) -> Any:
    """The first row of ``table`` whose columns equal ``where`` (None if there is none)."""
    keys = tuple(where) if None not in where.values() else _where_keys(where)
    stmt = _SELECTS.get((table, keys)) or _shape(
        _SELECTS, (table, keys), lambda: Prepared(select(table).where(_where(table, keys, "")))
    )
    return stmt.first_of(conn, where)  # a None one is not sent (IS NULL has no parameter)


def row_and_parent(
    conn: Connection, table: Table, parent: Table, link: str, /, **where: Any
) -> tuple[Any, Any]:
    """``row_where(conn, table, **where)`` and, in the same statement, the row of ``parent``
    whose key the row's ``link`` column names (None when the row is None or names none): a
    transaction that needs both reads once. Each comes as ``row_where`` gives it."""
    keys = tuple(where) if None not in where.values() else _where_keys(where)
    shape = (table, parent, link, keys)
    stmt, split = _JOINED.get(shape) or _shape(
        _JOINED, shape, lambda: _joined(_with_parent(table, parent, link, keys), table, parent)
    )
    found = stmt.first_of(conn, where)
    if found is None:
        return None, None
    return split(found)


def parent_and_row(
    conn: Connection, parent: Table, key: Any, table: Table, /, **where: Any
) -> tuple[Any, Any] | None:
    """The row of ``parent`` whose key is ``key`` and, in the same statement,
    ``row_where(conn, table, **where)`` (each as ``row_where`` gives it, the second None when
    there is none); None when ``parent`` has no such row (then nothing of ``table`` was
    read)."""
    keys = tuple(where) if None not in where.values() else _where_keys(where)
    shape = (parent, table, keys)
    stmt, split = _JOINED.get(shape) or _shape(
        _JOINED, shape, lambda: _joined(_beside_parent(parent, table, keys), parent, table)
    )
    where["parent_key"] = key
    found = stmt.first_of(conn, where)
    if found is None:
        return None
    return split(found)


def _joined(stmt: Any, first: Table, second: Table) -> tuple[Prepared, Any]:
    return Prepared(stmt), _splitter(first, second)


def _beside_parent(parent: Table, table: Table, keys: tuple[Any, ...]) -> Any:
    (pk,) = parent.primary_key.columns
    cols = [c.label(f"row_{c.name}") for c in table.columns]
    return (
        select(parent, *cols)
        .select_from(parent.outerjoin(table, _where(table, keys, "")))
        .where(pk == bindparam("parent_key"))
    )


def _with_parent(table: Table, parent: Table, link: str, keys: tuple[Any, ...]) -> Any:
    (key,) = parent.primary_key.columns
    cols = [c.label(f"parent_{c.name}") for c in parent.columns]
    return (
        select(table, *cols)
        .select_from(table.outerjoin(parent, key == table.c[link]))
        .where(_where(table, keys, ""))
    )


def _splitter(first: Table, second: Table) -> Any:
    """Cut a joined row into ``first``'s row and ``second``'s (None when the outer join found
    none: its key is NULL), each of its own row class."""
    n = len(first.columns)
    make = row_class([c.name for c in first.columns])._new
    make_second = row_class([c.name for c in second.columns])._new
    key = next(iter(second.primary_key.columns))
    at = n + [c.name for c in second.columns].index(key.name)

    def split(joined: Any) -> tuple[Any, Any]:
        return make(joined[:n]), (make_second(joined[n:]) if joined[at] is not None else None)

    return split


def row_class(fields: list[str]) -> Any:
    """A named tuple class with ``_mapping``; ``_new(values)`` makes one in C (``_make``
    checks the length in Python: a driver row always has the statement's columns)."""
    cls: Any = type(
        "Row",
        (namedtuple("RowBase", fields, rename=True),),
        {"__slots__": (), "_mapping": property(_as_mapping)},
    )
    cls._new = functools.partial(tuple.__new__, cls)
    return cls


def _where_keys(where: dict) -> tuple[Any, ...]:
    """The shape of a WHERE of equalities: each column (in the caller's order: one shape per
    call site), and which are compared with None (``IS NULL``, never ``= NULL``): the
    column names, then a ``(name, True)`` pair for each such column."""
    if None not in where.values():
        return tuple(where)
    return tuple(where) + tuple([(k, True) for k, v in where.items() if v is None])


def _where(table: Table, keys: tuple[Any, ...], prefix: str) -> Any:
    """The WHERE of the shape ``keys`` (``_where_keys``), each parameter named ``prefix``
    and its column's name."""
    nulls = {k[0] for k in keys if isinstance(k, tuple)}
    return and_(
        *(
            table.c[k].is_(None) if k in nulls else table.c[k] == bindparam(prefix + k)
            for k in keys
            if isinstance(k, str)
        )
    )


# ---------------------------------------------------------------- portable expressions
class whole(FunctionElement):  # noqa: N801 - reads as SQL: whole(x)
    """``x`` as an INTEGER, truncated toward zero, on every dialect: SQLite's CAST truncates,
    PostgreSQL's rounds (a bucket number must not move up at half an hour)."""

    type = Integer()
    inherit_cache = True
    name = "whole"


@compiles(whole)
def _whole(element: Any, compiler: Any, **kw: Any) -> str:
    return f"CAST({compiler.process(element.clauses, **kw)} AS INTEGER)"


@compiles(whole, "postgresql")
def _whole_on_server(element: Any, compiler: Any, **kw: Any) -> str:
    return f"CAST(trunc({compiler.process(element.clauses, **kw)}) AS INTEGER)"


def filed_by_this_login(conn: Connection, agent: bool) -> Any:
    """A WHERE clause for a sweep an agent makes over requests (expiry): on a server journal,
    the rows its own database login filed (``requested_by``, revision 0007t), the only ones a
    team server lets an agent login expire (core/ops/team_checks.py); elsewhere every row."""
    from sqlalchemy import text, true

    if agent and conn.dialect.name == "postgresql":
        return text("requested_by = session_user")
    return true()
