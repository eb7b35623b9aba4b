"""Believable gated actions (shell, file writes, HTTP, payments, email, migrations, data
reads), each with its safety class and reason. Part of :mod:`.content`."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from proctor.core import SafetyClass

from .content_texts import CUSTOMERS, SOURCES, edited, maybe_hostile, unified_diff

# ---------------------------------------------------------------- gated actions


@dataclass(frozen=True)
class ActionSpec:
    """One action an agent asks approval for."""

    kind: str
    action: dict
    safety_class: SafetyClass
    reason: str
    result: dict = field(default_factory=dict)
    alternative: str = "skip this step and note it in the run summary"


ACTION_KINDS = ("shell", "file_write", "http", "payment", "email", "migration", "data_read")


def make_action(kind: str, rng: random.Random, project: str) -> ActionSpec:
    return _MAKERS[kind](rng, project)


# Which action kinds can carry each safety class.
KINDS_OF_CLASS = {
    SafetyClass.SAFE_READ: ("data_read",),
    SafetyClass.IDEMPOTENT_WRITE: ("file_write",),
    SafetyClass.UNSAFE_WRITE: ("file_write", "shell", "migration"),
    SafetyClass.EXTERNAL_SIDE_EFFECT: ("http", "email", "shell"),
    SafetyClass.FINANCIAL: ("payment",),
    SafetyClass.DESTRUCTIVE: ("shell", "migration"),
}


def make_action_of_class(safety: SafetyClass, rng: random.Random, project: str) -> ActionSpec:
    """An action whose safety class is ``safety``."""
    for _ in range(100):
        spec = make_action(rng.choice(KINDS_OF_CLASS[safety]), rng, project)
        if spec.safety_class == safety:
            return spec
    raise RuntimeError(f"no action of class {safety}")  # pragma: no cover - 100 tries


def _shell(rng: random.Random, project: str) -> ActionSpec:
    options = [
        (
            "git push origin fix/{n}-flaky-tests",
            SafetyClass.EXTERNAL_SIDE_EFFECT,
            "The fix is committed locally; pushing opens it for review.",
            "leave the branch local and describe it in the summary",
        ),
        (
            "rm -rf build/ dist/ .pytest_cache/",
            SafetyClass.DESTRUCTIVE,
            "Stale build artefacts make the packaging step fail.",
            "build into a fresh temporary directory instead",
        ),
        (
            "kubectl rollout restart deployment/ingest-worker -n {project}",
            SafetyClass.DESTRUCTIVE,
            "Three workers are stuck on a poisoned message.",
            "drain the queue without restarting",
        ),
        (
            "pip install --upgrade 'sqlalchemy==2.0.{n2}'",
            SafetyClass.UNSAFE_WRITE,
            "The upgrade fixes the connection-pool warning seen in CI.",
            "pin the current version and open an issue",
        ),
        (
            "terraform apply -auto-approve -target=module.preview_envs",
            SafetyClass.DESTRUCTIVE,
            "Removes 14 preview environments nobody touched in 30 days.",
            "list the environments for a person to remove",
        ),
    ]
    command, safety, reason, alternative = rng.choice(options)
    command = command.format(n=rng.randint(100, 999), n2=rng.randint(30, 40), project=project)
    cwd = f"/srv/{project}"
    return ActionSpec(
        "shell",
        {
            "tool": "shell.exec",
            "args": {"command": command, "cwd": cwd, "timeout_s": rng.choice([60, 300, 900])},
        },
        safety,
        maybe_hostile(rng, reason),
        {"exit_code": 0, "stdout": f"$ {command}\ndone in {rng.randint(1, 90)}s"},
        alternative,
    )


def _file_write(rng: random.Random, project: str) -> ActionSpec:
    path = rng.choice(sorted(SOURCES))
    before, after = edited(path)
    diff = unified_diff(path, before, after)
    safety = rng.choice([SafetyClass.IDEMPOTENT_WRITE, SafetyClass.UNSAFE_WRITE])
    return ActionSpec(
        "file_write",
        {"tool": "fs.write", "args": {"path": path, "diff": diff, "bytes": len(after.encode())}},
        safety,
        maybe_hostile(rng, f"Apply the fix to {path} (tests pass locally)."),
        {"written": len(after.encode()), "path": path},
        "propose the patch as a review comment instead",
    )


def _http(rng: random.Random, project: str) -> ActionSpec:
    options = [
        (
            "POST",
            f"https://api.github.com/repos/acme/{project}/pulls",
            {"title": "Fix flaky invoice tests", "head": "fix/flaky-tests", "base": "main"},
            "Open the pull request for the fix.",
        ),
        (
            "DELETE",
            "https://api.cloudflare.com/client/v4/zones/7f3a/purge_cache",
            {"files": [f"https://docs.example.com/{p}" for p in ("index.html", "faq.html")]},
            "Purge the cached docs pages so readers see the new version.",
        ),
        (
            "POST",
            "https://hooks.slack.com/services/T000/B000/XXXX",
            {"text": f"Deploy of {project} finished: 0 errors, 3 warnings"},
            "Tell #releases that the deploy is done.",
        ),
        (
            "PATCH",
            "https://api.pagerduty.com/incidents/P1X2Y3Z",
            {"incident": {"type": "incident", "status": "resolved"}},
            "The alert cleared 20 minutes ago; resolve the incident.",
        ),
    ]
    method, url, body, reason = rng.choice(options)
    return ActionSpec(
        "http",
        {
            "tool": "http.request",
            "args": {
                "method": method,
                "url": url,
                "headers": {"Content-Type": "application/json"},
                "json": body,
            },
        },
        SafetyClass.EXTERNAL_SIDE_EFFECT,
        maybe_hostile(rng, reason),
        {"status": rng.choice([200, 201, 204]), "elapsed_ms": rng.randint(40, 900)},
        "write the request down for a person to send",
    )


def _payment(rng: random.Random, project: str) -> ActionSpec:
    name, email = rng.choice(CUSTOMERS)
    currency = rng.choice(["EUR", "USD", "GBP", "JPY", "BRL"])
    amount = rng.randint(500, 250_000) if currency == "JPY" else rng.randint(5, 2500)
    cents = "" if currency == "JPY" else f".{rng.randint(0, 99):02d}"
    tool = rng.choice(["payments.refund", "payments.refund", "payments.payout"])
    order = f"ord_{rng.getrandbits(40):010x}"
    reason = (
        f"{name} was charged twice for {order}; refund the duplicate."
        if tool == "payments.refund"
        else f"Monthly affiliate payout for {name} ({email})."
    )
    return ActionSpec(
        "payment",
        {
            "tool": tool,
            "args": {
                "amount": f"{amount}{cents}",
                "currency": currency,
                "account": f"cus_{rng.getrandbits(48):012x}",
                "order": order,
                "customer_email": email,
                "memo": maybe_hostile(rng, f"{tool.split('.')[1]} for {order}", 0.2),
            },
        },
        SafetyClass.FINANCIAL,
        maybe_hostile(rng, reason),
        {"payment_id": f"re_{rng.getrandbits(64):016x}", "status": "succeeded"},
        "ask the customer to contact billing support",
    )


def _email(rng: random.Random, project: str) -> ActionSpec:
    name, email = rng.choice(CUSTOMERS)
    subject = rng.choice(
        [
            "Your refund is on its way",
            "Update on your support ticket",
            "Action needed: confirm your billing address",
            "Scheduled maintenance on Saturday",
        ]
    )
    body = maybe_hostile(
        rng,
        (
            f"Hi {name.split()[0]},\n\nThanks for your patience. {subject}.\n"
            "If anything looks wrong, just reply to this email.\n\nBest,\nThe Acme team"
        ),
        0.25,
    )
    return ActionSpec(
        "email",
        {
            "tool": "email.send",
            "args": {
                "to": [email],
                "cc": rng.choice([[], ["support@example.com"]]),
                "subject": subject,
                "body": body,
            },
        },
        SafetyClass.EXTERNAL_SIDE_EFFECT,
        f"Reply to {name} about their ticket.",
        {"message_id": f"<{rng.getrandbits(64):016x}@mail.example.com>"},
        "save the reply as a draft for a person to send",
    )


def _migration(rng: random.Random, project: str) -> ActionSpec:
    options = [
        (
            "invoices",
            "ALTER TABLE invoices ADD COLUMN tax_region TEXT NULL;",
            SafetyClass.UNSAFE_WRITE,
        ),
        (
            "users",
            "ALTER TABLE users ADD COLUMN last_login_at TIMESTAMPTZ NULL;\n"
            "CREATE INDEX CONCURRENTLY ix_users_last_login ON users (last_login_at);",
            SafetyClass.UNSAFE_WRITE,
        ),
        (
            "sessions",
            "DELETE FROM sessions WHERE expires_at < now() - interval '90 days';",
            SafetyClass.DESTRUCTIVE,
        ),
        ("legacy_exports", "DROP TABLE legacy_exports;", SafetyClass.DESTRUCTIVE),
    ]
    table, sql, safety = rng.choice(options)
    revision = f"{rng.randint(40, 99):04d}_{table}"
    return ActionSpec(
        "migration",
        {
            "tool": "db.migrate",
            "args": {
                "database": f"{project}-{rng.choice(['staging', 'prod'])}",
                "table": table,
                "revision": revision,
                "sql": sql,
                "estimated_rows": rng.randint(1_000, 9_000_000),
            },
        },
        safety,
        maybe_hostile(rng, f"Migration {revision} is needed by the next release."),
        {"applied": revision, "duration_ms": rng.randint(50, 40_000)},
        "generate the migration file and leave it unapplied",
    )


def _data_read(rng: random.Random, project: str) -> ActionSpec:
    sql, why = rng.choice(
        [
            (
                "SELECT email, phone FROM customers WHERE last_order_at > now() - interval '7 days'",
                "Reading customer contact data (PII) for the outage notice needs approval.",
            ),
            (
                "SELECT * FROM payouts WHERE status = 'held' LIMIT 500",
                "Payout records are confidential; I need them to find the stuck transfer.",
            ),
        ]
    )
    return ActionSpec(
        "data_read",
        {
            "tool": "db.query",
            "args": {"database": f"{project}-prod-replica", "sql": sql, "row_limit": 500},
        },
        SafetyClass.SAFE_READ,
        maybe_hostile(rng, why),
        {"rows": rng.randint(0, 500)},
        "work from the anonymised export instead",
    )


_MAKERS = {
    "data_read": _data_read,
    "shell": _shell,
    "file_write": _file_write,
    "http": _http,
    "payment": _payment,
    "email": _email,
    "migration": _migration,
}
