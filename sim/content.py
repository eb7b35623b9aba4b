"""Believable agent content: projects, run titles, gated actions, questions, memory.

Everything here is a pure function of a ``random.Random``: the same seed gives the same
content. Some of it is deliberately hostile (HTML, very long lines, RTL and control
characters) so the desk and the CLI prove they show agent text literally.

The texts, actions and questions are in ``content_texts``, ``content_actions`` and
``content_questions`` (all their names import from here too); memory and model chatter here.
"""

from __future__ import annotations

import random
from typing import Any

from .content_actions import (
    ACTION_KINDS,
    KINDS_OF_CLASS,
    ActionSpec,
    make_action,
    make_action_of_class,
)
from .content_questions import (
    QUESTION_KINDS,
    REFUND_FORM,
    RELEASE_FORM,
    QuestionSpec,
    answer_for,
    make_question,
    sample_for_schema,
)
from .content_texts import (
    CUSTOMERS,
    EDITS,
    HOSTILE,
    MODELS,
    MONTHS,
    PROJECTS,
    SOURCES,
    TITLES,
    USERS,
    edited,
    long_line,
    maybe_hostile,
    pick_place,
    run_title,
    unified_diff,
)

# ---------------------------------------------------------------- memory

MEMORY_FACTS: dict[str, list[tuple[str, str, str]]] = {
    "project": [
        ("Deploy days", "Deploys happen on Tuesdays and Thursdays after 10:00 UTC.", "procedure"),
        ("Staging database", "The staging database is stg-db-3; stg-db-2 is read-only.", "fact"),
        ("Test command", "Run the tests with `make test`; CI uses `make ci`.", "procedure"),
        ("Code owners", "Priya owns billing; Chen owns the ingest pipeline.", "fact"),
        ("Refund limit", "Refunds above 500 EUR need a second approval.", "policy"),
    ],
    "space": [
        ("Release freeze", "No releases between Dec 20 and Jan 5.", "policy"),
        (
            "Feature flags",
            "New features ship behind flags named ff_<team>_<feature>.",
            "convention",
        ),
        ("Noisy alert", "The disk-usage alert on ingest-3 is a known false positive.", "warning"),
    ],
    "user": [
        ("Preferred tone", "Keep replies short and skip the pleasantries.", "preference"),
        ("Working hours", "Not available after 18:00 CET; page Bob instead.", "preference"),
        ("Review style", "Wants a summary of risks at the top of every review.", "preference"),
    ],
}


def memory_place(rng: random.Random, project: str, space: str) -> tuple[str, str]:
    scope = rng.choice(["project", "project", "space", "user"])
    key = {"project": project, "space": f"{project}/{space}", "user": rng.choice(USERS)}[scope]
    return scope, key


def memory_fact(rng: random.Random, scope: str) -> tuple[str, str, str]:
    title, content, kind = rng.choice(MEMORY_FACTS[scope])
    return title, maybe_hostile(rng, content, 0.08), kind


def memory_variant(rng: random.Random, content: str) -> str:
    """A conflicting version of ``content``, as another agent or a sync would write it."""
    variant = rng.choice(
        [
            content.replace("Tuesdays", "Wednesdays").replace("stg-db-3", "stg-db-4"),
            content.rstrip(".") + " (changed last week, see the runbook).",
            "Outdated: " + content,
            content.replace("10:00", "14:00").replace("500", "1000") + " Confirmed in standup.",
        ]
    )
    return variant if variant != content else content + " (as of this week)"


INCOMING_KINDS = ["fact", "decision", "constraint", "lesson", "todo"]
INCOMING_TRUSTS = ["user_confirmed", "agent_observed", "model_inferred"]


def memory_incoming_fields(rng: random.Random, entry: Any) -> dict[str, Any]:
    """What an incoming version says about the entry's other fields: mostly one or two of
    kind/priority/trust/sensitivity differ (as another host's copy would), sometimes none
    (an incoming version that carries content only)."""
    roll = rng.random()
    if roll < 0.25:
        return {}
    out: dict[str, Any] = {}
    if roll < 0.6:
        out["incoming_kind"] = rng.choice([k for k in INCOMING_KINDS if k != entry.kind])
    if roll >= 0.45:
        out["incoming_priority"] = entry.priority + rng.choice([1, 2, 3])
    if rng.random() < 0.4:
        out["incoming_trust"] = rng.choice(INCOMING_TRUSTS)
    if rng.random() < 0.15:
        out["incoming_sensitivity"] = "internal" if entry.sensitivity == "normal" else "normal"
    return out


# ---------------------------------------------------------------- model chatter

THOUGHTS = [
    "Reading the failing test output to find the first real error.",
    "The stack trace points at the rounding helper; checking its callers.",
    "Two code paths build invoices; only one uses Decimal.",
    "The webhook retries are exhausted after 3 attempts; looking at the backoff settings.",
    "I need a person to confirm before touching production data.",
    "Summarising what changed so the reviewer can skim it.",
]

READ_TOOLS = [
    ("fs.read", "path"),
    ("search.code", "query"),
    ("git.log", "ref"),
    ("http.get", "url"),
    ("db.query", "sql"),
]


def model_events(rng: random.Random, model: str, step: int) -> list[tuple[str, Any]]:
    prompt_tokens = rng.randint(800, 24_000)
    return [
        (
            "model.request",
            {
                "model": model,
                "step": step,
                "prompt_tokens": prompt_tokens,
                "messages": rng.randint(3, 40),
                "temperature": 0.2,
            },
        ),
        (
            "model.response",
            {
                "model": model,
                "step": step,
                "completion_tokens": rng.randint(40, 1800),
                "stop_reason": rng.choice(["tool_use", "tool_use", "end_turn"]),
                "text": maybe_hostile(rng, rng.choice(THOUGHTS), 0.05),
                "latency_ms": rng.randint(300, 9000),
            },
        ),
    ]


def read_request(rng: random.Random, project: str) -> tuple[str, dict]:
    tool, arg = rng.choice(READ_TOOLS)
    value = {
        "path": rng.choice(sorted(SOURCES)),
        "query": "def invoice_total",
        "ref": "origin/main~20..origin/main",
        "url": f"https://docs.example.com/{project}",
        "sql": "SELECT count(*) FROM invoices WHERE status = 'open'",
    }[arg]
    return tool, {arg: value}


__all__ = [
    "ACTION_KINDS",
    "CUSTOMERS",
    "EDITS",
    "HOSTILE",
    "INCOMING_KINDS",
    "INCOMING_TRUSTS",
    "KINDS_OF_CLASS",
    "MEMORY_FACTS",
    "MODELS",
    "MONTHS",
    "PROJECTS",
    "QUESTION_KINDS",
    "READ_TOOLS",
    "REFUND_FORM",
    "RELEASE_FORM",
    "SOURCES",
    "THOUGHTS",
    "TITLES",
    "USERS",
    "ActionSpec",
    "QuestionSpec",
    "answer_for",
    "edited",
    "long_line",
    "make_action",
    "make_action_of_class",
    "make_question",
    "maybe_hostile",
    "memory_fact",
    "memory_incoming_fields",
    "memory_place",
    "memory_variant",
    "model_events",
    "pick_place",
    "read_request",
    "run_title",
    "sample_for_schema",
    "unified_diff",
]
