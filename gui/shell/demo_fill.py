"""``proctor demo`` opens its window first and fills the demo journal in behind it.

The builder is a child process (``python -m proctor.sim.demo PATH --fill``) so its Python
work never competes with the GUI thread; its ``progress DONE TOTAL`` lines drive a
progress bar in the status bar, and rows appear in the inbox live as the builder commits
them (the journal watcher sees them like any agent's writes). When it is done, ``filled``
fires (the demo then starts its simulated agents).
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

from PySide6.QtCore import QObject, QProcess, QTimer, Signal
from PySide6.QtWidgets import QApplication, QMainWindow, QProgressBar

log = logging.getLogger(__name__)
DONE_MESSAGE_MS = 8000


class DemoFill(QObject):
    """Fills ``path`` (an empty journal the window already shows) in a child process.

    Signals:
        filled(): the builder finished and every demo run is in the journal.
        failed(str): the builder exited with an error (its last stderr line).
    """

    filled = Signal()
    failed = Signal(str)

    def __init__(
        self,
        window: QMainWindow,
        path: Path,
        *,
        seed: int,
        start_time: float,
        operator: str | None = None,
    ) -> None:
        super().__init__(window)
        self.window = window
        self.bar = QProgressBar(window)
        self.bar.setRange(0, 1)
        self.bar.setValue(0)
        self.bar.setFormat("Filling the demo journal…")
        self.bar.setMinimumWidth(300)
        window.statusBar().addPermanentWidget(self.bar)
        self.process = QProcess(self)
        self.process.setProgram(sys.executable)
        self.process.setArguments(
            [
                "-m",
                "proctor.sim.demo",
                str(path),
                "--fill",
                "--seed",
                str(seed),
                "--start-time",
                repr(start_time),
                *(["--operator", operator] if operator else []),
            ]
        )
        self.process.readyReadStandardOutput.connect(self._on_output)
        self.process.finished.connect(self._on_finished)
        self._pending = ""
        app = QApplication.instance()  # the desk's: a window exists
        assert app is not None
        app.aboutToQuit.connect(self.stop)  # the desk closed early

    def start(self) -> None:
        self.process.start()

    def running(self) -> bool:
        return self.process.state() != QProcess.ProcessState.NotRunning

    def stop(self) -> None:
        """The window closed before the journal was full: end the builder."""
        if self.running():
            self.process.kill()
            self.process.waitForFinished(5000)

    def _on_output(self) -> None:
        self._pending += bytes(self.process.readAllStandardOutput().data()).decode(
            "utf-8", "replace"
        )
        *lines, self._pending = self._pending.split("\n")
        for line in lines:
            words = line.split()
            if len(words) == 3 and words[0] == "progress":
                total = int(words[2])
                self.bar.setFormat("Filling the demo journal: %v of %m runs")
                self.bar.setRange(0, total)
                self.bar.setValue(min(int(words[1]), total))

    def _on_finished(self, code: int, status: QProcess.ExitStatus) -> None:
        self.bar.setRange(0, 1)
        self.bar.setValue(1)
        if code == 0 and status == QProcess.ExitStatus.NormalExit:
            self.bar.setFormat("The demo journal is ready")
            QTimer.singleShot(DONE_MESSAGE_MS, self._remove_bar)
            self.filled.emit()
            return
        err = bytes(self.process.readAllStandardError().data()).decode("utf-8", "replace")
        last = next((ln for ln in reversed(err.splitlines()) if ln.strip()), "no details")
        log.error("demo builder failed (exit %s): %s", code, err)
        self.bar.setFormat("The demo journal could not be filled (see the log)")
        self.bar.setToolTip(last)
        self.failed.emit(last)

    def _remove_bar(self) -> None:
        self.window.statusBar().removeWidget(self.bar)
        self.bar.hide()
