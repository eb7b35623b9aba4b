"""A scripted operator on ``proctor demo`` (issue 32, "Done when"): the demo started as
``proctor demo`` starts it (an empty journal, the desk on it, the demo's builder filling
it behind the window, then live simulated agents trusting the operator's key), and an
operator making every kind of choice the desk offers, over and over, through the real
widgets of the real window (mouse clicks and typing with QTest; every dialog answered by
clicking its buttons): approve, deny (reason typed, or asked), approve with a rule
("Always in this run/space/project"), edit then approve, answer questions of every kind,
dismiss a question, snooze, resolve memory conflicts each way, resolve ambiguous effects
both ways, undo within the hold, retry a failed run, request a cancel — from the Inbox and
from a run's "Waiting for you" tab.

After the session it reads the journal: every run a live simulated agent failed, and every
retry an operator asked that no agent started, with the reason, told apart from what the
demo's own scripted faults do (crashes and lapsed leases make ambiguous effects, never a
failed run).

    QT_QPA_PLATFORM=offscreen uv run python tests/integration/operator_session.py --minutes 5
    Xvfb :99 -screen 0 1400x900x24 & DISPLAY=:99 uv run python \
        tests/integration/operator_session.py --minutes 30 --shots /tmp/session

``test_operator_session.py`` runs a short one in the suite. The operator's hands (waiting,
clicking, typing, dialogs, forms) are in ``operator_input.py``, where it opens an item in
``operator_places.py``, the demo and the reading of its journal in ``operator_demo.py``.
"""

from __future__ import annotations

import argparse
import contextlib
import faulthandler
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from operator_demo import Demo, Tally, failures
from operator_input import (
    REASON,
    DialogAnswerer,
    TimedOut,
    button_named,
    click,
    fill_form,
    type_into,
    wait_until,
)
from operator_places import open_in_inbox, open_in_run, open_run

LIVE_PREFIX = "sim-agent"  # sim/agents.py's name_prefix: the live agents' names


