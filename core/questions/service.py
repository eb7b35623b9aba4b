"""Human interactions: the agent asks, a person answers through a validated form."""

from __future__ import annotations

import contextlib
import time
from typing import Any

from sqlalchemy import select

from proctor.core import errors
from proctor.core.decisions.answers import answer_decision, dismissal_decision
from proctor.core.decisions.deciders import refuse_requester
from proctor.core.decisions.undo import Held, undo
from proctor.core.decisions.writer import record_decision, requester
from proctor.core.kernel.canonical import canonical_json, digest_of
from proctor.core.kernel.limits import check_text, hold_seconds
from proctor.core.kernel.origin import default_for as default_origin
from proctor.core.models import (
    ActorKind,
    ChangeKind,
    Origin,
    Question,
    QuestionKind,
    QuestionStatus,
)
from proctor.core.runs.facts import questions_of
from proctor.core.storage import schema as s
from proctor.core.storage import waiter
from proctor.core.storage.items import OPEN_QUESTION, status_after_closing, status_when_opening
from proctor.core.storage.rows import by_id, fetch_prepared, question_select
from proctor.core.storage.sql import filed_by_this_login, insert_rows, row_where, update_where
from proctor.core.storage.store import Store
from proctor.core.storage.tx import Tx

from .credentials import reference_problem

MAX_PROMPT = 100_000

# a question's answer or dismissal, as an undo takes it back
HELD = Held(
    kind="interaction",
    noun="question",
    table=s.questions,
    change=ChangeKind.QUESTION,
    decided=(QuestionStatus.RESOLVED.value, QuestionStatus.DISMISSED.value),
    reopened=QuestionStatus.PRESENTED.value,
    by="resolved_by",
    used="taken_at",
    used_for=None,
    cleared=("resolved_at", "resolved_by", "response", "hold_until"),
    what="answer",
    max_reason=MAX_PROMPT,
)


def option_values(options: list[Any]) -> list[Any]:
    return [o.get("value") if isinstance(o, dict) else o for o in options]


def default_schema(kind: QuestionKind, options: list[Any]) -> dict:
    """The response schema each interaction type gets when the agent gives none."""
    obj = {"type": "object", "additionalProperties": False}
    text = {"type": "string", "minLength": 1}
    note = {"type": "string"}
    if kind == QuestionKind.QUESTION:
        return {**obj, "properties": {"text": text}, "required": ["text"]}
    if kind == QuestionKind.CHOICE:
        return {
            **obj,
            "properties": {"choice": {"enum": option_values(options)}, "note": note},
            "required": ["choice"],
        }
    if kind == QuestionKind.CONFIRMATION:
        return {
            **obj,
            "properties": {"confirmed": {"type": "boolean"}, "note": note},
            "required": ["confirmed"],
        }
    if kind == QuestionKind.DIFF_REVIEW:
        return {
            **obj,
            "properties": {
                "verdict": {"enum": ["approve", "request_changes", "reject"]},
                "comment": note,
            },
            "required": ["verdict"],
        }
    if kind == QuestionKind.MERGE_CONFLICT:
        return {
            **obj,
            "properties": {"resolution": {"enum": ["ours", "theirs", "merged"]}, "merged": note},
            "required": ["resolution"],
        }
    if kind == QuestionKind.CREDENTIAL_BINDING:
        return {
            **obj,
            "properties": {"credential_ref": text, "note": note},
            "required": ["credential_ref"],
        }
    if kind == QuestionKind.MEMORY_CHANGE_REVIEW:
        return {
            **obj,
            "properties": {"verdict": {"enum": ["accept", "reject", "edit"]}, "content": note},
            "required": ["verdict"],
        }
    # a form: one text field per option, or free named text fields when none are given
    fields = [str(v) for v in option_values(options)]
    if fields:
        return {**obj, "properties": {f: note for f in fields}, "required": fields}
    return {"type": "object", "additionalProperties": note, "minProperties": 1}


def response_validator(schema: Any) -> Any:
    """The one check of an answer against its schema: the store's at submit time, and the
    desk's as the operator types (``proctor.gui.forms.validate``), so the desk refuses what
    the store and the CLI refuse. Raises jsonschema's SchemaError for a broken schema."""
    import jsonschema

    # ``format`` (date-time, date, time, uri, email, …) is checked, not only annotated:
    # date-time through rfc3339-validator and uri through rfc3986-validator (dependencies)
    return jsonschema.Draft202012Validator(
        schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )


