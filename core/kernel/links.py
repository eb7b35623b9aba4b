"""Links to what the desk shows: ``proctor://item/ID`` (an inbox item: an approval ``apr_…``,
a question ``int_…``, a memory conflict ``rec_…`` or an effect's key) and
``proctor://run/ID``.

Ids are agent data (an effect key or a run id may be any string), so a link carries its id
percent-encoded: only letters, digits and ``-._~`` stand raw, everything else as ``%XX`` of
its UTF-8 bytes. Reading a link accepts exactly that form and nothing else: another scheme,
another target, a raw ``;``, space or ``/`` in the id, a query or fragment, a bad escape, an
id that is empty, too long, or holds control, bidi or other invisible characters.
"""

from __future__ import annotations

import re
from typing import NamedTuple
from urllib.parse import quote, unquote

from .safe_text import bounded, is_printable, visible

SCHEME = "proctor"
TARGETS = ("item", "run")
MAX_ID = 512  # characters of a decoded id
MAX_LINK = 3 * 4 * MAX_ID + 32  # every character of the longest id escaped, four bytes each
_RAW_ID = re.compile(r"(?:[A-Za-z0-9._~-]|%[0-9A-Fa-f]{2})+")


class BadLink(ValueError):
    """Text that is no Proctor link (its message says why, with the text shown safely)."""


class Link(NamedTuple):
    target: str  # "item" or "run"
    id: str

    def url(self) -> str:
        return link_url(self.target, self.id)


def is_link(text: str) -> bool:
    """Whether ``text`` is meant as a Proctor link (well formed or not): its scheme is ours."""
    return text[: len(SCHEME) + 1].lower() == f"{SCHEME}:"


def link_url(target: str, ident: str) -> str:
    """The link to ``ident`` (an inbox item's id or a run's id)."""
    if target not in TARGETS:
        raise BadLink(f"a link is to an item or a run, not to {shown(target)}")
    check_id(ident)
    return f"{SCHEME}://{target}/{quote(ident, safe='')}"


def linkable(ident: str) -> bool:
    """Whether a link can be made to ``ident`` (the desk's Copy link is off when not)."""
    try:
        check_id(ident)
    except BadLink:
        return False
    return True


def parse_link(text: str) -> Link:
    """The item or run ``text`` links to; ``BadLink`` saying why when it is no such link."""
    if len(text) > MAX_LINK:
        raise BadLink(f"the link is too long ({len(text)} characters)")
    prefix = f"{SCHEME}://"
    if not text[: len(prefix)].lower() == prefix:
        raise BadLink(f"{shown(text)} is not a proctor:// link")
    target, slash, raw = text[len(prefix) :].partition("/")
    if target not in TARGETS or not slash:
        raise BadLink(
            f"{shown(text)} links to nothing the desk shows: "
            "use proctor://item/ID or proctor://run/ID"
        )
    if not _RAW_ID.fullmatch(raw):
        raise BadLink(
            f"{shown(text)} is not a well-formed link: its id must be percent-encoded "
            "(only letters, digits and -._~ stand as they are)"
        )
    try:
        ident = unquote(raw, errors="strict")
    except UnicodeDecodeError:
        raise BadLink(f"{shown(text)} has an id that is not UTF-8") from None
    check_id(ident)
    return Link(target, ident)


def check_id(ident: str) -> None:
    if not ident:
        raise BadLink("a link needs an id")
    if len(ident) > MAX_ID:
        raise BadLink(f"the link's id is too long ({len(ident)} characters; at most {MAX_ID})")
    if not is_printable(ident):
        raise BadLink(
            f"the id {shown(ident)} holds control or invisible characters: no link is made to it"
        )


def shown(text: str) -> str:
    """``text`` for an error message: escapes for what would not show, and bounded."""
    return bounded(visible(text, breaks=True), 120)
