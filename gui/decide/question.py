"""Question detail: what the agent asked, and a real form to answer it.

The prompt and the request are shown as the agent wrote them (plain text, bounded; JSON
as a tree). The answer view comes from ``proctor.gui.forms.build_view`` (one per
interaction type). Submitting is one ``interactions.answer`` call on the task runner
(through the Decider); the waiting agent continues.

Drafts: each question's answer view is kept for the session (the last MAX_VIEWS; older
ones keep their answer as a draft value), so a half-filled form survives switching to
another item and back. When the agent withdraws the question or it expires while the
form is open, the form says so and keeps what was typed ("Copy what I typed").

Presented: once an open question has been on screen for PRESENT_AFTER_MS (shown, loaded,
still ``requested``, and still the one shown when the time is up), the desk records it
with ``interactions.mark_presented`` (once per question and widget; never on a read-only
journal; a refusal is logged, not shown). A question crossed with j/k, advanced to and
left, or shown as the top search hit for a moment is not "seen". A line of its own (kept
empty until then, so nothing below moves) then says who saw it first ("Seen by
operator:x at HH:MM").
"""

from __future__ import annotations

import json
import logging
import time
from collections import OrderedDict
from functools import partial
from typing import Any

from PySide6.QtCore import QTimer, Slot
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QHBoxLayout, QPushButton, QSizePolicy, QVBoxLayout, QWidget

from proctor.core import errors
from proctor.core.models import (
    InboxItem,
    InboxKind,
    Question,
    QuestionKind,
    QuestionStatus,
)

from ..forms import AnswerView, build_view
from ..forms.credentials import CredentialView, keyring_status
from ..forms.memory_change import MemoryChange, MemoryChangeMaterial, load_memory_change
from ..forms.schema import MISSING
from ..forms.views import ChoiceView
from ..infra.i18n import tr
from ..widgets import fmt
from ..widgets.bounded_text import BoundedText
from ..widgets.dialogs import ReasonDialog
from ..widgets.json_tree import JsonTree
from ..widgets.labels import plain_label, plain_tip, reserve_lines, section
from ..widgets.message_bar import NOTE_CLOSE_MS, Level
from .approval import action_button
from .detail import DetailContext, DetailWidget
from .items import item_key

OPEN = (QuestionStatus.REQUESTED, QuestionStatus.PRESENTED)
PRESENT_AFTER_MS = 1000  # a question on screen this long has been seen (the agent is told)
MAX_VIEWS = 24
log = logging.getLogger(__name__)


def option_text(option: Any) -> str:
    if isinstance(option, dict):
        return str(option.get("label") or option.get("value") or fmt.pretty_json(option))
    return str(option)


def kind_words(kind: Any) -> str:
    return str(getattr(kind, "value", kind)).replace("_", " ").capitalize()


def closed_text(q: Question) -> str:
    """What happened to a question that is no longer open."""
    when = fmt.clock(q.resolved_at) if q.resolved_at else ""
    if q.status == QuestionStatus.CANCELLED:
        return tr("The agent withdrew this question; no answer can be sent.")
    if q.status == QuestionStatus.EXPIRED:
        if when:
            return tr("This question expired at {when} before an answer was sent.").format(
                when=when
            )
        return tr("This question expired before an answer was sent.")
    who = q.resolved_by or tr("someone")
    if q.status == QuestionStatus.DISMISSED:
        return tr("Dismissed by {who} at {when} without an answer (“{reason}”).").format(
            who=who, when=when, reason=fmt.bounded(q.dismiss_reason or "", 200)
        )
    if when:
        return tr("Answered by {who} at {when}.").format(who=who, when=when)
    return tr("Answered by {who}.").format(who=who)


