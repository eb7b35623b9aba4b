"""What every operator command shares: exit codes, the journal it opens (config, login,
signer), turning expected failures into a sentence and an exit code, argparse types and the
common parsers, JSON output and id checks. The commands themselves are in ops_listing and
ops_decisions; cmd_ops registers them."""

from __future__ import annotations

import argparse
import getpass
import json
import os
import sys
import tomllib
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from proctor.core import Actor, Journal, errors
from proctor.core.approvals.confirm import risks
from proctor.core.kernel import resource
from proctor.core.kernel.safe_text import json_escaped

from . import ops_render as render
from .parsing import plain_parser

EXIT_OK, EXIT_REFUSED, EXIT_USAGE, EXIT_STORE = 0, 1, 2, 3

EPILOG = """\
exit status:
  0  done
  1  refused: unknown id, already decided, stale version, expired, invalid answer,
     an approval the desk would confirm not confirmed (answer y, or pass --yes),
     or `verify` found a problem
  2  usage error (bad arguments, malformed --json)
  3  the journal cannot be used: missing, locked by another process, read-only,
     damaged, or written by a newer Proctor

environment:
  PROCTOR_JOURNAL   journal path when --journal is not given
  PROCTOR_OPERATOR  operator name when --as is not given (default: your OS user)
  PROCTOR_CONFIG    config file (default ~/.config/proctor/config.toml) with the
                    keys `journal = "..."` and `operator = "..."`
  PROCTOR_STATE_DIR where the journals the desk opened are remembered; with no
                    journal named, the most recent one is used (said on stderr)
"""

RESOLUTIONS = {
    "keep-local": "accepted_local",
    "take-incoming": "accepted_incoming",
    "merge": "merged",
    "dismiss": "dismissed",
}


class UsageError(Exception):
    """Bad arguments: exit 2."""


class NotConfirmed(Exception):
    """An approval the desk would confirm was not confirmed (no --yes, or answered no):
    nothing was decided, exit 1."""

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.hint = hint


class Unusable(Exception):
    """The journal cannot be opened: exit 3."""

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.hint = hint


# ---------------------------------------------------------------- plumbing


def load_config() -> dict:
    path = os.environ.get("PROCTOR_CONFIG")
    if path is None:
        from platformdirs import user_config_dir

        path = os.path.join(user_config_dir("proctor"), "config.toml")
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        return {}
    except (OSError, tomllib.TOMLDecodeError) as err:
        raise UsageError(f"cannot read the config file {path}: {err}") from err


def operator_name(args: argparse.Namespace) -> str:
    name = (
        getattr(args, "operator", None)
        or server_login(args)
        or os.environ.get("PROCTOR_OPERATOR")
        or load_config().get("operator")
    )
    if name:
        return str(name)
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "operator"


def server_login(args: argparse.Namespace) -> str | None:
    """On a team journal the server records the login as the operator (docs/team.md): the
    URL's user is the name to decide as, unless --as says otherwise."""
    from urllib.parse import unquote, urlsplit

    try:
        where = journal_path(args)
    except UsageError:
        return None
    if not where.startswith(("postgresql://", "postgresql+psycopg://", "postgres://")):
        return None
    try:
        user = urlsplit(where).username
    except ValueError:
        return None
    return unquote(user) if user else None


def journal_path(args: argparse.Namespace, positional: str | None = None) -> str:
    path = (
        positional
        or getattr(args, "journal", None)
        or os.environ.get("PROCTOR_JOURNAL")
        or load_config().get("journal")
    )
    if not path:
        path = most_recent_journal(args)
    if not path:
        raise UsageError("which journal? Pass --journal PATH or set PROCTOR_JOURNAL")
    return str(path)


def most_recent_journal(args: argparse.Namespace) -> str | None:
    """As the desk does: with no journal named, the most recent one it opened (said once)."""
    from proctor.core.ops.recent import start_journal

    found = start_journal()
    if found is None:
        return None
    if getattr(args, "said_recent", None) != str(found):
        args.said_recent = str(found)
        print(
            f"proctor: using the most recent journal, {render.clean(found, one_line=True)} "
            "(pass --journal PATH or set PROCTOR_JOURNAL to choose another)",
            file=sys.stderr,
        )
    return str(found)