def validate_response(schema: dict, response: Any) -> None:
    """Raise ValidationError naming the first bad field."""
    validator = response_validator(schema)
    problems = sorted(validator.iter_errors(response), key=lambda e: list(e.absolute_path))
    if problems:
        first = problems[0]
        path = "/".join(str(p) for p in first.absolute_path)
        field = path
        if first.validator in ("required", "additionalProperties"):
            name = _missing_field(first.message)  # the missing or the unexpected property
            if name:
                field = f"{path}/{name}" if path else name
        raise errors.ValidationError(
            f"{field or 'answer'}: {first.message}",
            field=str(field),
            all=[e.message for e in problems],
        )


def check_choice(options: list[Any], response: Any) -> None:
    """A choice's answer picks among its options, whatever schema the agent gave: the
    ``choice`` field (a value, or a list of values) must be made of option values."""
    if not options or not isinstance(response, dict) or "choice" not in response:
        return
    picked = response["choice"]
    allowed = option_values(options)
    for value in picked if isinstance(picked, list) else [picked]:
        if value not in allowed:
            raise errors.ValidationError(
                f"choice: {value!r} is not one of the options",
                field="choice",
                all=[f"{value!r} is not one of {allowed!r}"],
            )


def _missing_field(message: str) -> str:
    # jsonschema: "'name' is a required property"
    return message.split("'")[1] if message.count("'") >= 2 else ""


def check_credential(response: Any) -> None:
    """A credential question's answer carries a reference to the secret, never the secret
    (the desk and the CLI answer through here: one rule for both)."""
    if isinstance(response, dict) and "credential_ref" in response:
        problem = reference_problem(response["credential_ref"])
        if problem:
            raise errors.ValidationError(f"credential_ref: {problem}", field="credential_ref")


def check_schema(schema: Any) -> None:
    import jsonschema

    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise errors.ValidationError(
            f"invalid response_schema: {exc.message}", field="response_schema"
        ) from exc


def question_kind(kind: Any) -> QuestionKind:
    """The question kind, refused with a typed error when unknown (or ``approval``)."""
    if kind == "approval":
        raise errors.ValidationError(
            "an approval is requested with approvals.request, not asked as a question", field="kind"
        )
    try:
        return QuestionKind(kind)
    except ValueError:
        raise errors.ValidationError(f"unknown question kind {kind!r}", field="kind") from None


QUESTION_BY_ID = by_id(question_select(), s.questions.c.id)


def question_in(conn: Any, interaction_id: str) -> Question:
    return fetch_prepared(
        conn, Question, QUESTION_BY_ID, f"question {interaction_id}", key=interaction_id
    )


