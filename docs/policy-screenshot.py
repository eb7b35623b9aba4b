"""Make docs/images/policy-halfway.png: a request halfway through its approval policy.

    QT_QPA_PLATFORM=offscreen uv run python docs/policy-screenshot.py

Builds the small demo journal with carol as the desk's operator (the demo puts her in its
``ops`` group, sim/demo_policy.py), opens the desk as carol (light theme, 1400x880) on
"Waiting for me", selects the request alice approved first ("1 of 2 approvals — alice
approved at …; waiting for ops") and saves the window.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication

from proctor.core import Actor, Journal
from proctor.gui.infra.settings import DeskSettings
from proctor.gui.infra.tasks import TaskRunner
from proctor.gui.infra.theme import Theme, ThemeMode
from proctor.gui.shell.app import build_window, make_app
from proctor.sim.demo import build_demo_journal, recent_start
from proctor.sim.demo_policy import TOOL

OUT = Path(__file__).parent / "images" / "policy-halfway.png"
OPERATOR = "carol"


def spin(app: QApplication, seconds: float, until=lambda: False) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end and not until():
        app.processEvents()
        time.sleep(0.005)


def main() -> int:
    folder = Path(tempfile.mkdtemp(prefix="policy-shot-"))
    path = folder / "journal.db"
    build_demo_journal(path, size="small", seed=0, start_time=recent_start(), operator=OPERATOR)
    app = make_app()
    Theme(app, ThemeMode.LIGHT)
    settings = DeskSettings(QSettings(str(folder / "desk.ini"), QSettings.Format.IniFormat))
    runner = TaskRunner()
    window = build_window(
        Journal.open(path, actor=Actor.operator(OPERATOR)),
        runner=runner,
        settings=settings,
        strict=False,
    )
    window.resize(1400, 880)
    window.show()
    window.start()
    inbox = window.inbox
    spin(app, 20, lambda: inbox.model.rowCount() > 0 and not inbox.model.is_loading())
    inbox.filters.mine.setCurrentIndex(inbox.filters.mine.findData("waiting_for"))
    spin(app, 20, lambda: any(i.summary.startswith(TOOL) for i in inbox.model.items()))
    row = next(r for r, i in enumerate(inbox.model.items()) if i.summary.startswith(TOOL))
    inbox.set_current_row(row)
    detail = inbox.detail
    spin(app, 20, lambda: "1 of 2 approvals" in detail.current().policy_line.text())
    spin(app, 2)
    image = window.grab().toImage()
    OUT.parent.mkdir(exist_ok=True)
    image.save(str(OUT))
    print(f"saved {OUT}")
    window.close()
    runner.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
