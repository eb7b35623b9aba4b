"""A desk process for test_kill_desk.py, killed with SIGKILL in the middle of a click.

Usage: python kill_desk.py JOURNAL APPROVAL_ID MODE SETTINGS_FILE

Opens JOURNAL as operator "alice" (offscreen), selects the approval, clicks Approve, and
prints ``rid <request id>`` (the click's client request id), then where it stands:

  inside  the worker thread is inside the decide transaction (decision, audit row and
          event written, not committed) and stays there: prints ``inside``
  after   the transaction committed; the GUI has not heard of it yet: prints ``committed``
  free    nothing held: prints ``clicked`` and goes on (killed at a random moment)
"""

from __future__ import annotations

import os
import sys
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QSettings, QTimer
from PySide6.QtWidgets import QApplication

from proctor.core import Actor, Journal
from proctor.core import journal as core_journal
from proctor.gui.decide import decider as decide
from proctor.gui.infra.settings import DeskSettings
from proctor.gui.infra.tasks import TaskRunner
from proctor.gui.shell.app import build_window


def say(*words: str) -> None:
    print(*words, flush=True)


def tell_request_ids() -> None:
    plain = decide.request_id

    def request_id() -> str:
        rid = plain()
        say("rid", rid)
        return rid

    decide.request_id = request_id


def hold_inside_the_transaction() -> None:
    plain = core_journal.Tx.audit

    def audit(self, action, *args, **kwargs):
        plain(self, action, *args, **kwargs)
        if action.startswith("approval."):
            say("inside")
            time.sleep(600)

    core_journal.Tx.audit = audit


def hold_after_the_commit() -> None:
    plain = core_journal.Journal.write

    def write(self, fn):
        result = plain(self, fn)
        if getattr(fn, "__qualname__", "").startswith("Approvals.decide"):
            say("committed")
            time.sleep(600)
        return result

    core_journal.Journal.write = write


def main() -> None:
    path, approval_id, mode, settings_file = sys.argv[1:5]
    tell_request_ids()
    if mode == "inside":
        hold_inside_the_transaction()
    elif mode == "after":
        hold_after_the_commit()
    app = QApplication([sys.argv[0]])
    journal = Journal.open(path, actor=Actor.operator("alice"))
    settings = DeskSettings(QSettings(settings_file, QSettings.Format.IniFormat))
    settings.undo_seconds = 0  # the click is replayed without a hold (tests/conftest.py's desk)
    window = build_window(journal, runner=TaskRunner(), settings=settings)
    window.show()
    window.start()
    key = f"approval:{approval_id}"
    state = {"selected": False}

    def step() -> None:
        model = window.inbox.model
        if not model.has_loaded or model.row_of(key) < 0:
            QTimer.singleShot(20, step)
            return
        if not state["selected"]:
            window.inbox.set_current_row(model.row_of(key))
            state["selected"] = True
        detail = window.inbox.detail.current()
        if detail is None or detail.entity is None or detail.entity.id != approval_id:
            QTimer.singleShot(20, step)
            return
        window.registry.trigger("inbox.approve")
        if mode == "free":
            say("clicked")

    QTimer.singleShot(0, step)
    app.exec()


if __name__ == "__main__":
    main()