def open_journal(
    args: argparse.Namespace, *, write: bool, positional: str | None = None, warn_lost: bool = True
) -> Journal:
    path = journal_path(args, positional)
    name = operator_name(args)
    try:
        j = Journal.open(
            path,
            actor=Actor.operator(name),
            signer=operator_signer(name) if write else None,
            read_only=not write,
            create=False,
            on_old_schema="migrate"
            if getattr(args, "migrate", False)
            else "error"
            if write
            else "read_only",
            busy_timeout=args.timeout,
        )
    except errors.NotFound as err:
        if "://" in path:  # a server journal: its own words (no password), not a cwd path
            raise Unusable(
                err.message, err.hint or "Check the URL (--journal or PROCTOR_JOURNAL)."
            ) from err
        raise Unusable(
            f"no journal at {Path(path).expanduser().absolute()}",
            "Check the path (--journal or PROCTOR_JOURNAL).",
        ) from err
    except errors.SchemaTooOld as err:
        raise Unusable(
            err.message,
            "Pass --migrate to upgrade it (a backup is made "
            "first), or use a Proctor of its version.",
        ) from err
    if j.lost_tail is not None and warn_lost:  # verify reports it as its first problem
        print(
            f"proctor: warning: {render.clean(j.lost_tail.sentence, 2000, one_line=True, more='')}"
            f"; run `proctor verify`",
            file=sys.stderr,
        )
    return j


def operator_signer(name: str) -> Any:
    """The operator's signing key, made on first use (said once, on stderr)."""
    from proctor.core.decisions.keys import WEAKER_NOTE, KeyStore

    key, created = KeyStore().init(name)
    if created:
        print(
            f"proctor: made an operator key for {render.clean(name)}: {key.fingerprint}"
            f" (`proctor keys export` gives agents the trusted-operators file)",
            file=sys.stderr,
        )
        if key.weaker:
            print(f"  note: {WEAKER_NOTE}", file=sys.stderr)
    return key


