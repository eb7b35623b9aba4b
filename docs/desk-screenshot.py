"""Make docs/screenshots/desk.png: the desk on a demo journal while simulated agents work.

    QT_QPA_PLATFORM=offscreen uv run python docs/desk-screenshot.py

Builds a small demo journal, starts three simulated agent processes for a while so fresh
requests sit on top of the inbox, opens the desk (light theme, 1400x880), selects the newest
approval and saves the window.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication

from proctor.core import Actor, InboxKind, Journal
from proctor.gui.infra.settings import DeskSettings
from proctor.gui.infra.tasks import TaskRunner
from proctor.gui.infra.theme import Theme, ThemeMode
from proctor.gui.shell.app import build_window, make_app
from proctor.sim.agents import start_agents
from proctor.sim.demo import build_demo_journal

OUT = Path(__file__).parent / "screenshots" / "desk.png"


def spin(app: QApplication, seconds: float, until=lambda: False) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end and not until():
        app.processEvents()
        time.sleep(0.005)


def main() -> int:
    folder = Path(tempfile.mkdtemp(prefix="desk-shot-"))
    path = folder / "journal.db"
    build_demo_journal(path, size="small", seed=0)
    agents = start_agents(path, agents=3, rate=3.0, seed=0)
    time.sleep(25)  # let the agents file fresh requests
    app = make_app()
    Theme(app, ThemeMode.LIGHT)
    settings = DeskSettings(QSettings(str(folder / "desk.ini"), QSettings.Format.IniFormat))
    runner = TaskRunner()
    window = build_window(
        Journal.open(path, actor=Actor.operator("alice")),
        runner=runner,
        settings=settings,
        strict=False,
    )
    window.resize(1400, 880)
    window.show()
    window.start()
    inbox = window.inbox
    spin(app, 20, lambda: inbox.model.rowCount() > 0 and not inbox.model.is_loading())
    rows = [
        r for r in range(inbox.model.rowCount()) if inbox.model.item(r).kind == InboxKind.APPROVAL
    ]
    inbox.set_current_row(rows[0] if rows else 0)
    spin(app, 3)
    image = window.grab().toImage()
    OUT.parent.mkdir(exist_ok=True)
    image.save(str(OUT))
    print(f"saved {OUT}")
    window.close()
    runner.shutdown()
    agents.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
