"""Make docs/screenshots/rule-preview.png: a rule being made from an approval, with its
impact preview (past requests it would have decided, pending ones it would decide now).

    Xvfb :108 -screen 0 1400x900x24 &  DISPLAY=:108 uv run python docs/rules-screenshot.py

Builds a small journal (fs.write requests of two agents in one space, some decided, some
pending), opens the desk (light theme, 1400x900), selects the newest request, chooses
"Always in this space", widens the resource pattern to /srv/app/*, adds a condition, waits
for the preview and saves the window.
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

OUT = Path(__file__).parent / "screenshots" / "rule-preview.png"


def spin(app: QApplication, seconds: float, until=lambda: False) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end and not until():
        app.processEvents()
        time.sleep(0.005)


def write(path: str, size: int) -> dict:
    return {"tool": "fs.write", "args": {"path": path, "bytes": size}}


def build(path: Path) -> str:
    with (
        Journal.open(path, actor=Actor.agent("coder")) as coder,
        Journal.open(path, actor=Actor.agent("docs-bot")) as docs,
        Journal.open(path, actor=Actor.operator("bob")) as bob,
    ):
        r1 = coder.runs.start("webshop", "Fix checkout rounding", space="app", agent="coder")
        r2 = docs.runs.start("webshop", "Refresh the docs", space="app", agent="docs-bot")
        for n, (j, run) in enumerate([(coder, r1)] * 5 + [(docs, r2)] * 3):
            a = j.approvals.request(
                run.id, write(f"/srv/app/src/f{n}.py", 800 + n), reason="apply the change"
            )
            bob.approvals.decide(a.id, True, expected_version=1, reason="routine")
        docs.approvals.request(
            r2.id, write("/srv/app/docs/index.md", 1200), reason="update the index page"
        )
        coder.approvals.request(
            r1.id, write("/srv/app/src/big.bin", 9_000_000), reason="vendored binary"
        )
        return coder.approvals.request(
            r1.id,
            write("/srv/app/src/cart.py", 2048),
            reason="Apply the rounding fix to the cart total.",
        ).id


def main() -> int:
    folder = Path(tempfile.mkdtemp(prefix="rules-shot-"))
    path = folder / "journal.db"
    current = build(path)
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
    window.resize(1400, 900)
    window.show()
    window.start()
    inbox = window.inbox
    key = f"approval:{current}"
    spin(app, 20, lambda: inbox.model.row_of(key) >= 0)
    inbox.set_current_row(inbox.model.row_of(key))
    detail = inbox.detail
    spin(app, 10, lambda: detail.current() is not None and detail.current().entity is not None)
    approval = detail.current()
    approval.scopes.button(2).click()  # "Always in this space"
    panel = approval.rule_panel
    spin(app, 10, lambda: panel.base is not None)
    panel.resource.setText("/srv/app/*")
    panel.condition.setText("args.bytes <= 1000000")
    spin(app, 10, lambda: panel.preview is not None)
    panel.apply.setChecked(True)
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
