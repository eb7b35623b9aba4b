"""Make docs/screenshots/forms-<kind>.png: the desk answering each interaction type.

    QT_QPA_PLATFORM=offscreen uv run python docs/forms-screenshots.py

Builds a journal where a simulated agent asked one question of every type (the
simulator's own content), opens the desk, half-fills each answer form the way an operator
would, and saves the detail pane (8-bit PNG, small).
"""

from __future__ import annotations

import random
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication

from proctor.core import Actor, Journal
from proctor.gui.infra.settings import DeskSettings
from proctor.gui.infra.tasks import TaskRunner
from proctor.gui.shell.app import build_window
from proctor.sim import content

OUT = Path(__file__).parent / "screenshots"


def spin(app: QApplication, seconds: float, until=lambda: False) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end and not until():
        app.processEvents()


def shown(pane, qid: str) -> bool:
    widget = pane.current()
    return (
        widget is not None
        and widget.view is not None
        and widget.entity is not None
        and widget.entity.id == qid
    )


def fill(kind: str, detail) -> None:
    """What an operator would have typed or picked, half-way through."""
    view = detail.view
    if kind == "question":
        view.edit.setPlainText("Use stg-db-3; stg-db-2 is read-only since Monday.")
    elif kind == "choice":
        view.pick(1)
        view.note.setText("Link the issue in the PR description.")
    elif kind == "form":
        form = view.form
        for name, text in (
            ("version", "4.2.1"),
            ("release_date", "2026-02-03"),
            ("amount", "49.90"),
        ):
            if form.field(name) is not None:
                form.field(name).set_value(text)
        if form.field("channels") is not None:
            form.field("channels").set_checked(0, True)
    elif kind == "confirmation":
        view.no.setChecked(True)
        view.note.setText("Keep the ten newest; delete the rest next week.")
    elif kind == "diff_review":
        view.verdicts.choose("request_changes")
        view.comment.setPlainText("Add a test for an empty invoice: the total must be 0.00, not 0.")
    elif kind == "merge_conflict":
        view.choices.choose("merged")
    elif kind == "credential_binding":
        if view.new_secret.isEnabled():
            view.new_secret.setChecked(True)
            service = (view.question.request or {}).get("service", "service")
            view.name.setText(f"{service}-webshop")
            view.secret.setText("not-a-real-secret")
    elif kind == "memory_change_review":
        view.verdicts.choose("edit")


def main() -> int:
    app = QApplication(sys.argv[:1])
    try:  # show the keyring path with an in-memory backend (no OS keyring needed)
        import keyring
        from keyring.backend import KeyringBackend

        class Memory(KeyringBackend):
            priority = 1  # type: ignore[assignment]

            def set_password(self, *a) -> None: ...
            def get_password(self, *a) -> None: ...
            def delete_password(self, *a) -> None: ...

        keyring.set_keyring(Memory())
    except ImportError:
        pass
    tmp = Path(tempfile.mkdtemp())
    path = tmp / "forms.db"
    rng = random.Random(7)
    with Journal.open(path, actor=Actor.agent("coder")) as agent:
        run = agent.runs.start("webshop", "Fix checkout rounding", agent="coder")
        entry = agent.memory.add(
            "project",
            "webshop",
            "Deploy days",
            "Deploys happen on Tuesdays and Thursdays after 10:00 UTC.",
        )
        asked = {}
        for kind in content.QUESTION_KINDS:
            spec = content.make_question(kind, random.Random(rng.random()), "webshop", entry)
            asked[kind.value] = agent.questions.ask(
                run.id,
                spec.kind,
                spec.prompt.split("\n")[0][:300],
                request=spec.request,
                response_schema=spec.response_schema,
                options=spec.options,
                expires_in=3600,
            ).id
    journal = Journal.open(path, actor=Actor.operator("alice"))
    runner = TaskRunner()
    window = build_window(
        journal,
        runner=runner,
        settings=DeskSettings(QSettings(str(tmp / "desk.ini"), QSettings.Format.IniFormat)),
    )
    window.resize(1360, 900)
    window.show()
    window.start()
    window.inbox.splitter.setSizes([520, 840])
    spin(app, 10, lambda: window.inbox.model.rowCount() >= len(asked))
    OUT.mkdir(exist_ok=True)
    for kind, qid in asked.items():
        window.inbox.set_current_row(window.inbox.model.row_of(f"question:{qid}"))
        pane = window.inbox.detail
        spin(app, 5, partial(shown, pane, qid))
        spin(app, 0.3)
        fill(kind, pane.current())
        spin(app, 0.3)
        image = (
            pane.grab()
            .toImage()
            .convertToFormat(
                QImage.Format.Format_Indexed8,
                Qt.ImageConversionFlag.ThresholdDither | Qt.ImageConversionFlag.AvoidDither,
            )
        )
        image.save(str(OUT / f"forms-{kind}.png"))
        print(f"forms-{kind}.png", (OUT / f"forms-{kind}.png").stat().st_size, "bytes")
    window.close()
    runner.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