class Operator:
    """Makes one choice after another on the demo's desk window."""

    KINDS = (
        "approve",
        "deny",
        "deny_asked",
        "approve_rule",
        "edit_approve",
        "answer",
        "dismiss",
        "snooze",
        "conflict",
        "effect_committed",
        "effect_failed",
        "undo",
        "retry_run",
        "cancel_run",
    )

    def __init__(self, demo: Demo, seed: int, shots: str | None = None) -> None:
        self.demo, self.window = demo, demo.window
        self.rng = random.Random(seed)
        self.tally = Tally()
        self.dialogs = DialogAnswerer()
        self.shots = shots
        self.shot_no = 0
        self.turn = 0
        self.where_turn = 0
        self.undo_done = False
        self.retried: dict[str, float] = {}
        self.conflict_turn = 0
        self.forced: Any = None
        self.acted_live = False
        self.last_total = 0
        self.log: Any = sys.stderr if os.environ.get("OPERATOR_SESSION_LOG") else None
        self.live_turns: Counter[str] = Counter()

    # ------------------------------------------------------------ places
    def inbox_items(self) -> list[Any]:
        return list(self.window.inbox.model.items())

    def waiting(self, item: Any) -> bool:
        """The journal has ``item`` waiting for a person now (the inbox may lag behind)."""
        from proctor.core.models import InboxFilter

        return bool(self.demo.reader.inbox.pick(InboxFilter(), [item.id]))

    def live(self, item: Any) -> bool:
        return str(item.agent).startswith(LIVE_PREFIX)

    def pick(self, kinds: set[str], test: Callable[[Any], bool] = lambda i: True) -> Any:
        """A waiting item of one of ``kinds``: a live agent's first, else any."""
        forced, self.forced = self.forced, None
        if forced is not None and forced.kind.value in kinds:
            if not self.waiting(forced):
                self.tally.stale += 1
                return None
            self.acted_live = True
            return forced
        items = [i for i in self.inbox_items() if i.kind.value in kinds and test(i)]
        live = [i for i in items if self.live(i)]
        pool = live or items
        chosen = self.rng.choice(pool) if pool else None
        if chosen is not None and not self.waiting(chosen):
            self.tally.stale += 1  # the inbox still lists what the journal has closed
            chosen = None
        self.acted_live = chosen is not None and self.live(chosen)
        return chosen

    def open_item(self, item: Any) -> tuple[Any, str]:
        """From the Inbox, or (every other time, when it has a run) the run's tab."""
        self.where_turn += 1
        if item.run_id and self.where_turn % 2 == 0:
            return open_in_run(self.window, self.demo.reader, item), "run"
        return open_in_inbox(self.window, item), "inbox"

    # ------------------------------------------------------------ choices
    # a live agent's waiting item is decided first, each way in turn (the demo's own
    # seeded items get every other kind of choice)
    LIVE_CHOICES = {  # noqa: RUF012 - a constant table
        "approval": (
            "approve",
            "edit_approve",
            "approve_rule",
            "deny",
            "undo",
            "deny_asked",
        ),
        "question": ("answer", "answer", "dismiss", "answer"),
        "effect": ("effect_failed", "effect_committed"),
        "conflict": ("conflict",),
    }

    def pause(self) -> None:
        """Between two choices the desk runs on (a person reads the screen): a moment, and
        longer when nothing could be chosen (new requests come in meanwhile)."""
        from PySide6.QtTest import QTest

        QTest.qWait(100 if self.tally.choices.total() > self.last_total else 1000)
        self.last_total = self.tally.choices.total()

    def let_in_arrivals(self) -> None:
        """New requests held behind "N new requests arrived" (so the list does not move under
        the pointer): the operator clicks its Show them."""
        inbox = self.window.inbox
        if inbox.model.held and self.window.current_page_id() == "inbox":
            show = button_named(inbox, "Show them")
            if show is not None and show.isEnabled():
                click(show)
            else:
                inbox.show_new()
        elif inbox.model.held:
            inbox.show_new()

    def one(self) -> None:
        self.let_in_arrivals()
        live = [i for i in self.inbox_items() if self.live(i)]
        self.forced = None
        if live and self.turn % 3 != 2:
            item = min(live, key=lambda i: i.created_at)
            choices = self.LIVE_CHOICES[item.kind.value]
            kind = choices[self.live_turns[item.kind.value] % len(choices)]
            self.live_turns[item.kind.value] += 1
            self.forced = item
        else:
            kind = self.KINDS[self.turn % len(self.KINDS)]
        self.turn += 1
        self.acted_live = False
        try:
            made = getattr(self, "do_" + kind)()
        except TimedOut as exc:
            self.tally.stuck.append(f"{kind}: timed out waiting for {exc}")
            made = None
        if self.log is not None:
            print(
                f"{time.strftime('%H:%M:%S')} {kind}: {made or 'skipped'}",
                file=self.log,
                flush=True,
            )
        if made:
            self.tally.made(made)
            if self.acted_live:
                self.tally.live[kind] += 1
        else:
            self.tally.skipped[kind] += 1

    def decided(self, widget: Any, what: str) -> None:
        """Wait until the store took the decision or refused it (then note why)."""
        from proctor.gui.decide.items import item_key

        key = item_key(widget.item)
        decider = widget.ctx.decider
        wait_until(lambda: not decider.busy(key), f"the decision on {key}")

    def approval(self) -> Any:
        return self.pick({"approval"})

    def press(
        self,
        kinds: set[str],
        button_of: Callable[[Any], Any],
        said: str,
        *,
        dialog: tuple[str, ...] = (),
        before: Callable[[Any], Any] | None = None,
        test: Callable[[Any], bool] = lambda i: True,
        settle: bool = True,
    ) -> str | None:
        """One choice by one button: a waiting item of ``kinds`` opened, its button
        (``button_of(widget)``; none, or disabled: no choice) pressed after ``before(widget)``
        (a reason typed, a read waited for), the dialog it opens answered by the first of
        ``dialog``'s buttons there is; then, with ``settle``, the decision waited for.
        ``said`` (``{kind}``: the item's kind) names the choice made."""
        item = self.pick(kinds, test)
        if item is None:
            return None
        widget, where = self.open_item(item)
        button = button_of(widget)
        if button is None or not button.isEnabled():
            return None
        if before is not None:
            before(widget)
        if dialog:
            self.dialogs.plan(*dialog)
        click(button)
        if settle:
            self.decided(widget, said)
        return f"{said.format(kind=item.kind.value)} ({where})"

    def do_approve(self) -> str | None:
        return self.press({"approval"}, lambda w: w.approve_button, "approve", dialog=("Approve",))

    def do_deny(self) -> str | None:
        return self.press(
            {"approval"},
            lambda w: w.deny_button,
            "deny, reason typed",
            before=lambda w: type_into(w.reason, REASON),
        )

    def do_deny_asked(self) -> str | None:
        return self.press(
            {"approval"}, lambda w: w.deny_button, "deny, reason asked", dialog=("Deny",)
        )

    def do_approve_rule(self) -> str | None:
        item = self.approval()
        if item is None:
            return None
        widget, where = self.open_item(item)
        radios = [b for b in widget.scopes.buttons() if b.isVisible() and b.isEnabled()]
        if len(radios) < 2 or not widget.approve_button.isEnabled():
            return None
        n = 1 + self.rng.randrange(len(radios) - 1)
        radio = radios[n]
        label = radio.text()
        click(radio)
        panel = widget.rule_panel
        wait_until(lambda: panel.isVisible() and panel.base is not None, "the rule draft")
        if self.rng.random() < 0.5 and panel.apply.isEnabled():
            click(panel.apply)
        self.dialogs.plan("Approve", "Make", "Create", "Add")
        click(widget.approve_button)
        self.decided(widget, "approve with a rule")
        return f"approve with rule {label!r} ({where})"

    def do_edit_approve(self) -> str | None:
        return self.press(
            {"approval"},
            lambda w: w.edit_button if w.edit_button.isVisible() else None,
            "edit, then approve",
            dialog=("Approve edited action", "Approve"),
            before=lambda w: wait_until(lambda: w.entity is not None, "the approval read"),
        )

    def question(self) -> Any:
        return self.pick({"question"})

    def do_answer(self) -> str | None:
        item = self.question()
        if item is None:
            return None
        widget, where = self.open_item(item)
        view = wait_until(lambda: widget.view, "the answer form")
        wait_until(lambda: widget.entity is not None, "the question read")
        kind = getattr(widget.entity, "kind", "?")
        kind = getattr(kind, "value", kind)
        for attempt in range(3):
            fill_form(view, self.rng, self.rng.randrange(4) + attempt)
            with contextlib.suppress(TimedOut):
                wait_until(lambda: widget.submit_button.isEnabled() and view.is_valid(), "Send", 3)
                break
        if not (widget.submit_button.isEnabled() and view.is_valid()):
            self.tally.stuck.append(
                f"answer {kind}: the form stayed invalid: {view.problem_texts()[:3]}"
            )
            return None
        self.dialogs.plan("Send", "Answer", "OK", "Yes")
        click(widget.submit_button)
        self.decided(widget, "answer")
        return f"answer {kind} ({where})"

    def do_dismiss(self) -> str | None:
        return self.press(
            {"question"},
            lambda w: button_named(w, "Dismiss"),
            "dismiss a question",
            dialog=("Dismiss",),
        )

    def do_snooze(self) -> str | None:
        # a demo item: a live agent's request snoozed for 15 minutes stops that agent for
        # as long (it waits, as it should), and the session would watch idle agents
        self.forced = None
        return self.press(
            {"approval", "question", "effect", "conflict"},
            lambda w: button_named(w, "Snooze"),
            "snooze {kind}",
            dialog=("Snooze",),
            test=lambda i: not self.live(i),
            settle=False,
        )

    def do_conflict(self) -> str | None:
        item = self.pick({"conflict"})
        if item is None:
            return None
        widget, where = self.open_item(item)
        review = widget.review
        wait_until(lambda: review.data is not None, "the conflict read")
        ways = ("keep", "take", "merge", "dismiss")
        way = ways[self.conflict_turn % len(ways)]
        self.conflict_turn += 1
        button = getattr(review, f"{way}_button")
        if not button.isVisible() or not button.isEnabled():
            return None
        type_into(review.reason, REASON)
        if way == "merge":
            click(button)
            wait_until(review.merging, "the merge editor")
            type_into(review.merge_editor, " (merged)")
            button = review.merge_button
        click(button)
        self.decided(widget, way)
        return f"conflict: {way} ({where})"

    def resolve(self, outcome: str) -> str | None:
        text = "Mark effect committed" if outcome == "committed" else "Mark effect failed"

        def button_of(widget: Any) -> Any:
            button = button_named(widget, text, text.replace("Mark effect ", "Mark "))
            return button if getattr(widget, "form", None) is not None else None

        return self.press(
            {"effect"},
            button_of,
            f"effect: {outcome}",
            dialog=("Mark failed, allow a retry", "Mark", "OK"),
            before=lambda w: type_into(w.form.reason, REASON),
        )

    def do_effect_committed(self) -> str | None:
        return self.resolve("committed")

    def do_effect_failed(self) -> str | None:
        return self.resolve("failed")

    def do_undo(self) -> str | None:
        """Approve in the Inbox, then Undo within the hold."""
        item = self.pick({"approval"})
        if item is None:
            return None
        widget = open_in_inbox(self.window, item)
        if not widget.approve_button.isEnabled():
            return None
        bar = self.window.inbox.undo_bar
        self.dialogs.plan("Approve")
        click(widget.approve_button)
        self.decided(widget, "approve")
        if not bar.active():
            return None
        wait_until(lambda: bar.button.isVisible() and bar.button.isEnabled(), "Undo")
        click(bar.button)
        wait_until(lambda: not bar.active(), "the undo")
        return "undo an approval within the hold"

    def do_retry_run(self) -> str | None:
        reader = self.demo.reader
        failed = [
            r for r in reader.runs.list(status=["failed"], limit=200).items if not r.retry_pending
        ]
        live = [r for r in failed if r.agent.startswith(LIVE_PREFIX)]
        pool = live or failed
        if not pool:
            return None
        run = self.rng.choice(pool)
        open_run(self.window, run.id)
        detail = self.window.runs.detail
        button = button_named(detail, "Retry run")
        if button is None or not button.isEnabled():
            return None
        self.dialogs.plan("Retry run")
        click(button)
        wait_until(lambda: reader.runs.get(run.id).retry_pending, "the retry asked")
        self.retried[run.id] = time.time()
        return "retry a failed run"

    def do_cancel_run(self) -> str | None:
        reader = self.demo.reader
        running = [
            r
            for r in reader.runs.list(status=["running", "waiting"], limit=200).items
            if r.agent.startswith(LIVE_PREFIX) and not r.cancel_requested
        ]
        if not running or self.rng.random() < 0.5:  # now and then: cancels end runs early
            return None
        run = self.rng.choice(running)
        open_run(self.window, run.id)
        button = button_named(self.window.runs.detail, "Request cancel")
        if button is None or not button.isEnabled():
            return None
        self.acted_live = True
        self.dialogs.plan("Request cancel")
        click(button)
        wait_until(
            lambda: (now := reader.runs.get(run.id)).cancel_requested or now.status.terminal,
            "the cancel asked",
        )
        return "request cancel of a run"

    def screenshot(self) -> None:
        if not self.shots:
            return
        self.shot_no += 1
        target = f"{self.shots}-{self.shot_no}.png"
        if os.environ.get("DISPLAY") and os.environ.get("QT_QPA_PLATFORM") != "offscreen":
            subprocess.run(["import", "-window", "root", target], check=False, timeout=30)
        else:
            self.window.grab().save(target)