class QuestionDetail(DetailWidget):
    kind = InboxKind.QUESTION

    def __init__(self, ctx: DetailContext, parent: QWidget | None = None) -> None:
        self._views: OrderedDict[str, AnswerView] = OrderedDict()
        self._saved: dict[str, Any] = {}
        self.view: AnswerView | None = None
        self._sending: str | None = None  # item key of an answer in flight
        self._marked: set[str] = set()  # questions this widget asked to mark presented
        self._seen: tuple[str, float] | None = None  # who saw the shown question first
        super().__init__(ctx, parent)
        self.state = plain_label(parent=self)
        self.state.setAccessibleName(tr("Question state"))
        self.facts = plain_label(parent=self, name="Muted")
        self.facts.setAccessibleName(tr("Who asked, in which run"))
        self.seen = reserve_lines(plain_label(parent=self, name="Muted"))  # comes a second late
        self.seen.setAccessibleName(tr("Who saw it first"))
        self.closed = plain_label(parent=self)
        self.closed.setObjectName("ClosedNotice")
        self.closed.setStyleSheet("color: #b26a00; font-weight: 600;")
        self.closed.setAccessibleName(tr("Question closed"))
        self.closed.hide()
        self.prompt = BoundedText("Question", self)
        self.slot = QVBoxLayout()
        self.slot.setContentsMargins(0, 0, 0, 0)
        self.request = JsonTree("Request (as sent)", self)
        self.request.setMinimumHeight(120)
        self.body.addWidget(self.state)
        self.body.addWidget(self.facts)
        self.body.addWidget(self.seen)
        self.body.addWidget(self.closed)
        self.body.addWidget(section("Question", self))
        self.body.addWidget(self.prompt)
        self.body.addLayout(self.slot)
        self.body.addWidget(self.request)
        ctx.decider.done.connect(self._on_done)
        ctx.decider.refused.connect(self._on_refused)
        self._present_timer = QTimer(self)
        self._present_timer.setSingleShot(True)
        self._present_timer.timeout.connect(self._mark_presented)

    def footer(self) -> QVBoxLayout:
        self.submit_button = QPushButton(tr("Send answer"), self)
        self.submit_button.setObjectName("SubmitAnswer")
        self.submit_button.setAccessibleName(tr("Send the answer to the agent"))
        self.submit_button.setToolTip(tr("Send the answer (Ctrl+Enter)"))
        self.submit_button.setDefault(True)
        self.submit_button.setEnabled(False)
        self.submit_button.clicked.connect(self.submit)
        self.copy_button = QPushButton(tr("Copy what I typed"), self)
        self.copy_button.setAccessibleName(tr("Copy the answer typed so far as JSON"))
        self.copy_button.clicked.connect(self.copy_typed)
        self.hint = plain_label(parent=self, name="Muted", selectable=False)
        self.hint.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        reserve_lines(self.hint)  # "Fix first: …" coming and going moves no button
        row = QHBoxLayout()
        row.addWidget(self.submit_button)
        row.addWidget(self.copy_button)
        row.addWidget(action_button(self.ctx.registry, "inbox.snooze", self))
        self.dismiss_button = self.ctx.registry.button("inbox.dismiss", self)
        self.dismiss_button.setObjectName("DismissQuestion")
        row.addWidget(self.dismiss_button)
        row.addStretch(1)
        form = QVBoxLayout()
        form.setContentsMargins(8, 4, 8, 8)
        form.addLayout(row)
        form.addWidget(self.hint)  # its own line: four buttons leave it no room beside them
        return form

    # ------------------------------------------------------------ items and drafts
    def show_row(self, item: InboxItem) -> None:
        self.title.setText(tr("Question from {agent}").format(agent=fmt.bounded(item.agent, 80)))

    def enter_item(self, item: InboxItem) -> None:
        self.prompt.set_text("")
        self.request.clear()
        self.facts.setText("")
        self.seen.setText("")
        self.closed.hide()
        self._show_view(self._views.get(item.id))

    def leave_item(self) -> None:
        self._present_timer.stop()  # left before it was seen
        self._show_view(None)

    def forget_draft(self, item_id: str) -> None:
        """This desk's answer was accepted: drop the form (and anything sensitive in it)."""
        self._saved.pop(item_id, None)
        view = self._views.pop(item_id, None)
        if view is not None:
            view.submitted()
            if view is self.view:
                self._show_view(None)
            view.deleteLater()

    def _show_view(self, view: AnswerView | None) -> None:
        if self.view is view:
            return
        if self.view is not None:
            self.view.hide()
            self.slot.removeWidget(self.view)
        self.view = view
        if view is not None:
            self.slot.addWidget(view)
            view.show()
        self._update_state()

    def view_for(self, q: Question) -> AnswerView:
        view = self._views.get(q.id)
        if view is not None:
            self._views.move_to_end(q.id)
            return view
        view = build_view(q, self.ctx.settings)
        if isinstance(view, ChoiceView):
            registry = self.ctx.registry
            view.number_keys = lambda: registry.single_keys  # switched off with the letters
        view.setParent(self)
        view.hide()
        view.setProperty("blank", repr(view.value()))  # the form as nobody typed it
        if q.id in self._saved:
            view.restore(self._saved.pop(q.id))
        view.valid_changed.connect(self._on_valid)
        view.edited.connect(self._on_edited)
        view.submit_requested.connect(self.submit)
        self._views[q.id] = view
        self._evict()
        if isinstance(view, CredentialView) and CredentialView.keyring_known is None:
            self.ctx.runner.run(keyring_status, on_done=self._on_keyring, owner=self)
        return view

    def _evict(self) -> None:
        while len(self._views) > MAX_VIEWS:
            old_id = next(iter(self._views))
            old = self._views.pop(old_id)
            if old is self.view:
                self._views[old_id] = old
                continue
            self._saved[old_id] = old.draft()
            old.deleteLater()

    # ------------------------------------------------------------ entity
    def fetcher(self, item: InboxItem) -> Any:
        questions, memory, item_id = (self.ctx.journal.questions, self.ctx.journal.memory, item.id)

        def fetch() -> tuple[Question, tuple[str, float] | None, MemoryChange | None]:
            q = questions.get(item_id)
            seen = questions.seen(item_id) if q.status == QuestionStatus.PRESENTED else None
            change = (
                load_memory_change(memory, q)
                if q.kind == QuestionKind.MEMORY_CHANGE_REVIEW
                else None
            )
            return q, seen, change

        return fetch

    def show_entity(
        self, data: tuple[Question, tuple[str, float] | None, MemoryChange | None]
    ) -> None:
        q, self._seen, change = data
        self.entity = q
        self.title.setText(
            tr("{kind} from {agent}").format(
                kind=kind_words(q.kind), agent=fmt.bounded(q.agent, 80)
            )
        )
        self._show_facts(q)
        self.prompt.set_text(q.prompt)
        self.request.set_value(q.request)
        self._show_view(self.view_for(q))
        material = getattr(self.view, "material", None)
        if change is not None and isinstance(material, MemoryChangeMaterial):
            material.show_change(change)
        self._update_state()
        self.ctx.registry.refresh()  # Dismiss follows (can_dismiss)
        self._present_later()

    def _show_facts(self, q: Question) -> None:
        seen = ""
        if self._seen is not None:
            seen = tr("Seen by {who} at {when}").format(
                who=fmt.bounded(self._seen[0], 80), when=fmt.clock(self._seen[1])
            )
        self.seen.setText(seen)  # on a line of its own, kept: nothing below moves when it comes
        self.seen.setToolTip(plain_tip(seen))
        self.facts.setText(
            tr(
                "Asked by {agent} at {created_at} · run “{run_title}” (attempt {attempt}) · "
                "{project}/{space}"
            ).format(
                agent=fmt.bounded(q.agent, 80),
                created_at=fmt.clock(q.created_at),
                run_title=fmt.bounded(q.run_title, 120),
                attempt=q.attempt,
                project=fmt.bounded(q.project, 60),
                space=fmt.bounded(q.space, 60),
            )
        )

    # ------------------------------------------------------------ presented
    def showEvent(self, event: Any) -> None:
        super().showEvent(event)
        self._present_later()  # loaded while hidden (a run's other tab, another page)

    def hideEvent(self, event: Any) -> None:
        self._present_timer.stop()  # hidden before it was seen: it starts again when shown
        super().hideEvent(event)

    def _present_later(self) -> None:
        """Start the clock: marked presented if still on screen after PRESENT_AFTER_MS."""
        q = self.entity
        if (
            isinstance(q, Question)
            and q.status == QuestionStatus.REQUESTED
            and q.id not in self._marked
            and self.isVisible()
            and not self._present_timer.isActive()
        ):
            self._present_timer.start(PRESENT_AFTER_MS)

    @Slot()
    def _mark_presented(self) -> None:
        """Record, once, that an operator has had this open question on screen a while."""
        q = self.entity
        if (
            not isinstance(q, Question)
            or q.status != QuestionStatus.REQUESTED
            or self.ctx.read_only
            or q.id in self._marked
            or not self.isVisible()
            or self.past_expiry()
        ):
            return
        self._marked.add(q.id)
        questions, item_id = self.ctx.journal.questions, q.id
        self.ctx.runner.run(
            lambda: questions.mark_presented(item_id),
            on_error=self._on_present_refused,
            owner=self,
            write=True,
        )

    def _on_present_refused(self, exc: BaseException) -> None:
        # Best effort: the operator can answer all the same (read-only, busy, closed…).
        if not isinstance(exc, errors.StoreReadOnly):
            log.info("could not mark the question presented: %s", exc)

    def tick(self) -> None:
        self._update_state()

    def is_open(self) -> bool:
        q = self.entity
        return isinstance(q, Question) and q.status in OPEN

    def past_expiry(self) -> bool:
        q = self.entity
        return isinstance(q, Question) and q.expires_at is not None and time.time() >= q.expires_at

    def _update_state(self) -> None:
        q = self.entity
        if not isinstance(q, Question) or self.item is None or q.id != self.item.id:
            self.state.setText(tr("Loading…") if self.item is not None else "")
            self._update_submit()
            return
        if q.status not in OPEN:
            self.state.setText(closed_text(q))
            typed = self.view is not None and self._has_typed()
            self.closed.setText(
                closed_text(q)
                + (tr(" What you typed is kept below; copy it if you need it.") if typed else "")
            )
            self.closed.setVisible(
                q.resolved_by != self._me() or q.status != QuestionStatus.RESOLVED
            )
        elif self.past_expiry():
            self.state.setText(tr("Past its expiry: the agent will not wait for this answer."))
            self.closed.setText(
                tr(
                    "This question expired while the form was open. What you "
                    "typed is kept below; copy it if you need it."
                )
            )
            self.closed.show()
        else:
            self.closed.hide()
            expiry = (
                tr("no expiry")
                if q.expires_at is None
                else tr("expires in {countdown} ({clock})").format(
                    countdown=fmt.countdown(q.expires_at), clock=fmt.clock(q.expires_at)
                )
            )
            self.state.setText(
                tr("Waiting for {created_at} · {expiry}").format(
                    created_at=fmt.age(q.created_at), expiry=expiry
                )
            )
        self._update_submit()

    def _me(self) -> str:
        actor = getattr(self.ctx.journal, "actor", None)
        return str(getattr(actor, "label", "") or "")

    def _has_typed(self) -> bool:
        """The operator typed or chose something: the form is not as it was built (a text
        question's empty form is ``{"text": ""}``, which is not nothing)."""
        value = self.view.value() if self.view is not None else MISSING
        if value in (MISSING, None, {}, [], ""):
            return False
        return self.view is None or repr(value) != self.view.property("blank")

    def can_submit(self) -> bool:
        return (
            self.view is not None
            and self.view.is_valid()
            and self.is_open()
            and not self.past_expiry()
            and not self.ctx.read_only
            and self._sending is None
        )

    def _update_submit(self) -> None:
        self.submit_button.setEnabled(self.can_submit())
        if self.ctx.read_only:
            hint = "Opened read-only: answers cannot be sent."
        elif self._sending:
            hint = "Sending…"
        elif self.view is not None and self.is_open() and not self.view.is_valid():
            problems = self.view.problem_texts()
            hint = f"Fix first: {problems[0]}" if problems else ""
        else:
            hint = "Ctrl+Enter sends" if self.can_submit() else ""
        self.hint.setText(fmt.bounded(hint, 70))

    @Slot(bool)
    def _on_valid(self, _valid: bool) -> None:
        self._update_submit()

    @Slot()
    def _on_edited(self) -> None:
        self._update_submit()

    def focus_primary(self) -> None:
        if self.view is not None:
            self.view.focus_primary()
        else:
            super().focus_primary()

    # ------------------------------------------------------------ submitting
    @Slot()
    def submit(self) -> None:
        if not self.can_submit() or self.item is None or self.view is None:
            return
        settle = self.ctx.settle
        if settle is not None and settle.too_soon(item_key(self.item)):
            self.message.show_message(
                tr(
                    "Not sent: this question has only just come on screen. "
                    "Read it, then send again."
                ),
                Level.INFO,
                close_after_ms=NOTE_CLOSE_MS,
            )
            return
        q = self.entity
        assert isinstance(q, Question)
        item, value = self.item, self.view.value()
        self._sending = item_key(item)
        self.message.show_message(tr("Sending the answer…"), Level.INFO)
        self._update_submit()
        prepare = self.view.before_submit()
        if prepare is None:
            self.ctx.decider.answer(item, value, expected_version=q.version)
            return
        # the OS keyring (it may wait for an unlock prompt): not a journal write, so not on
        # the write lane, where it would hold up the clicks behind it
        self.ctx.runner.run(
            prepare,
            on_done=partial(self._prepared, item, value, q.version),
            on_error=self._on_prepare_failed,
            owner=self,
        )

    def can_dismiss(self) -> bool:
        return (
            self.is_open()
            and not self.past_expiry()
            and not self.ctx.read_only
            and self._sending is None
        )

    def dismiss(self) -> None:
        """Close the question without answering: ask why (the agent is told), then one
        ``questions.dismiss`` call through the Decider."""
        q, item = self.entity, self.item
        if not self.can_dismiss() or item is None or not isinstance(q, Question):
            return
        settle = self.ctx.settle
        if settle is not None and settle.too_soon(item_key(item)):
            self.message.show_message(
                tr("Not dismissed: this question has only just come on screen. Read it first."),
                Level.INFO,
                close_after_ms=NOTE_CLOSE_MS,
            )
            return
        reason = ReasonDialog.ask(
            self,
            tr("Dismiss question"),
            tr("Why close this question without an answer? The agent is told your reason."),
            ok=tr("Dismiss"),
            required=True,
        )
        if not reason or self.entity is not q:
            return
        self._sending = item_key(item)
        self.message.show_message(tr("Dismissing the question…"), Level.INFO)
        self._update_submit()
        self.ctx.decider.dismiss(item, reason, expected_version=q.version)

    def _prepared(self, item: InboxItem, value: Any, version: int, _result: Any) -> None:
        self.ctx.decider.answer(item, value, expected_version=version)

    def _on_prepare_failed(self, exc: BaseException) -> None:
        self._sending = None
        self.message.show_message(
            tr("{exc} Nothing was sent to the agent.").format(exc=exc), Level.ERROR
        )
        self._update_submit()

    def _on_done(self, key: str, _result: object) -> None:
        if key == self._sending:
            self._sending = None
            self._update_submit()
            self.ctx.registry.refresh()

    def _on_refused(self, key: str, exc: BaseException) -> None:
        if key != self._sending:
            return
        self._sending = None
        item_id = key.split(":", 1)[-1]
        view = self._views.get(item_id)
        if isinstance(exc, errors.ValidationError) and view is not None:
            view.show_server_problem(exc.field, str(exc))
        self._update_submit()
        self.ctx.registry.refresh()

    @Slot()
    def copy_typed(self) -> None:
        if self.view is None:
            return
        value = self.view.value()
        text = json.dumps(None if value is MISSING else value, indent=2, ensure_ascii=False)
        QGuiApplication.clipboard().setText(text)
        self.message.show_message(tr("Copied what you typed (as JSON)."), Level.INFO)

    def _on_keyring(self, status: tuple[bool, str]) -> None:
        for view in self._views.values():
            if isinstance(view, CredentialView):
                view.set_keyring(*status)
        self._update_submit()
