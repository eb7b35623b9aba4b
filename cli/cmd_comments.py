"""Comment threads on inbox items from a shell (docs/policies.md, "Comments"): `proctor
comment ID TEXT` adds one to an approval, a question, a memory conflict or an effect (a
signed, audited decision, chained into the item's thread); `proctor comments ID` lists the
thread, which `proctor show ID` prints too. Comment text is printed escaped, never as
terminal code."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from proctor.core.comments.models import Comment

from . import ops_render as render
from .ops_base import (
    EXIT_OK,
    UsageError,
    add,
    common_parser,
    dump,
    emit_json,
    open_journal,
    request_id,
)
from .parsing import plain_parser

KINDS = ("approval", "question", "conflict", "effect")


def comment_lines(comments: list[Comment], limit: int | None) -> str:
    """Each comment: when, who, then its text (escaped, shortened unless ``limit`` is None)."""
    return "\n".join(
        f"#{c.seq}  {render.when(c.created_at)}  {render.ident(c.author)}\n"
        + render.indent(render.clean(c.text, limit), "    ")
        for c in comments
    )


def show_comments(comments: list[Comment], limit: int | None) -> None:
    """The thread under `proctor show ID` (nothing when it has none)."""
    if comments:
        render.section(f"comments ({len(comments)})", comment_lines(comments, limit))


def _text(args: argparse.Namespace) -> str:
    if args.text == "-":
        return sys.stdin.read()
    return args.text


def cmd_comment(args: argparse.Namespace) -> int:
    text = _text(args)
    if not text.strip():
        raise UsageError("a comment needs some text (or - to read it from standard input)")
    j = open_journal(args, write=True)
    try:
        posted = j.comments.add(
            args.id, text, kind=args.kind, request_id=request_id(args), source="cli"
        )
    finally:
        j.close()
    if args.json:
        emit_json(dump(posted))
    else:
        print(
            f"commented on {posted.item_kind} {render.ident(posted.item_id)} "
            f"(#{posted.seq}, {posted.id})"
        )
    return EXIT_OK


def cmd_comments(args: argparse.Namespace) -> int:
    j = open_journal(args, write=False)
    try:
        found = j.comments.thread(args.id, kind=args.kind)
    finally:
        j.close()
    if args.json:
        emit_json(dump(found))
    elif not found:
        print(f"no comments on {render.ident(args.id)}")
    else:
        print(comment_lines(found, None if args.full else render.LIMIT))
    return EXIT_OK


def _writer() -> argparse.ArgumentParser:
    p = plain_parser()
    p.add_argument(
        "--as",
        dest="operator",
        metavar="NAME",
        help="operator name recorded on the comment (default: $PROCTOR_OPERATOR, the config, "
        "or your OS user)",
    )
    p.add_argument(
        "--request-id",
        metavar="ID",
        help="idempotency key: retrying with the same id is safe (default: new)",
    )
    p.add_argument(
        "--migrate", action="store_true", help="upgrade an older journal first (a backup is made)"
    )
    return p


def kind_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--kind", choices=KINDS, help="the item's kind, when an effect key looks like an id"
    )


def register(sub: Any) -> None:
    common = common_parser()

    p = add(
        sub,
        "comment",
        cmd_comment,
        "comment on an approval, question, memory conflict or effect",
        [common, _writer()],
        "Add a comment to the item's thread: plain text, kept as evidence (a decision, "
        "signed when you have a key, with its audit row, chained to the item's previous "
        "comment). It decides nothing. TEXT - reads it from standard input.",
    )
    p.add_argument("id", help="apr_…, int_…, rec_… or an effect key")
    p.add_argument("text", help="the comment (- : read standard input)")
    kind_option(p)
    p.add_argument("--json", action="store_true")

    p = add(sub, "comments", cmd_comments, "list the comments on an item", [common])
    p.add_argument("id", help="apr_…, int_…, rec_… or an effect key")
    kind_option(p)
    p.add_argument("--json", action="store_true")
    p.add_argument("--full", action="store_true", help="do not shorten long comments")


__all__ = ["register", "show_comments"]
