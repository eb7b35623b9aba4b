"""Believable questions of every kind (forms, choices, diff reviews, merge conflicts,
credentials, memory change reviews) and the answers an operator gives them. Part of
:mod:`.content`."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from proctor.core import QuestionKind

from .content_texts import CUSTOMERS, SOURCES, edited, maybe_hostile, unified_diff

# ---------------------------------------------------------------- questions


@dataclass(frozen=True)
class QuestionSpec:
    kind: QuestionKind
    prompt: str
    request: Any = None
    response_schema: dict | None = None
    options: list[Any] = field(default_factory=list)


QUESTION_KINDS = tuple(QuestionKind)

RELEASE_FORM = {
    "type": "object",
    "title": "Release details",
    "additionalProperties": False,
    "required": ["version", "release_date", "channels", "notify_customers"],
    "properties": {
        "version": {
            "type": "string",
            "title": "Version",
            "pattern": r"^\d+\.\d+\.\d+$",
            "examples": ["4.2.1"],
        },
        "release_date": {
            "type": "string",
            "title": "Release date",
            "format": "date",
            "examples": ["2026-02-03"],
        },
        "channels": {
            "type": "array",
            "title": "Channels",
            "minItems": 1,
            "uniqueItems": True,
            "items": {"enum": ["stable", "beta", "internal"]},
        },
        "notify_customers": {"type": "boolean", "title": "Email customers"},
        "rollout_percent": {
            "type": "integer",
            "title": "Initial rollout %",
            "minimum": 1,
            "maximum": 100,
            "default": 10,
        },
        "notes": {"type": "string", "title": "Release notes", "maxLength": 2000},
    },
}

REFUND_FORM = {
    "type": "object",
    "title": "Refund details",
    "additionalProperties": False,
    "required": ["amount", "currency", "reason_code"],
    "properties": {
        "amount": {"type": "number", "exclusiveMinimum": 0, "maximum": 5000, "examples": [49.9]},
        "currency": {"enum": ["EUR", "USD", "GBP"]},
        "reason_code": {"enum": ["duplicate", "fraudulent", "requested_by_customer"]},
        "internal_note": {"type": "string", "maxLength": 500},
    },
}


def make_question(
    kind: QuestionKind | str, rng: random.Random, project: str, memory_entry: Any = None
) -> QuestionSpec:
    kind = QuestionKind(kind)
    return _QUESTIONS[kind](rng, project, memory_entry)


def _question(rng: random.Random, project: str, _: Any) -> QuestionSpec:
    prompts = [
        "Which staging database should I use for the backfill? The runbook mentions both "
        "stg-db-2 and stg-db-3.",
        f"The {project} README says to run `make seed`, but that target no longer exists. "
        "What is the current way to seed test data?",
        "Who owns the on-call rotation for the ingest workers this week?",
        "The customer says they were charged twice but I only see one charge. Should I ask "
        "for a bank statement?",
    ]
    return QuestionSpec(
        QuestionKind.QUESTION,
        maybe_hostile(rng, rng.choice(prompts)),
        {"context": f"project {project}"},
    )


def _choice(rng: random.Random, project: str, _: Any) -> QuestionSpec:
    return QuestionSpec(
        QuestionKind.CHOICE,
        maybe_hostile(
            rng,
            "Three tests fail only on CI (test_invoice_rounding, "
            "test_webhook_retry, test_login_timeout). How should I proceed?",
        ),
        {"failing": ["test_invoice_rounding", "test_webhook_retry", "test_login_timeout"]},
        options=[
            {"value": "fix", "label": "Fix them before merging"},
            {"value": "quarantine", "label": "Quarantine them and open an issue"},
            {"value": "retry", "label": "Re-run CI once more"},
            {"value": "stop", "label": "Stop and wait for the owner"},
        ],
    )


def _form(rng: random.Random, project: str, _: Any) -> QuestionSpec:
    if rng.random() < 0.5:
        return QuestionSpec(
            QuestionKind.FORM,
            f"Fill in the release details for {project} before I tag it.",
            {"branch": "release/4.2", "commits": rng.randint(5, 80)},
            RELEASE_FORM,
        )
    name, _email = rng.choice(CUSTOMERS)
    return QuestionSpec(
        QuestionKind.FORM,
        maybe_hostile(rng, f"{name} asks for a partial refund. How much, and why?"),
        {"customer": name, "order_total": "129.00 EUR"},
        REFUND_FORM,
    )


def _confirmation(rng: random.Random, project: str, _: Any) -> QuestionSpec:
    count = rng.randint(12, 2400)
    return QuestionSpec(
        QuestionKind.CONFIRMATION,
        maybe_hostile(rng, f"Delete {count:,} stale preview environments older than 30 days?"),
        {"count": count, "sample": [f"preview-pr-{rng.randint(100, 999)}" for _ in range(3)]},
    )


def _diff_review(rng: random.Random, project: str, _: Any) -> QuestionSpec:
    path = rng.choice(sorted(SOURCES))
    before, after = edited(path)
    return QuestionSpec(
        QuestionKind.DIFF_REVIEW,
        maybe_hostile(rng, f"Please review my change to {path} before I commit it."),
        {
            "path": path,
            "diff": unified_diff(path, before, after),
            "tests": {"passed": rng.randint(40, 400), "failed": 0},
        },
    )


def _merge_conflict(rng: random.Random, project: str, _: Any) -> QuestionSpec:
    path = "src/billing/invoices.py"
    base = SOURCES[path]
    ours = edited(path, 1)[1]
    theirs = base.replace(
        "    return round(total, 2)\n", "    return round(total, 2)  # TODO: use Decimal\n"
    )
    return QuestionSpec(
        QuestionKind.MERGE_CONFLICT,
        f"Rebasing onto main conflicts in {path}. Which side should win?",
        {
            "path": path,
            "base": base,
            "ours": ours,
            "theirs": theirs,
            "ours_ref": "fix/invoice-rounding",
            "theirs_ref": "main",
        },
    )


def _credential(rng: random.Random, project: str, _: Any) -> QuestionSpec:
    service, scopes = rng.choice(
        [
            ("stripe", ["refunds:write", "charges:read"]),
            ("github", ["repo", "workflow"]),
            ("aws", ["s3:GetObject", "s3:PutObject"]),
            ("sendgrid", ["mail.send"]),
        ]
    )
    return QuestionSpec(
        QuestionKind.CREDENTIAL_BINDING,
        f"I need a {service} credential with {', '.join(scopes)} for {project}. "
        "Which stored credential should I use?",
        {
            "service": service,
            "scopes": scopes,
            "purpose": f"{project} automation",
            "suggested": [f"vault://{project}/{service}", f"vault://shared/{service}-readonly"],
        },
    )


def _memory_review(rng: random.Random, project: str, entry: Any) -> QuestionSpec:
    before = entry.content if entry is not None else "Deploys happen on Tuesdays."
    after = maybe_hostile(rng, before.rstrip(".") + ", except during the release freeze.")
    return QuestionSpec(
        QuestionKind.MEMORY_CHANGE_REVIEW,
        "I want to update what I remember about this project. OK?",
        {
            "entry_id": entry.id if entry is not None else None,
            "title": entry.title if entry is not None else "Deploy days",
            "scope": f"project:{project}",
            "before": before,
            "after": after,
        },
    )


_QUESTIONS = {
    QuestionKind.QUESTION: _question,
    QuestionKind.CHOICE: _choice,
    QuestionKind.FORM: _form,
    QuestionKind.CONFIRMATION: _confirmation,
    QuestionKind.DIFF_REVIEW: _diff_review,
    QuestionKind.MERGE_CONFLICT: _merge_conflict,
    QuestionKind.CREDENTIAL_BINDING: _credential,
    QuestionKind.MEMORY_CHANGE_REVIEW: _memory_review,
}


# ---------------------------------------------------------------- answers


def sample_for_schema(schema: dict) -> Any:
    """A valid value for the simple JSON Schemas agents use (examples, enums, bounds)."""
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][0]
    if schema.get("examples"):
        return schema["examples"][0]
    if "default" in schema:
        return schema["default"]
    kind = schema.get("type")
    if kind == "object":
        props = schema.get("properties", {})
        names = schema.get("required") or list(props)
        return {name: sample_for_schema(props.get(name, {})) for name in names}
    if kind == "array":
        items = schema.get("items", {})
        if "enum" in items:
            return list(items["enum"][: max(1, schema.get("minItems", 1))])
        return [sample_for_schema(items) for _ in range(schema.get("minItems", 0))]
    if kind == "boolean":
        return True
    if kind in ("integer", "number"):
        low = schema.get("minimum", schema.get("exclusiveMinimum", 0))
        return int(low) + 1 if kind == "integer" else float(low) + 1.0
    if schema.get("format") == "date":
        return "2026-02-03"
    return "ok"


def answer_for(
    kind: QuestionKind | str,
    schema: dict,
    options: list[Any],
    rng: random.Random,
    request: Any = None,
) -> Any:
    """A plausible operator answer for an interaction (valid for its schema)."""
    kind = QuestionKind(kind)
    if kind == QuestionKind.QUESTION:
        return {
            "text": rng.choice(
                [
                    "Use stg-db-3; stg-db-2 is being decommissioned.",
                    "Run `make fixtures` instead.",
                    "Ask Priya, she owns it.",
                    "Yes, ask for the statement.",
                ]
            )
        }
    if kind == QuestionKind.CHOICE:
        values = [o.get("value") if isinstance(o, dict) else o for o in options]
        return {"choice": rng.choice(values), "note": "see the runbook"}
    if kind == QuestionKind.CONFIRMATION:
        return {"confirmed": rng.random() < 0.7}
    if kind == QuestionKind.DIFF_REVIEW:
        return {
            "verdict": rng.choice(["approve", "approve", "request_changes"]),
            "comment": "Looks good; add a test for the zero case.",
        }
    if kind == QuestionKind.MERGE_CONFLICT:
        choice = rng.choice(["ours", "theirs", "merged"])
        answer = {"resolution": choice}
        if choice == "merged" and isinstance(request, dict):
            answer["merged"] = request.get("ours", "")
        return answer
    if kind == QuestionKind.CREDENTIAL_BINDING:
        suggested = (request or {}).get("suggested") if isinstance(request, dict) else None
        return {"credential_ref": suggested[0] if suggested else "vault://shared/default"}
    if kind == QuestionKind.MEMORY_CHANGE_REVIEW:
        return {"verdict": rng.choice(["accept", "accept", "reject"])}
    return sample_for_schema(schema)
