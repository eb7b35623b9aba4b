"""PagedModel.apply_rows turns any row list into any other with fine-grained signals."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PySide6.QtCore import QPersistentModelIndex

from proctor.gui.infra.tasks import TaskRunner
from proctor.gui.widgets.paged_model import Column, PagedModel


@dataclass(frozen=True)
class Row:
    key: str
    value: int


@pytest.fixture
def runner() -> Iterator[TaskRunner]:
    runner = TaskRunner()
    yield runner
    runner.shutdown()


def make_model(runner: TaskRunner) -> PagedModel:
    return PagedModel(
        runner,
        [Column("Key", lambda r: r.key), Column("Value", lambda r: str(r.value))],
        lambda r: r.key,
        lambda r: r.key,
    )


rows = st.lists(
    st.tuples(st.sampled_from("abcdefghij"), st.integers(0, 2)),
    unique_by=lambda t: t[0],
    max_size=10,
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(before=rows, after=rows)
def test_apply_rows_reaches_the_new_list(qtmodeltester, runner, before, after):
    model = make_model(runner)
    qtmodeltester.check(model)  # a fresh tester per example, watching every signal
    model.apply_rows([Row(k, v) for k, v in before])
    kept = {k for k, _ in before} & {k for k, _ in after}
    pins = {k: QPersistentModelIndex(model.index(model.row_of(k), 0)) for k in kept}
    removed, inserted = model.apply_rows([Row(k, v) for k, v in after])
    assert [model.item(r) for r in range(model.rowCount())] == [Row(k, v) for k, v in after]
    assert set(removed) == {k for k, _ in before} - {k for k, _ in after}
    assert set(inserted) == {k for k, _ in after} - {k for k, _ in before}
    for key, pin in pins.items():  # persistent indexes (selection, current) follow their row
        assert pin.row() == model.row_of(key)


def test_patch_rereads_only_named_rows(qtbot, qtmodeltester, runner):
    from proctor.core.models import Page

    truth = {k: Row(k, 0) for k in "bdfh"}  # descending by key: h f d b
    model = PagedModel(runner, [Column("Key", lambda r: r.key)], lambda r: r.key, lambda r: r.key)
    qtmodeltester.check(model)
    picked = []

    def fetch(cursor, limit):  # two pages of two rows
        rows = sorted(truth.values(), key=lambda r: r.key, reverse=True)
        start = 0 if cursor is None else int(cursor)
        more = start + 2 < len(rows)
        return Page[Row](
            items=rows[start : start + 2], next_cursor=str(start + 2) if more else None
        )

    def pick(keys):
        picked.append(set(keys))
        return [truth[k] for k in keys if k in truth]

    model.set_query(fetch, descending=True, pick=pick)
    qtbot.waitUntil(lambda: model.has_loaded and not model.is_loading())
    assert [r.key for r in model.items()] == ["h", "f"]
    truth["g"] = Row("g", 0)  # new, inside the loaded range: inserted in order
    truth["a"] = Row("a", 0)  # new, past the loaded rows: comes with fetchMore, not now
    truth["f"] = Row("f", 1)  # changed
    del truth["h"]  # gone
    model.patch({"g", "a", "f", "h"})
    qtbot.waitUntil(lambda: not model.is_loading() and bool(picked))
    assert picked == [{"g", "a", "f", "h"}]
    assert model.items() == [Row("g", 0), Row("f", 1)]
    model.fetchMore()
    qtbot.waitUntil(lambda: not model.is_loading() and model.rowCount() > 2)
    assert [r.key for r in model.items()][:3] == ["g", "f", "d"]