def guarded(fn: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """Run a command and turn every expected failure into a message and an exit code."""

    def run(args: argparse.Namespace) -> int:
        try:
            return fn(args)
        except UsageError as err:
            return fail(args, str(err), "", EXIT_USAGE)
        except Unusable as err:
            return fail(args, str(err), err.hint, EXIT_STORE)
        except NotConfirmed as err:
            return fail(args, str(err), err.hint, EXIT_REFUSED)
        except errors.StoreError as err:
            return fail(args, err.message, err.hint, EXIT_STORE)
        except errors.ProctorError as err:
            return fail(args, err.message, err.hint, EXIT_REFUSED)
        except BrokenPipeError:
            sys.stderr.close()  # the reader went away (| head): not an error
            return EXIT_OK
        except KeyboardInterrupt:
            return fail(args, "interrupted", "", 130)
        except OSError as err:  # a file named on the command line, or the journal's own
            return fail(args, os_error(err), "", EXIT_STORE)
        except Exception as err:  # a bug: a sentence here, the traceback on demand
            if os.environ.get("PROCTOR_DEBUG"):
                raise
            return fail(
                args,
                f"unexpected error: {type(err).__name__}: {err}",
                "This is a bug in Proctor. Run again with PROCTOR_DEBUG=1 to see "
                "the traceback, and report it.",
                EXIT_REFUSED,
            )

    return run


def os_error(err: OSError, what: str = "") -> str:
    """An OSError as a sentence: what could not be done to which file, and why."""
    name = err.filename or what
    reason = err.strerror or str(err)
    if isinstance(err, FileNotFoundError) and name:
        folder = Path(name).expanduser().absolute().parent
        if not folder.exists():
            reason = f"the folder {folder} does not exist"
    return f"{name}: {reason}" if name else reason


@contextmanager
def output_file(path: str | None) -> Iterator[Any]:
    """The file ``-o PATH`` names, opened for writing (stdout without one); a path that
    cannot be written is a usage error in a sentence (a missing folder, a folder, no right)."""
    if not path:
        yield sys.stdout
        return
    target = Path(path).expanduser()
    if target.is_dir():
        raise UsageError(f"cannot write {target}: it is a folder; name a file inside it")
    try:
        out = open(target, "w", encoding="utf-8", newline="")  # noqa: SIM115
    except OSError as err:
        raise UsageError(f"cannot write {os_error(err, str(target))}") from err
    with out:
        yield out


def _whole(text: str, least: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < least:
        raise argparse.ArgumentTypeError(f"{value} is not {least} or more")
    return value


def natural(text: str) -> int:
    """An argparse type: a whole number of at least 0."""
    return _whole(text, 0)


def seconds(text: str) -> float:
    """An argparse type: a number of seconds, 0 or more."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text} is not a number of seconds (0 or more)")
    return value


def positive(text: str) -> int:
    """An argparse type: a whole number of at least 1."""
    return _whole(text, 1)


def fail(args: argparse.Namespace, message: str, hint: str, code: int) -> int:
    print(f"proctor {args.command}: error: {render.clean(message, one_line=True)}", file=sys.stderr)
    if hint:
        print(f"  hint: {render.clean(hint, one_line=True)}", file=sys.stderr)
    return code


def emit_json(obj: Any) -> None:
    """``obj`` as JSON on stdout; invisible characters (C1 controls, DEL, bidi marks …) are
    written as \\uXXXX escapes, so the text is safe on a terminal and parses to the same value."""
    text = json.dumps(obj, indent=2, ensure_ascii=False, default=str)
    sys.stdout.write(json_escaped(text) + "\n")


def dump(model: Any) -> Any:
    if isinstance(model, list):
        return [dump(m) for m in model]
    if isinstance(model, dict):
        return {k: dump(v) for k, v in model.items()}
    if hasattr(model, "as_dict"):  # the risk lens's Lens
        return model.as_dict()
    return model.model_dump(mode="json") if hasattr(model, "model_dump") else model


def request_id(args: argparse.Namespace) -> str:
    return args.request_id or f"cli-{uuid.uuid4().hex}"


def parse_json(text: str, what: str) -> Any:
    if text == "-":
        text = sys.stdin.read()
    elif text.startswith("@"):
        try:
            text = Path(text[1:]).read_text(encoding="utf-8")
        except OSError as err:
            raise UsageError(f"cannot read {what} from {text[1:]}: {err}") from err
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise UsageError(f"{what} is not valid JSON: {err}") from err


def kind_of(ident: str) -> str:
    prefix = ident.split("_", 1)[0] if "_" in ident else ""
    return {
        "apr": "approval",
        "int": "question",
        "rec": "conflict",
        "run": "run",
        "mem": "entry",
        "rule": "rule",
        "pol": "policy",
        "tc": "tool_call",
    }.get(prefix, "effect")


def require_kind(ident: str, wanted: str, command: str) -> None:
    found = kind_of(ident)
    if found != wanted:
        raise errors.NotFound(
            f"{ident} is not {'an' if wanted[0] in 'aeiou' else 'a'} {wanted} id",
            hint=f"`proctor {command}` takes {render.ID_HELP[wanted]}; "
            f"use `proctor show {render.last_word(ident)}` to see what it is.",
        )


# ---------------------------------------------------------------- parsers


def common_parser(*, journal: bool = True) -> argparse.ArgumentParser:
    p = plain_parser()
    if journal:
        p.add_argument(
            "--journal",
            metavar="PATH",
            help="the journal file (default: $PROCTOR_JOURNAL or the config)",
        )
    p.add_argument(
        "--timeout",
        type=seconds,
        default=5.0,
        metavar="S",
        help="how long to wait for a journal locked by another process (default 5)",
    )
    return p


def writer_parser() -> argparse.ArgumentParser:
    p = plain_parser()
    p.add_argument(
        "--as",
        dest="operator",
        metavar="NAME",
        help="operator name recorded on the decision (default: $PROCTOR_OPERATOR, "
        "the config, or your OS user)",
    )
    p.add_argument(
        "--expect-version",
        type=int,
        metavar="N",
        help="refuse unless the item is still at version N (default: as read now)",
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


def add(
    sub: Any,
    name: str,
    fn: Callable,
    help_: str,
    parents: list,
    description: str | None = None,
    aliases: list[str] | None = None,
) -> argparse.ArgumentParser:
    p = sub.add_parser(
        name,
        parents=parents,
        help=help_,
        description=description or help_,
        aliases=aliases or [],
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.set_defaults(func=guarded(fn))
    return p


def confirm_approval(args: argparse.Namespace, approval: Any, now: float) -> None:
    """What the desk confirms, the CLI asks for (the core's one rule, ``risks``): on a
    terminal it restates the action and asks, default no; in a script it needs ``--yes``.
    Raises ``NotConfirmed`` when nothing may be approved."""
    from proctor.core.lens import lens_of

    found = risks(approval, args.scope, now, detected=lens_of(approval).detected())
    if not found or args.yes:
        return
    if not (sys.stdin.isatty() and sys.stderr.isatty()):
        raise NotConfirmed(
            f"{approval.id} was not approved: it needs a confirmation ({' '.join(found)})",
            hint="Pass --yes to approve it from a script, or run the command in a terminal "
            "to be asked.",
        )
    print(restatement(approval, args.scope, args.reason, found), file=sys.stderr)
    sys.stderr.write("Approve it? [y/N] ")
    sys.stderr.flush()
    answer = sys.stdin.readline().strip().lower()
    if answer not in ("y", "yes"):
        raise NotConfirmed(f"{approval.id} was not approved: you answered no", hint="")


def restatement(approval: Any, scope: str, reason: str | None, found: list[str]) -> str:
    """The action as the desk's confirmation restates it: tool and resource, why it asks,
    the whole action and what will be recorded (agent text escaped)."""
    about = resource.words(approval.action)
    what = render.clean(f"{approval.action_name} {about}".strip(), 200, one_line=True)
    lines = [f"Approve {what} ({render.ident(approval.id)})?"]
    lines += [f"  • {render.clean(r, 500, one_line=True)}" for r in found]
    lines += ["  the whole action:", render.indent(render.pretty(approval.action, None), "    ")]
    lines.append(
        "  scope: once"
        if scope == "once"
        else f"  scope: always, for the rest of this {scope} (creates a standing rule)"
    )
    lines.append(
        f"  your reason: {render.clean(reason, 500, one_line=True) if reason else '(none)'}"
    )
    return "\n".join(lines)