class Questions:
    def __init__(self, store: Store) -> None:
        self.j = store

    # ------------------------------------------------------------ agent side
    def ask(
        self,
        run_id: str,
        kind: QuestionKind | str,
        prompt: str,
        *,
        request: Any = None,
        response_schema: dict | None = None,
        options: list[Any] | None = None,
        expires_in: float | None = None,
        request_key: str | None = None,
        origin: Origin | dict | None = None,
    ) -> Question:
        """Ask a person. Idempotent by ``request_key``. An approval is requested with
        ``approvals.request``, never asked here (``ValidationError`` on ``kind``).
        ``origin``: as for ``approvals.request`` (in no digest)."""
        kind = question_kind(kind)
        options = list(options or [])
        check_text(prompt, "the prompt", "prompt", MAX_PROMPT)
        if kind == QuestionKind.CHOICE and not options:
            raise errors.ValidationError("a choice needs options", field="options")
        schema = response_schema if response_schema is not None else default_schema(kind, options)
        check_schema(schema)
        body = {
            "run_id": run_id,
            "kind": kind.value,
            "prompt": prompt,
            "request": request,
            "schema": schema,
            "options": options,
            "expires_in": expires_in,
        }
        canonical_json(body)
        origin_text = default_origin(self.j.actor.kind, origin)

        def op(tx: Tx) -> str:
            key = request_key or tx.new_id("req")
            row = row_where(tx.conn, s.questions, request_key=key)
            if row is not None:
                if row.request_digest != digest_of(body):
                    raise errors.IdempotencyConflict(
                        f"question {key!r} was asked before with other content"
                    )
                return row.id
            run = tx.open_run(run_id)
            iid = tx.new_id("int")
            insert_rows(
                tx.conn,
                s.questions,
                [
                    dict(
                        id=iid,
                        run_id=run_id,
                        attempt=run.current_attempt,
                        agent=requester(tx, run),
                        kind=kind.value,
                        prompt=prompt,
                        request=canonical_json(request),
                        response_schema=canonical_json(schema),
                        options=canonical_json(options),
                        status=QuestionStatus.REQUESTED.value,
                        expires_at=tx.now + expires_in if expires_in else None,
                        request_key=key,
                        request_digest=digest_of(body),
                        version=1,
                        created_at=tx.now,
                        origin=origin_text,
                    )
                ],
            )
            tx.changed(ChangeKind.QUESTION, iid, run_id)
            tx.append_event(
                run,
                "interaction.requested",
                {"interaction_id": iid, "kind": kind.value, "prompt": prompt[:500]},
                status=status_when_opening(run),
            )
            return iid

        return self.j.write_then(op, lambda tx, iid: question_in(tx.conn, iid))

    def wait(self, interaction_id: str, timeout: float, poll: float = 0.05) -> Question:
        """Block until the question is answered, dismissed or closed (or ``timeout``),
        applying a due expiry. For an agent an answer still within its hold (the operator
        may undo it) is not there yet: the wait goes on until the hold passes (``get``)."""
        deadline, stamped = time.monotonic() + timeout, None
        while True:
            stamped = waiter.stamp_due(self.j, s.questions, interaction_id, OPEN_QUESTION, stamped)
            item = self.get(interaction_id)
            if (
                item.status in (QuestionStatus.REQUESTED, QuestionStatus.PRESENTED)
                and item.expires_at is not None
                and not self.j.read_only
                and self.j.now() >= item.expires_at
            ):
                self.expire_due()
                item = self.get(interaction_id)
            if item.status not in OPEN_QUESTION or time.monotonic() >= deadline:
                return item
            time.sleep(poll)

    def withdraw(self, interaction_id: str, reason: str) -> Question:
        def op(tx: Tx) -> None:
            row = self._row(tx, interaction_id)
            if row.status not in OPEN_QUESTION:
                raise errors.InvalidTransition(f"question {interaction_id} is {row.status}")
            self._close(tx, row, QuestionStatus.CANCELLED, {})
            tx.audit(
                "interaction.withdrawn",
                "interaction",
                interaction_id,
                run_id=row.run_id,
                reason=reason,
                before={"status": row.status},
                after={"status": "cancelled"},
            )
            tx.run_event(
                row.run_id,
                "interaction.withdrawn",
                {"interaction_id": interaction_id, "reason": reason},
                status=status_after_closing(tx.conn, tx.run_row(row.run_id)),
            )

        return self.j.write_then(op, lambda tx, _: question_in(tx.conn, interaction_id))

    def expire_due(self) -> int:
        def op(tx: Tx) -> int:
            rows = tx.conn.execute(
                select(s.questions)
                .where(
                    s.questions.c.status.in_(OPEN_QUESTION),
                    s.questions.c.expires_at <= tx.now,
                    filed_by_this_login(tx.conn, tx.actor.kind == ActorKind.AGENT),
                )
                .limit(500)
            ).all()
            for row in rows:
                self._expire(tx, row)
            return len(rows)

        return self.j.write(op)

    def _expire(self, tx: Tx, row: Any) -> None:
        self._close(
            tx, row, QuestionStatus.EXPIRED, {"resolved_at": tx.now, "resolved_by": "system:expiry"}
        )
        tx.audit(
            "interaction.expired",
            "interaction",
            row.id,
            run_id=row.run_id,
            actor="system:expiry",
            before={"status": row.status},
            after={"status": "expired"},
        )
        tx.run_event(
            row.run_id,
            "interaction.expired",
            {"interaction_id": row.id},
            status=status_after_closing(tx.conn, tx.run_row(row.run_id)),
            actor="system:expiry",
        )

    # ------------------------------------------------------------ operator side
    def answer(
        self,
        interaction_id: str,
        response: Any,
        *,
        expected_version: int,
        reason: str | None = None,
        request_id: str | None = None,
        source: str = "desk",
        hold: float = 0.0,
    ) -> Question:
        """Answer, validated against the question's schema. One transaction. ``hold``
        (seconds, > 0): the answer may be undone (:meth:`undo`) for that long, and the
        asking agent does not see it before (``Question.as_agent_sees``)."""
        self.j.require_operator()
        hold = hold_seconds(hold)
        canonical_json(response)
        request = {
            "op": "interaction.answer",
            "id": interaction_id,
            "response": response,
            "expected_version": expected_version,
            "reason": reason,
            "source": source,
            **({"hold": hold} if hold else {}),
        }

        def op(tx: Tx) -> None:
            if tx.replayed(request_id, request):
                return
            row = self._decidable(tx, interaction_id, expected_version, "answer")
            if row is None:
                return
            validate_response(_loads(row.response_schema), response)
            if row.kind == QuestionKind.CREDENTIAL_BINDING.value:
                check_credential(response)
            if row.kind == QuestionKind.CHOICE.value:
                check_choice(_loads(row.options) or [], response)
            hold_until = tx.now + hold if hold else None
            self._close(
                tx,
                row,
                QuestionStatus.RESOLVED,
                {
                    "resolved_at": tx.now,
                    "resolved_by": tx.actor.label,
                    "response": canonical_json(response),
                    "hold_until": hold_until,
                },
            )
            record_decision(
                tx,
                "interaction",
                interaction_id,
                row.run_id,
                answer_decision(response, hold_until),
                source=source,
                reason=reason,
                request_id=request_id,
                request=request,
                audit=("interaction.answered", {"status": row.status}, {"status": "resolved"}),
                event=(
                    "interaction.answered",
                    {
                        "interaction_id": interaction_id,
                        "by": tx.actor.label,
                        "response_digest": digest_of(response),
                    },
                ),
                closes=True,
            )

        return self.j.write_then(op, lambda tx, _: question_in(tx.conn, interaction_id))

    def dismiss(
        self,
        interaction_id: str,
        reason: str,
        *,
        expected_version: int,
        request_id: str | None = None,
        source: str = "desk",
        hold: float = 0.0,
    ) -> Question:
        """Close the question without answering it (``dismissed``), with the operator's
        reason: a decision like an answer (signed, audited, one run event). The asking agent
        reads the question ``dismissed`` and the reason as ``Question.dismiss_reason``.
        ``hold``: as for :meth:`answer`."""
        self.j.require_operator()
        hold = hold_seconds(hold)
        reason = (reason or "").strip()
        if not reason:
            raise errors.ValidationError("a dismissal needs a reason", field="reason")
        check_text(reason, "the reason", "reason", MAX_PROMPT)
        decision = {"dismissed": True, "reason": reason}
        request = {
            "op": "interaction.dismiss",
            "id": interaction_id,
            "reason": reason,
            "expected_version": expected_version,
            "source": source,
            **({"hold": hold} if hold else {}),
        }

        def op(tx: Tx) -> None:
            if tx.replayed(request_id, request):
                return
            row = self._decidable(tx, interaction_id, expected_version, "dismiss")
            if row is None:
                return
            hold_until = tx.now + hold if hold else None
            self._close(
                tx,
                row,
                QuestionStatus.DISMISSED,
                {
                    "resolved_at": tx.now,
                    "resolved_by": tx.actor.label,
                    "response": canonical_json(decision),
                    "hold_until": hold_until,
                },
            )
            record_decision(
                tx,
                "interaction",
                interaction_id,
                row.run_id,
                dismissal_decision(decision, hold_until),
                source=source,
                reason=reason,
                request_id=request_id,
                request=request,
                audit=("interaction.dismissed", {"status": row.status}, {"status": "dismissed"}),
                event=(
                    "interaction.dismissed",
                    {
                        "interaction_id": interaction_id,
                        "by": tx.actor.label,
                        "reason": reason,
                        "response_digest": digest_of(decision),
                    },
                ),
                closes=True,
            )

        return self.j.write_then(op, lambda tx, _: question_in(tx.conn, interaction_id))

    def undo(
        self,
        interaction_id: str,
        *,
        expected_version: int,
        reason: str | None = None,
        request_id: str | None = None,
        source: str = "desk",
    ) -> Question:
        """Take back a person's answer or dismissal within its hold (``decisions/undo.py``):
        the question is open again (``presented``) and the run waits for a person again.
        ``NotUndoable`` after the hold, once the agent took the answer, or for one given
        without a hold (the store's trigger refuses the same)."""
        return undo(
            self.j,
            HELD,
            interaction_id,
            expected_version=expected_version,
            reason=reason,
            request_id=request_id,
            source=source,
            after=lambda tx, qid, _: question_in(tx.conn, qid),
        )

    def _take(self, interaction_id: str) -> float | None:
        """The asking agent takes its answer once the hold passed: ``taken_at``, once (the
        answer is never undone after it; ``trg_interactions_held``). Nothing else of the row
        changes: no version step, no change row. Best effort: a read-only or busy journal
        leaves it unset (the store's clock refuses a late undo anyway). Returns the time it
        was taken at (None: not now)."""
        q = s.questions.c

        def op(tx: Tx) -> float | None:
            done = tx.conn.execute(
                s.questions.update()
                .where(
                    q.id == interaction_id,
                    q.taken_at.is_(None),
                    q.hold_until.is_not(None),
                    q.hold_until <= tx.now,
                    q.status.in_((QuestionStatus.RESOLVED.value, QuestionStatus.DISMISSED.value)),
                )
                .where(filed_by_this_login(tx.conn, agent=True))
                .values(taken_at=tx.now)
            )
            return tx.now if done.rowcount == 1 else None

        if self.j.read_only:
            return None
        with contextlib.suppress(errors.StoreError):
            return self.j.write(op)
        return None

    def _decidable(self, tx: Tx, interaction_id: str, expected_version: int, verb: str) -> Any:
        """The open question's row an operator may ``verb`` (answer, dismiss) now, or None
        when it was found past its expiry (expired here; Expired raised after the commit)."""
        row = self._row(tx, interaction_id)
        if row.status == QuestionStatus.EXPIRED:
            raise errors.Expired(f"question {interaction_id} expired before the {verb}")
        if row.status == QuestionStatus.CANCELLED:
            raise errors.Withdrawn(
                f"question {interaction_id} was withdrawn by the agent", status=row.status
            )
        if row.status not in OPEN_QUESTION:
            raise errors.AlreadyDecided(
                f"question {interaction_id} is already {row.status}"
                + (f" by {row.resolved_by}" if row.resolved_by else ""),
                status=row.status,
                decided_by=row.resolved_by,
            )
        if row.expires_at is not None and tx.now >= row.expires_at:
            self._expire(tx, row)
            tx.raise_after_commit(
                errors.Expired(f"question {interaction_id} expired before the {verb}")
            )
            return None
        if row.version != expected_version:
            raise errors.StaleVersion(f"question {interaction_id} changed since you looked")
        refuse_requester(
            tx, (row.agent, tx.run_row(row.run_id).agent), verb=verb, what="this question"
        )
        return row

    def mark_presented(self, interaction_id: str) -> Question:
        """The desk showed an open question to an operator: ``requested → presented``, once.

        Idempotent: a question already presented (or closed, or past its expiry) is left
        as it is and nothing is written. The run gets an ``interaction.presented`` event
        (what the agent can see; the run's status does not change). No audit row: nothing
        was decided. The question's ``version`` is NOT bumped: being seen changes nothing
        an answer depends on, so an answer passing the version it loaded (by this operator
        or by another desk that loaded the question earlier) is not made stale by it."""
        self.j.require_operator()

        def op(tx: Tx) -> None:
            row = self._row(tx, interaction_id)
            if row.status != QuestionStatus.REQUESTED.value:
                return
            if row.expires_at is not None and tx.now >= row.expires_at:
                return  # expiry closes it; being seen now would be wrong
            done = update_where(
                tx.conn,
                s.questions,
                {"status": QuestionStatus.PRESENTED.value},
                id=row.id,
                status=QuestionStatus.REQUESTED.value,
            )
            if done != 1:
                return
            tx.changed(ChangeKind.QUESTION, row.id, row.run_id)
            tx.run_event(
                row.run_id,
                "interaction.presented",
                {"interaction_id": interaction_id, "by": tx.actor.label},
            )

        return self.j.write_then(op, lambda tx, _: question_in(tx.conn, interaction_id))

    # ------------------------------------------------------------ reads
    def seen(self, interaction_id: str) -> tuple[str, float] | None:
        """Who was first shown the question by the desk, and when (from its
        ``interaction.presented`` event; the run's events of that type, by index)."""
        e = s.events.c

        def read(conn: Any) -> tuple[str, float] | None:
            run_id = conn.execute(
                select(s.questions.c.run_id).where(s.questions.c.id == interaction_id)
            ).scalar()
            if run_id is None:
                return None
            rows = conn.execute(
                select(e.actor, e.created_at, e.payload)
                .where(e.run_id == run_id, e.type == "interaction.presented")
                .order_by(e.sequence)
            )
            for actor, at, payload in rows:
                if _loads(payload).get("interaction_id") == interaction_id:
                    return actor, at
            return None

        return self.j.read(read)

    def get(self, interaction_id: str) -> Question:
        """The question; for a trusting agent an answer must be a trusted operator's
        (DecisionUnverified otherwise). An agent reads it as it may act on it
        (``Question.as_agent_sees``: an answer within its hold is not there yet), and its
        first read of a held answer after the hold takes it (``taken_at``)."""
        if not self.j.verifying:
            item = self.j.read(lambda c: question_in(c, interaction_id))
        else:

            def read(conn: Any) -> Question:
                from proctor.core.decisions.checks import check_question

                found = question_in(conn, interaction_id)
                check_question(conn, self.j.trust, row_where(conn, s.questions, id=interaction_id))
                return found

            item = self.j.read(read)
        return self._as_agent_sees(item)

    def _as_agent_sees(self, item: Question) -> Question:
        """``item`` as this journal's actor may see it: an operator sees what is stored; an
        agent does not see a held answer, and takes one whose hold passed."""
        if self.j.actor.kind != ActorKind.AGENT or item.hold_until is None:
            return item
        now = self.j.now()
        if item.held(now):
            return item.as_agent_sees(now)
        if item.taken_at is None and item.status in (
            QuestionStatus.RESOLVED,
            QuestionStatus.DISMISSED,
        ):
            taken = self._take(item.id)
            if taken is not None:
                return item.model_copy(update={"taken_at": taken})
        return item

    def filed_under(self, request_key: str) -> Question | None:
        """The question asked with ``request_key``, if there is one (its answer is not
        trust-checked here: read it with ``get``)."""

        def read(c: Any) -> Question | None:
            row = row_where(c, s.questions, request_key=request_key)
            return None if row is None else question_in(c, row.id)

        found = self.j.read(read)
        return None if found is None else self._held_back(found)

    def for_run(self, run_id: str) -> list[Question]:
        """The run's questions (for an agent, a held answer not there yet, as ``get``)."""
        return [self._held_back(q) for q in self.j.read(lambda c: questions_of(c, run_id))]

    def _held_back(self, item: Question) -> Question:
        """For an agent: ``item`` without an answer still within its hold (no take: the
        answer is taken by ``get`` and ``wait``)."""
        if self.j.actor.kind != ActorKind.AGENT:
            return item
        return item.as_agent_sees(self.j.now())

    @staticmethod
    def _row(tx: Tx, interaction_id: str) -> Any:
        row = row_where(tx.conn, s.questions, id=interaction_id)
        if row is None:
            raise errors.NotFound(f"question {interaction_id} does not exist")
        return row

    @staticmethod
    def _close(tx: Tx, row: Any, status: QuestionStatus, values: dict) -> None:
        done = update_where(
            tx.conn,
            s.questions,
            dict(status=status.value, version=row.version + 1, **values),
            id=row.id,
            version=row.version,
        )
        if done != 1:
            raise errors.StaleVersion(f"question {row.id} changed meanwhile")
        tx.changed(ChangeKind.QUESTION, row.id, row.run_id)


def _loads(text: str) -> Any:
    import json

    return json.loads(text)