def summary(demo: Demo, op: Operator, since: float) -> dict:
    reader = demo.reader
    live = [
        r
        for r in reader.runs.list(limit=2000).items
        if r.agent.startswith(LIVE_PREFIX) and r.created_at >= since
    ]
    by_status = Counter(r.status.value for r in live)
    return {
        "journal": str(demo.path),
        "choices": dict(sorted(op.tally.choices.items())),
        "on_live_items": dict(sorted(op.tally.live.items())),
        "skipped": dict(sorted(op.tally.skipped.items())),
        "stuck": op.tally.stuck,
        "stale_inbox_rows": op.tally.stale,
        "dialogs": dict(op.dialogs.answered),
        "dialogs_unanswered": op.dialogs.unanswered,
        "live_runs": dict(by_status),
        "agents": demo.agents.totals() if demo.agents is not None else {},
        "failures": failures(reader, since, op.retried),
    }


def run_session(
    minutes: float,
    *,
    folder: Path,
    agents: int = 3,
    rate: float = 1.0,
    seed: int = 0,
    shots: str | None = None,
    shot_every_s: float = 300.0,
    until: Callable[[Operator], bool] | None = None,
    drain_s: float = 60.0,
) -> dict:
    """Start the demo, make choices for ``minutes`` (or until ``until(operator)``), stop
    the agents after they finished what waits, and return the summary."""
    demo = Demo(folder, agents=agents, rate=rate, seed=seed, operator="dana")
    try:
        since = time.time() - 5
        op = Operator(demo, seed, shots)
        end = time.monotonic() + minutes * 60
        next_shot = time.monotonic() + 20
        while time.monotonic() < end and not (until is not None and until(op)):
            op.one()
            if time.monotonic() >= next_shot:
                op.screenshot()
                next_shot = time.monotonic() + shot_every_s
            op.pause()
        drain(demo, op, drain_s)
        op.screenshot()
        return summary(demo, op, since)
    finally:
        demo.stop()


