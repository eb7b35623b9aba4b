"""HTTP requests: method, host, whether it looks like production, body size."""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import urlsplit

from proctor.core.lens.facts import Fact, quoted

WRITES = {"POST", "PUT", "PATCH", "DELETE"}
LARGE_BODY = 64 * 1024  # characters
NOT_PRODUCTION = re.compile(
    r"(^|[.-])(localhost|local|dev|development|test|testing|staging|stage|stg|sandbox|qa|"
    r"uat|preview|example|invalid|internal)([.-]|\d*$)"
)
PRODUCTION = re.compile(r"(^|[.-])(prod|production|prd|live)([.-]|\d*$)")
PAYMENTS = re.compile(
    r"stripe|paypal|braintree|adyen|square|/charges|/payments?|/payouts|/refunds|/transfers"
)


def host_of(url: str) -> tuple[str, int, int]:
    """The host of ``url`` and its [start, end) in it ("" when there is none)."""
    try:
        host = urlsplit(url.strip()).hostname or ""
    except ValueError:
        return "", 0, 0
    at = url.lower().find(host) if host else -1
    return (host, at, at + len(host)) if at >= 0 else (host, 0, len(url))


def looks_production(host: str) -> bool:
    if not host or NOT_PRODUCTION.search(host):
        return False
    try:
        ip = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return "." in host
    return ip.is_global


def request_facts(
    field: str,
    url: str,
    url_span: tuple[int, int],
    method: str,
    method_span: tuple[int, int],
    body: int,
    method_field: str | None = None,
    body_field: str | None = None,
    body_span: tuple[int, int] = (0, 0),
) -> list[Fact]:
    """The facts of one request; spans are in ``field`` unless another field is named."""
    facts: list[Fact] = []
    host, hs, he = host_of(url)
    writes = method in WRITES
    if writes:
        where = f" to {quoted(host)}" if host else ""
        facts.append(
            Fact(
                "http.write_method",
                f"sends an HTTP {quoted(method)}{where}",
                method_field or field,
                *method_span,
                "external_side_effect",
            )
        )
    if looks_production(host) and (writes or PRODUCTION.search(host)):
        start = url_span[0] + hs
        facts.append(
            Fact(
                "http.production",
                f"{quoted(host)} looks like a production host",
                field,
                start,
                url_span[0] + he,
                "external_side_effect" if writes else None,
            )
        )
    if writes and PAYMENTS.search(url.lower()):
        facts.append(
            Fact(
                "http.payment",
                f"{quoted(method)} to a payments API ({quoted(host or url)})",
                field,
                *url_span,
                "financial",
            )
        )
    if body > LARGE_BODY:
        facts.append(
            Fact(
                "http.large_body",
                f"sends a large body ({body} characters)",
                body_field or field,
                *body_span,
                None,
            )
        )
    return facts
