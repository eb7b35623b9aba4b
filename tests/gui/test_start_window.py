"""The desk's window is up before the desk is imported (issue 33, target 2): a start shows
its window, saying what it is doing, in the time a bare PySide6 window takes; the main
window is then put inside that same window (no window gives way to another), and its inbox
says "Loading the inbox…" until the inbox is there. A real process on a real journal."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from proctor.core import Actor, Journal

SCRIPT = textwrap.dedent(
    """
    import sys
    from PySide6.QtWidgets import QApplication, QLabel
    from proctor.gui.shell import start

    first = []

    def opening():
        shown = [w for w in QApplication.topLevelWidgets() if w.isVisible()]
        first.extend(shown)
        print("opening:", [type(w).__name__ for w in shown])
        print("saying:", [[t.text() for t in w.findChildren(QLabel)][-1] for w in shown])
        print("desk imported:", "proctor.gui.shell.app" in sys.modules)
        print("core imported:", "proctor.core" in sys.modules)
        heavy = ("sqlalchemy", "pydantic", "jsonschema", "cryptography", "alembic")
        print("heavy imported:", sorted(m for m in heavy if m in sys.modules))

    def main_window(window):
        inbox = window.inbox
        print("loading text:", inbox._empty_text() if not inbox.model.has_loaded else "loaded")
        shown = [w for w in QApplication.topLevelWidgets() if w.isVisible()]
        print("visible:", [type(w).__name__ for w in shown])
        print("the first window:", shown == first and window.window() is first[0])
        print("title:", window.window().windowTitle() == window.windowTitle())
        window.window().close()  # closing the window closes the desk in it

    code = start.run_desk(sys.argv[1], report_opening=opening, on_window=main_window,
                          single_instance=False)
    print("ended:", code)
    sys.exit(code)
    """
)


def test_the_window_shows_before_the_desk_is_imported_and_becomes_the_desk(tmp_path):
    path = tmp_path / "journal.db"
    with Journal.open(path, actor=Actor.agent("bot")) as a:
        run = a.runs.start("p", "t")
        a.approvals.request(run.id, {"tool": "deploy"}, reason="ship")
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PROCTOR_OPERATOR": "dana"}
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert "desk imported: False" in lines and "core imported: False" in lines
    assert "heavy imported: []" in lines
    assert "the first window: True" in lines  # the main window is in the one shown first
    assert "visible: ['DeskFrame']" in lines  # one window throughout
    assert "opening: ['DeskFrame']" in lines
    assert "saying: ['Loading the desk…']" in lines  # it says what it does
    assert "title: True" in lines
    loading = next(line for line in lines if line.startswith("loading text:"))
    assert loading in ("loading text: Loading the inbox…", "loading text: loaded")
    assert "ended: 0" in lines