def drain(demo: Demo, op: Operator, seconds: float) -> None:
    """Decide what the live agents still wait on (approve, answer, resolve committed,
    keep) so that their runs end and the retries asked start (an agent starts one when it
    begins its next run), for up to ``seconds``."""
    reader = demo.reader
    end = time.monotonic() + seconds

    def done() -> bool:
        retrying = any(reader.runs.get(r).retry_pending for r in op.retried)
        return not retrying and not any(op.live(i) for i in op.inbox_items())

    while time.monotonic() < end and not done():
        op.let_in_arrivals()
        for kind in ("approve", "answer", "effect_committed", "conflict"):
            with contextlib.suppress(TimedOut):
                getattr(op, "do_" + kind)()
        op.pause()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--agents", type=int, default=3)
    parser.add_argument("--rate", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--dir", type=Path, default=None)
    parser.add_argument("--shots", default=None, help="screenshot prefix, e.g. /tmp/session")
    parser.add_argument("--shot-every", type=float, default=300.0)
    parser.add_argument("--json", type=Path, default=None, help="write the summary here")
    parser.add_argument(
        "--read",
        nargs=2,
        metavar=("JOURNAL", "SINCE"),
        help="only read a session's journal (its failures since epoch SINCE) again",
    )
    args = parser.parse_args(argv)
    if args.read:
        from proctor.core import Journal

        with Journal.open(args.read[0], read_only=True) as reader:
            found = failures(reader, float(args.read[1]), {})
        print(json.dumps(found, indent=2))
        return 1 if found["operator"] else 0
    faulthandler.register(signal.SIGUSR1, all_threads=True)  # kill -USR1: where it is
    folder = args.dir or Path(tempfile.mkdtemp(prefix="operator-session-"))
    os.environ.setdefault("PROCTOR_KEYS_DIR", str(folder / "keys"))
    os.environ.setdefault("PROCTOR_KEY_STORE", "file")
    os.environ.setdefault("PROCTOR_STATE_DIR", str(folder / "state"))
    started = time.monotonic()
    result = run_session(
        args.minutes,
        folder=folder,
        agents=args.agents,
        rate=args.rate,
        seed=args.seed,
        shots=args.shots,
        shot_every_s=args.shot_every,
    )
    result["minutes"] = round((time.monotonic() - started) / 60, 1)
    text = json.dumps(result, indent=2, default=str)
    print(text, flush=True)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")
    bad = result["failures"]["operator"] + result["failures"]["retry_not_honoured"]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
