"""Credential references: what an operator gives an agent that asked for a credential.

A reference names where a secret lives (``vault://team/stripe``, ``keyring://proctor/x``,
``op://Shared/GitHub/token``, ``env:GITHUB_TOKEN``); it is never the secret. The desk and
the CLI answer a credential question through ``Interactions.answer``, which refuses a
``credential_ref`` that is not a reference (one rule for both).
"""

from __future__ import annotations

import re

MAX_REFERENCE = 1_000
# scheme ":" rest (RFC 3986's shape), no white space or control characters anywhere
REFERENCE = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:[^\s\x00-\x1f\x7f]+")
USERINFO_SECRET = re.compile(r"^//[^/@]*:[^/@]*@")  # //user:password@host


def looks_like_secret(text: str) -> bool:
    """A long opaque token with no scheme or path: probably a secret typed as a reference."""
    if "://" in text or "/" in text or len(text) < 20:
        return False
    return (
        any(c.isdigit() for c in text)
        and any(c.isupper() for c in text)
        and any(c.islower() for c in text)
    )


def reference_problem(ref: object) -> str | None:
    """Why ``ref`` is not a credential reference (None when it is one)."""
    if not isinstance(ref, str) or not ref.strip():
        return "choose or type a credential reference"
    if len(ref) > MAX_REFERENCE:
        return f"a credential reference is at most {MAX_REFERENCE:,} characters"
    if looks_like_secret(ref):
        return (
            "this looks like a secret, not a reference; store it in a secret manager "
            "(or the OS keyring) and give its reference"
        )
    if not REFERENCE.fullmatch(ref):
        return (
            "a credential reference names where the secret lives, as scheme:path "
            "(e.g. vault://team/stripe), with no spaces"
        )
    rest = ref.split(":", 1)[1]
    if USERINFO_SECRET.match(rest):
        return "this reference carries a password; give a reference without it"
    last = re.split(r"[/:]", rest)[-1]
    if looks_like_secret(last) or looks_like_secret(rest):
        return (
            "this looks like a secret, not a reference; store it in a secret manager "
            "(or the OS keyring) and give its reference"
        )
    return None
