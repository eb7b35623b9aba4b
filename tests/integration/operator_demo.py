"""The demo a scripted operator works on (operator_session.py): ``proctor demo`` in this
process, the tally of choices made, and what the journal says afterwards (which runs
failed, and whether a person's choice came before)."""

from __future__ import annotations

import contextlib
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from operator_input import wait_until


@dataclass
class Tally:
    choices: Counter[str] = field(default_factory=Counter)
    live: Counter[str] = field(default_factory=Counter)  # choices on a live agent's item
    skipped: Counter[str] = field(default_factory=Counter)
    refused: list[str] = field(default_factory=list)  # a choice the desk refused, and why
    stuck: list[str] = field(default_factory=list)  # a choice that could not be made
    stale: int = 0  # inbox rows picked that the journal no longer had waiting

    def made(self, kind: str) -> None:
        self.choices[kind] += 1


class Demo:
    """``proctor demo`` in this process: the journal, the desk window, the live agents."""

    def __init__(self, folder: Path, *, agents: int, rate: float, seed: int, operator: str):
        from PySide6.QtCore import QSettings

        from proctor.cmd_desk import demo_folder, demo_trust
        from proctor.core import Actor, Journal
        from proctor.gui.infra.settings import DeskSettings
        from proctor.gui.shell.app import DeskApp, make_app
        from proctor.sim.demo import recent_start

        self.app = make_app()
        self.path = demo_folder(folder) / "journal.db"
        self.operator = operator
        trust = demo_trust(self.path.parent, operator)
        Journal.open(self.path, actor=Actor.agent("demo-builder")).close()
        self.settings = DeskSettings(
            QSettings(str(self.path.parent / "desk.ini"), QSettings.Format.IniFormat)
        )
        self.settings.undo_seconds = 5  # the desk's default hold
        self.desk = DeskApp(self.app, self.settings, None, strict=False)
        self.agents: Any = None
        self.filled = False
        self.fill: Any = None

        def on_window(window: Any) -> None:
            from proctor.gui.shell.demo_fill import DemoFill

            self.fill = DemoFill(window, self.path, seed=seed, start_time=recent_start())
            self.fill.filled.connect(window.inbox.show_new)
            self.fill.filled.connect(self._start_agents)
            self.fill.start()

        def _start() -> None:
            from proctor.sim.agents import start_agents

            self.agents = start_agents(
                self.path, agents=agents, rate=rate, seed=seed, trust=trust["path"]
            )
            self.filled = True

        self._start_agents = _start
        self.desk.on_window = on_window
        self.desk.open(self.path, operator=operator)
        self.window = wait_until(lambda: self.desk.window, "the desk window", 120)
        self.window.resize(1400, 860)
        wait_until(lambda: self.window.inbox.model.has_loaded, "the inbox", 120)
        wait_until(lambda: self.filled, "the demo journal filled", 600)
        self.reader = Journal.open(
            self.path, actor=Actor.operator("session-reader"), read_only=True
        )

    def stop(self) -> None:
        if self.agents is not None:
            self.agents.stop()
        with contextlib.suppress(Exception):
            self.reader.close()
        self.window.close()
        self.desk.runner.shutdown(10_000)
        self.desk.shutdown()


# ---------------------------------------------------------------- the journal afterwards
def failures(reader: Any, since: float, retried: dict[str, float]) -> dict[str, list[str]]:
    """Every run that failed during the session, with its reason: "operator" when a
    person's choice on the run (an event an operator wrote: a decision, an answer, a
    resolution, a retry or cancel asked) came before the failure, else "other" (the demo's
    scripted faults never fail a run: a crash or a lapsed lease makes an ambiguous effect);
    and every retry asked that no agent started."""
    found: dict[str, list[str]] = {"operator": [], "other": [], "retry_not_honoured": []}
    for run in reader.runs.list(limit=1000).items:
        if run.updated_at < since:
            continue
        failed = [
            e
            for e in reader.runs.events(run.id, types=["run.failed"], limit=50)
            if e.created_at >= since
        ]
        for event in failed:
            why = str((event.payload or {}).get("error", run.error))
            earlier = reader.runs.events(run.id, limit=5000)
            chose = [
                e.type
                for e in earlier
                if e.sequence < event.sequence
                and e.actor.startswith("operator")
                and e.type != "interaction.presented"  # shown, not chosen
            ]
            line = f"{run.id} {run.agent} attempt {event.attempt}: {why}"
            cause = choice_behind(reader, why, since)
            if cause is None and chose:
                cause = f"after {', '.join(dict.fromkeys(chose))}"
            if cause is not None and not cause.startswith("not "):
                found["operator"].append(f"{line} ({cause})")
            else:
                found["other"].append(f"{line} ({cause or 'no choice of a person before it'})")
    for run_id, asked in retried.items():
        run = reader.runs.get(run_id)
        if run.retry_pending:
            found["retry_not_honoured"].append(
                f"{run_id} {run.agent}: retry asked {time.time() - asked:.0f} s ago, not started"
            )
    return found


def choice_behind(reader: Any, why: str, since: float) -> str | None:
    """Whose choice the failure names: an approval a person decided (or a rule a person
    made in this session) is an operator's choice; a rule of the demo journal's own
    history is not ("not ..."). None when the failure names no approval."""
    import re

    found = re.search(r"approval (apr_[0-9a-f]+)", why)
    if found is None:
        return None
    approval = reader.approvals.get(found.group(1))
    by = str(approval.decided_by or "")
    if by.startswith("rule:") and approval.rule_id:
        rule = reader.approvals.rule(approval.rule_id)
        if rule.created_at < since:
            return f"not a choice: a rule of the demo's history by {rule.created_by}"
        return f"a rule {rule.created_by} made in the session"
    return f"decided by {by}" if by else None
