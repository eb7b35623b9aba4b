"""A diff review shows the change: side by side wraps long lines, opens at the first change
and marks what changed within a line; a multi-file patch has one section per file with
its own counts, parsed with unidiff (issue 16, item 8)."""

from __future__ import annotations

from proctor.gui.forms.review import marked_texts

from ..conftest import WAIT_MS
from ..data import agent

LONG_SQL = (
    "SELECT event_id, received_at, payload, source_system, correlation_id, "
    "tenant_id, partition_key FROM raw_events WHERE received_at > now() - interval "
    "'1 day' ORDER BY event_id, received_at"
)
CONTEXT = "".join(f" -- context line {n}\n" for n in range(60))
ONE_FILE = (
    f"--- a/pipelines/dedupe.sql\n+++ b/pipelines/dedupe.sql\n@@ -1,62 +1,62 @@\n"
    f"{CONTEXT}-{LONG_SQL};\n+{LONG_SQL} DESC;\n -- end\n"
)
THREE_FILES = """diff --git a/src/cart.py b/src/cart.py
--- a/src/cart.py
+++ b/src/cart.py
@@ -1,4 +1,4 @@
 import decimal
-total = round(x, 2)
+total = decimal.Decimal(x).quantize(CENT)
+CENT = decimal.Decimal("0.01")
 print(total)
-# old
diff --git a/docs/new.md b/docs/new.md
new file mode 100644
--- /dev/null
+++ b/docs/new.md
@@ -0,0 +1,3 @@
+# New
+--- not a header
+text
diff --git a/legacy.txt b/legacy.txt
deleted file mode 100644
--- a/legacy.txt
+++ /dev/null
@@ -1,2 +0,0 @@
-a
-b
"""


def ask_review(path, diff_text: str, file: str = "") -> str:
    with agent(path, "coder") as a:
        run = a.runs.start("webshop", "Fix it", agent="coder")
        return a.questions.ask(
            run.id,
            "diff_review",
            "Please review my change.",
            request={"path": file, "diff": diff_text},
        ).id


def open_review(qtbot, window, qid: str):
    model = window.inbox.model
    qtbot.waitUntil(lambda: model.row_of(f"question:{qid}") >= 0, timeout=WAIT_MS)
    window.inbox.set_current_row(model.row_of(f"question:{qid}"))
    pane = window.inbox.detail
    qtbot.waitUntil(
        lambda: (
            pane.current() is not None
            and pane.current().view is not None
            and pane.current().entity is not None
            and pane.current().entity.id == qid
        ),
        timeout=WAIT_MS,
    )
    return pane.current().view.material


def test_side_by_side_wraps_and_opens_at_the_change(qtbot, journal_path, open_desk):
    qid = ask_review(journal_path, ONE_FILE, "pipelines/dedupe.sql")
    window = open_desk(journal_path)
    window.resize(1200, 800)
    view = open_review(qtbot, window, qid)
    table = view.table
    [changed] = [n for n, r in enumerate(view.rows) if r.tag == "replace"]
    assert table.model().index(changed, 3).data() == f"{LONG_SQL} DESC;"
    assert "…" not in table.model().index(changed, 3).data()
    # the change is on screen without scrolling: the row is inside the viewport
    qtbot.waitUntil(
        lambda: (
            table.viewport().rect().intersects(table.visualRect(table.model().index(changed, 3)))
        ),
        timeout=WAIT_MS,
    )
    # and the whole line is there: wrapped (taller than one line), nothing off to the side
    qtbot.waitUntil(
        lambda: table.rowHeight(changed) > 2 * table.fontMetrics().height(), timeout=WAIT_MS
    )
    assert table.horizontalScrollBar().maximum() == 0
    # the change within the line is marked: " DESC" on the right, nothing on the left
    assert [t.strip() for t in marked_texts(table, changed, 3)] == ["DESC"]
    assert marked_texts(table, changed, 1) == []


def test_multi_file_patch_has_a_section_per_file_with_its_counts(qtbot, journal_path, open_desk):
    qid = ask_review(journal_path, THREE_FILES)
    window = open_desk(journal_path)
    view = open_review(qtbot, window, qid)
    assert [(f.path, f.status, f.removed, f.added) for f in view.files] == [
        ("src/cart.py", "modified", 2, 2),
        ("docs/new.md", "added", 0, 3),
        ("legacy.txt", "removed", 2, 0),
    ]
    assert view.head.text().startswith("3 files  ·  −4 +5")
    headers = [view.table.model().index(f.first_row, 0).data() for f in view.files]
    assert headers == [
        "src/cart.py  ·  −2 +2",
        "docs/new.md (added)  ·  −0 +3",
        "legacy.txt (removed)  ·  −2 +0",
    ]
    assert view.file_list.isVisible() and view.file_list.count() == 3
    # "--- not a header" inside the new file is an added line, not a file header
    added = [r.right for r in view.rows if r.tag == "insert"]
    assert "--- not a header" in added


def test_unreadable_patch_says_so_and_keeps_the_text(qtbot, journal_path, open_desk):
    broken = "--- a/x\n+++ b/x\n@@ -1,9 +1,9 @@\n-a\n+b\n"
    qid = ask_review(journal_path, broken, "x")
    window = open_desk(journal_path)
    view = open_review(qtbot, window, qid)
    assert "could not be read" in view.head.text()
    assert view.unified.toPlainText() == broken
