"""Headless operator commands: the desk's services from a shell.

inbox, show, approve, deny, answer, resolve-effect, resolve-memory, cancel, runs,
timeline, verify, export. Each command is one short session on the journal; every
decision carries the version the operator saw and a fresh request id.
"""

from __future__ import annotations

import argparse
import getpass
import json
import os
import sys
import time
import tomllib
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from proctor.core import Actor, InboxFilter, InboxKind, Journal, RunStatus, errors, verify
from proctor.core.safe_text import json_escaped

from . import ops_render as render

EXIT_OK, EXIT_REFUSED, EXIT_USAGE, EXIT_STORE = 0, 1, 2, 3

EPILOG = """\
exit status:
  0  done
  1  refused: unknown id, already decided, stale version, expired, invalid answer,
     or `verify` found a problem
  2  usage error (bad arguments, malformed --json)
  3  the journal cannot be used: missing, locked by another process, read-only,
     damaged, or written by a newer Proctor

environment:
  PROCTOR_JOURNAL   journal path when --journal is not given
  PROCTOR_OPERATOR  operator name when --as is not given (default: your OS user)
  PROCTOR_CONFIG    config file (default ~/.config/proctor/config.toml) with the
                    keys `journal = "..."` and `operator = "..."`
"""

RESOLUTIONS = {"keep-local": "accepted_local", "take-incoming": "accepted_incoming",
               "merge": "merged", "dismiss": "dismissed"}


class UsageError(Exception):
    """Bad arguments: exit 2."""


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
    name = getattr(args, "operator", None) or server_login(args) \
        or os.environ.get("PROCTOR_OPERATOR") or load_config().get("operator")
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
    path = positional or getattr(args, "journal", None) or os.environ.get("PROCTOR_JOURNAL") \
        or load_config().get("journal")
    if not path:
        raise UsageError("which journal? Pass --journal PATH or set PROCTOR_JOURNAL")
    return str(path)


def open_journal(args: argparse.Namespace, *, write: bool,
                 positional: str | None = None, warn_lost: bool = True) -> Journal:
    path = journal_path(args, positional)
    name = operator_name(args)
    try:
        j = Journal.open(path, actor=Actor.operator(name),
                         signer=operator_signer(name) if write else None,
                         read_only=not write, create=False,
                         on_old_schema="migrate" if getattr(args, "migrate", False)
                         else "error" if write else "read_only",
                         busy_timeout=args.timeout)
    except errors.NotFound as err:
        if "://" in path:  # a server journal: its own words (no password), not a cwd path
            raise Unusable(err.message, err.hint or "Check the URL (--journal or "
                           "PROCTOR_JOURNAL).") from err
        raise Unusable(f"no journal at {Path(path).expanduser().absolute()}",
                       "Check the path (--journal or PROCTOR_JOURNAL).") from err
    except errors.SchemaTooOld as err:
        raise Unusable(err.message, "Pass --migrate to upgrade it (a backup is made "
                       "first), or use a Proctor of its version.") from err
    if j.lost_tail is not None and warn_lost:  # verify reports it as its first problem
        print(f"proctor: warning: {render.clean(j.lost_tail.sentence, 2000, one_line=True, more='')}"
              f"; run `proctor verify`", file=sys.stderr)
    return j


def operator_signer(name: str) -> Any:
    """The operator's signing key, made on first use (said once, on stderr)."""
    from proctor.core.keys import WEAKER_NOTE, KeyStore

    key, created = KeyStore().init(name)
    if created:
        print(f"proctor: made an operator key for {render.clean(name)}: {key.fingerprint}"
              f" (`proctor keys export` gives agents the trusted-operators file)",
              file=sys.stderr)
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
            return fail(args, f"unexpected error: {type(err).__name__}: {err}",
                        "This is a bug in Proctor. Run again with PROCTOR_DEBUG=1 to see "
                        "the traceback, and report it.", EXIT_REFUSED)

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


def natural(text: str) -> int:
    """An argparse type: a whole number of at least 0."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value} is not 0 or more")
    return value


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
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not 1 or more")
    return value


def fail(args: argparse.Namespace, message: str, hint: str, code: int) -> int:
    print(f"proctor {args.command}: error: {render.clean(message, one_line=True)}",
          file=sys.stderr)
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
    return {"apr": "approval", "int": "question", "rec": "memory", "run": "run",
            "mem": "entry", "rule": "rule", "tc": "tool_call"}.get(prefix, "effect")


def require_kind(ident: str, wanted: str, command: str) -> None:
    found = kind_of(ident)
    if found != wanted:
        raise errors.NotFound(
            f"{ident} is not {'an' if wanted[0] in 'aeiou' else 'a'} {wanted} id",
            hint=f"`proctor {command}` takes {render.ID_HELP[wanted]}; "
                 f"use `proctor show {render.last_word(ident)}` to see what it is.")


# ---------------------------------------------------------------- listing


def cmd_inbox(args: argparse.Namespace) -> int:
    j = open_journal(args, write=False)
    try:
        f = InboxFilter(kinds=frozenset(InboxKind(k) for k in args.kind or []),
                        agent=args.agent, project=args.project, safety_class=args.safety,
                        text=args.text, snoozed=args.snoozed,
                        newest_first=not args.oldest_first)
        page = j.inbox.list(f, cursor=args.cursor, limit=args.limit)
        deadline = time.monotonic() + (args.wait or 0)
        while not page.items and time.monotonic() < deadline:
            time.sleep(0.1)
            page = j.inbox.list(f, cursor=args.cursor, limit=args.limit)
        counts = j.inbox.counts()
        if args.json:
            items = dump(page.items)
            if args.details:
                for row, item in zip(items, page.items, strict=True):
                    row["detail"] = dump(detail_of(j, item))
            emit_json({"items": items, "next_cursor": page.next_cursor,
                       "counts": {k.value: v for k, v in counts.items()}})
        else:
            render.inbox(page, counts, j.now())
        return EXIT_OK
    finally:
        j.close()


def detail_of(j: Journal, item: Any) -> Any:
    """The full approval, question, conflict or effect behind an inbox row."""
    get = {InboxKind.APPROVAL: j.approvals.get, InboxKind.QUESTION: j.interactions.get,
           InboxKind.MEMORY: j.memory.reconciliation, InboxKind.EFFECT: j.effects.get}
    return get[item.kind](item.id)


def cmd_runs(args: argparse.Namespace) -> int:
    j = open_journal(args, write=False)
    try:
        page = j.runs.list(status=args.status, project=args.project, agent=args.agent,
                           text=args.text, has_open_items=args.open,
                           newest_first=not args.oldest_first, cursor=args.cursor,
                           limit=args.limit)
        if args.json:
            emit_json({"items": dump(page.items), "next_cursor": page.next_cursor})
        else:
            render.runs(page, j.now())
        return EXIT_OK
    finally:
        j.close()


def cmd_timeline(args: argparse.Namespace) -> int:
    j = open_journal(args, write=False)
    try:
        run = j.runs.get(args.run_id)
        events = j.runs.events(run.id, after=args.after, limit=args.limit, types=args.type)
        more = bool(events) and events[-1].sequence < run.last_sequence and not args.type
        next_after = events[-1].sequence if more else None
        if args.json:
            emit_json({"run": dump(run), "items": dump(events), "next_after": next_after})
        else:
            render.timeline(run, events, next_after, args.full)
        return EXIT_OK
    finally:
        j.close()


def cmd_export(args: argparse.Namespace) -> int:
    j = open_journal(args, write=False)
    try:
        run = j.runs.get(args.run_id)
        if args.output:
            with output_file(args.output) as out:
                count = write_events(j, run.id, out)
            print(f"wrote {count} events of {render.ident(run.id)} to "
                  f"{render.ident(args.output)}", file=sys.stderr)
        else:
            write_events(j, run.id, sys.stdout)
        return EXIT_OK
    finally:
        j.close()


def write_events(j: Journal, run_id: str, out: Any, page: int = 5000) -> int:
    """Every event of a run as one JSON object per line, in sequence order."""
    after, count = 0, 0
    while True:
        batch = j.runs.events(run_id, after=after, limit=page)
        for event in batch:
            out.write(json_escaped(json.dumps(event.model_dump(mode="json"),
                                              ensure_ascii=False, sort_keys=True)) + "\n")
        count += len(batch)
        if len(batch) < page:
            return count
        after = batch[-1].sequence


SIGNATURE_PROBLEMS = ("decision unsigned", "decision forged", "decision does not match its item",
                      "rule not signed by a trusted operator")


def signature_line(report: Any) -> str:
    counts = report.signatures or {}
    if not report.trusted:
        return (f"{counts.get('signed', 0)} carry a signature, {counts.get('unsigned', 0)} "
                f"unsigned, {counts.get('automatic', 0)} automatic (not checked: pass "
                "--trust FILE to check them against the operators you trust)")
    return (f"{counts.get('signed', 0)} signed, {counts.get('unsigned', 0)} unsigned, "
            f"{counts.get('invalid', 0)} invalid, {counts.get('automatic', 0)} automatic, "
            "checked against the trust file")


def cmd_verify(args: argparse.Namespace) -> int:
    trust = None
    if args.trust:
        from proctor.core.trust import Trust

        trust = Trust.load(args.trust)
        if trust.problem:
            print(f"proctor verify: warning: {render.clean(trust.problem)}; nobody is trusted",
                  file=sys.stderr)
    j = open_journal(args, write=False, positional=args.journal_path, warn_lost=False)
    try:
        if args.run:
            j.runs.get(args.run)  # an unknown run is refused, not "ok: 0 runs"
        report = verify(j, quick=args.quick, run_id=args.run, trust=trust)
    finally:
        j.close()
    signed = [p for p in report.problems if p.what in SIGNATURE_PROBLEMS]
    if args.json:
        emit_json(dump(report))
    elif report.ok:
        rows = ", ".join(f"{n} {table.replace('_', ' ')}"
                         for table, n in report.checked_rows.items())
        print(f"ok: {report.checked_runs} runs, {report.checked_events} events and "
              f"{report.checked_audit} audit rows verified" + (f" ({rows})" if rows else "")
              + "; triggers present")
        if report.signatures is not None:
            print(f"decisions: {signature_line(report)}")
    else:
        first = report.problems[0]
        print(f"FAILED: {render.clean(first.what, one_line=True)} at "
              f"{render.clean(first.where, one_line=True)}: "
              f"{render.clean(first.detail, 2000, one_line=True, more='')}")
        if signed:
            print(f"first unsigned or forged decision: "
                  f"{render.clean(signed[0].where, one_line=True)}: "
                  f"{render.clean(signed[0].detail, 2000, one_line=True, more='')}")
        if report.signatures is not None:
            print(f"decisions: {signature_line(report)}")
        if len(report.problems) > 1:
            print(f"  ({len(report.problems) - 1} more problems; --json lists them all)")
    return EXIT_OK if report.ok else EXIT_REFUSED


# ---------------------------------------------------------------- show


def cmd_show(args: argparse.Namespace) -> int:
    j = open_journal(args, write=False)
    try:
        kind, data = gather(j, args.id)
        if args.json:
            emit_json({"kind": kind, **{k: dump(v) for k, v in data.items()}})
        else:
            render.show(kind, data, full=args.full, now=j.now())
        return EXIT_OK
    finally:
        j.close()


def gather(j: Journal, ident: str) -> tuple[str, dict]:
    """Everything `show` prints about one id, by its prefix (decisions with their
    signature states)."""
    kind, data = _gather(j, ident)
    if "decisions" in data:
        data["signatures"] = j.signatures.states([d.id for d in data["decisions"]])
    return kind, data


def _gather(j: Journal, ident: str) -> tuple[str, dict]:
    kind = kind_of(ident)
    if kind == "approval":
        return kind, {"item": j.approvals.get(ident), "decisions": j.approvals.decisions(ident)}
    if kind == "question":
        return kind, {"item": j.interactions.get(ident),
                      "decisions": j.approvals.decisions(ident)}
    if kind == "memory":
        item = j.memory.reconciliation(ident)
        return kind, {"item": item, "entry": j.memory.get(item.entry_id),
                      "decisions": j.approvals.decisions(ident)}
    if kind == "run":
        run = j.runs.get(ident)
        return kind, {"item": run, "attempts": j.runs.attempts(ident),
                      "approvals": j.approvals.for_run(ident),
                      "questions": j.interactions.for_run(ident),
                      "effects": j.effects.list(run_id=ident, limit=100).items,
                      "events": j.runs.events(ident, descending=True, limit=10),
                      "resume_blockers": [] if run.status.terminal else [
                          {"kind": k, "id": i} for k, i in j.runs.resume_blockers(ident)]}
    if kind == "entry":
        return kind, {"item": j.memory.get(ident), "history": j.memory.history(ident)}
    if kind == "rule":
        return kind, {"item": j.approvals.rule(ident)}
    if kind == "tool_call":
        return kind, {"item": j.runs.tool_call(ident)}
    try:
        effect = j.effects.get(ident)
    except errors.NotFound:
        raise errors.NotFound(f"nothing has the id {ident!r}",
                              hint="Ids start with apr_, int_, rec_, run_, mem_, rule_ or tc_; "
                                   "anything else is taken as an effect key.") from None
    return "effect", {"item": effect, "receipts": j.effects.receipts(ident),
                      "decisions": j.approvals.decisions(ident)}


# ---------------------------------------------------------------- decisions


def cmd_decide(args: argparse.Namespace) -> int:
    approve = args.command == "approve"
    require_kind(args.id, "approval", args.command)
    j = open_journal(args, write=True)
    try:
        current = j.approvals.get(args.id)
        done = j.approvals.decide(
            args.id, approve, expected_version=args.expect_version or current.version,
            reason=args.reason, scope=args.scope if approve else "once",
            request_id=request_id(args), source="cli")
    finally:
        j.close()
    rule = f", rule {done.rule_id}" if done.rule_id else ""
    print(f"{done.status.value} {render.ident(done.id)} "
          f"({render.clean(done.action_name, 80, one_line=True)}, "
          f"scope {done.decision_scope.value if done.decision_scope else 'once'}{rule})")
    return EXIT_OK


def answer_from(args: argparse.Namespace) -> Any:
    if args.json is not None:
        return parse_json(args.json, "the answer")
    if args.text is not None:
        return {"text": args.text}
    if args.choice is not None:
        return {"choice": args.choice}
    return {"confirmed": bool(args.confirm)}


def cmd_answer(args: argparse.Namespace) -> int:
    require_kind(args.id, "question", "answer")
    response = answer_from(args)
    j = open_journal(args, write=True)
    try:
        current = j.interactions.get(args.id)
        try:
            done = j.interactions.answer(
                args.id, response, expected_version=args.expect_version or current.version,
                reason=args.reason, request_id=request_id(args), source="cli")
        except errors.ValidationError as err:
            raise errors.ValidationError(
                f"the answer does not fit the question's schema: {err.message}",
                field=err.field,
                hint=f"See the schema with `proctor show {render.last_word(args.id)}`.") from err
    finally:
        j.close()
    print(f"answered {render.ident(done.id)} ({done.kind.value})")
    return EXIT_OK


def cmd_resolve_effect(args: argparse.Namespace) -> int:
    evidence = parse_json(args.evidence, "--evidence") if args.evidence else None
    j = open_journal(args, write=True)
    try:
        current = j.effects.get(args.key)
        done = j.effects.resolve(args.key, args.outcome, reason=args.reason,
                                 expected_version=args.expect_version or current.version,
                                 external_id=args.external_id, evidence=evidence,
                                 request_id=request_id(args), source="cli")
    finally:
        j.close()
    print(f"resolved {render.clean(done.key, 200, one_line=True)} as {done.status.value}")
    return EXIT_OK


def cmd_resolve_memory(args: argparse.Namespace) -> int:
    require_kind(args.id, "memory", "resolve-memory")
    choice = RESOLUTIONS.get(args.choice, args.choice)
    merged = args.content
    if args.content_file:
        try:
            merged = Path(args.content_file).read_text(encoding="utf-8")
        except OSError as err:
            raise UsageError(f"cannot read {args.content_file}: {err}") from err
    if choice == "merged" and not merged:
        raise UsageError("merge needs the merged text: --content TEXT or --content-file FILE")
    j = open_journal(args, write=True)
    try:
        current = j.memory.reconciliation(args.id)
        done = j.memory.resolve(args.id, choice,
                                expected_version=args.expect_version or current.version,
                                merged_content=merged if choice == "merged" else None,
                                reason=args.reason, request_id=request_id(args),
                                source="cli")
    finally:
        j.close()
    print(f"resolved {render.ident(done.id)} as {done.status.value}")
    return EXIT_OK


SNOOZE_KINDS = frozenset({"approval", "question", "memory", "effect"})


def cmd_snooze(args: argparse.Namespace) -> int:
    """Snooze (or wake) several inbox items at once: the core's bulk snooze, each item at
    its current version (or --expect-version when one id is given), each its own
    transaction; one line per item."""
    kinds = [kind_of(ident) for ident in args.ids]
    for ident, kind in zip(args.ids, kinds, strict=True):
        if kind not in SNOOZE_KINDS:
            raise UsageError(f"{render.clean(ident, 80)} is not an inbox item id "
                             "(apr_…, int_…, rec_… or an effect key)")
    until = None if args.wake else time.time() + args.minutes * 60
    j = open_journal(args, write=True)
    try:
        getters = {"approval": j.approvals.get, "question": j.interactions.get,
                   "memory": j.memory.reconciliation, "effect": j.effects.get}
        items = []
        for ident, kind in zip(args.ids, kinds, strict=True):
            version = args.expect_version if args.expect_version and len(args.ids) == 1 \
                else getters[kind](ident).version
            items.append((kind, ident, version))
        results = j.inbox.bulk_snooze(items, until, request_id=request_id(args))
    finally:
        j.close()
    verb = "woke" if args.wake else f"snoozed for {args.minutes:g} min"
    for r in results:
        print(f"{verb} {render.clean(r.id, 200)}" if r.ok else
              f"refused {render.clean(r.id, 200)}: {render.clean(r.error or '', 300)}")
    return EXIT_OK if all(r.ok for r in results) else EXIT_REFUSED


def cmd_cancel(args: argparse.Namespace) -> int:
    require_kind(args.run_id, "run", "cancel")
    j = open_journal(args, write=True)
    try:
        current = j.runs.get(args.run_id)
        j.runs.request_cancel(args.run_id, args.reason,
                              expected_version=args.expect_version or current.version,
                              request_id=request_id(args), source="cli")
    finally:
        j.close()
    print(f"asked {render.ident(args.run_id)} to stop; the agent ends it at its next step")
    return EXIT_OK


# ---------------------------------------------------------------- parsers


def common_parser(*, journal: bool = True) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(add_help=False)
    if journal:
        p.add_argument("--journal", metavar="PATH",
                       help="the journal file (default: $PROCTOR_JOURNAL or the config)")
    p.add_argument("--timeout", type=seconds, default=5.0, metavar="S",
                   help="how long to wait for a journal locked by another process (default 5)")
    return p


def writer_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("--as", dest="operator", metavar="NAME",
                   help="operator name recorded on the decision (default: $PROCTOR_OPERATOR, "
                        "the config, or your OS user)")
    p.add_argument("--expect-version", type=int, metavar="N",
                   help="refuse unless the item is still at version N (default: as read now)")
    p.add_argument("--request-id", metavar="ID",
                   help="idempotency key: retrying with the same id is safe (default: new)")
    p.add_argument("--migrate", action="store_true",
                   help="upgrade an older journal first (a backup is made)")
    return p


def add(sub: Any, name: str, fn: Callable, help_: str, parents: list,
        description: str | None = None) -> argparse.ArgumentParser:
    p = sub.add_parser(name, parents=parents, help=help_, description=description or help_,
                       epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.set_defaults(func=guarded(fn))
    return p


def register(sub: Any) -> None:
    common, writer = common_parser(), writer_parser()
    statuses = [s.value for s in RunStatus]

    p = add(sub, "inbox", cmd_inbox, "list what waits for a person", [common])
    p.add_argument("--kind", action="append", choices=[k.value for k in InboxKind],
                   help="only this kind (repeatable)")
    p.add_argument("--agent")
    p.add_argument("--project")
    p.add_argument("--safety", metavar="CLASS", help="only approvals of this safety class")
    p.add_argument("--text", help="search titles, summaries and ids")
    p.add_argument("--snoozed", action="store_true", help="show only snoozed items")
    p.add_argument("--oldest-first", action="store_true")
    p.add_argument("--limit", type=positive, default=50)
    p.add_argument("--cursor", help="continue after the previous page")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--wait", type=float, metavar="S",
                   help="if nothing is waiting, wait up to S seconds for something (scripts)")
    p.add_argument("--details", action="store_true",
                   help="with --json: add each item's full record (action, schema, …)")

    p = add(sub, "show", cmd_show, "show one approval, question, conflict, effect or run",
            [common], "Show one item by id: apr_… approval, int_… question, rec_… memory "
            "conflict, run_… run, mem_… memory entry, rule_… rule, tc_… tool call; anything "
            "else is an effect key.")
    p.add_argument("id")
    p.add_argument("--json", action="store_true")
    p.add_argument("--full", action="store_true", help="do not shorten long text")

    for name, help_ in (("approve", "approve a pending approval"),
                        ("deny", "deny a pending approval")):
        p = add(sub, name, cmd_decide, help_, [common, writer])
        p.add_argument("id", help="approval id (apr_…)")
        p.add_argument("--reason", required=name == "deny", help="why (required to deny)")
        if name == "approve":
            p.add_argument("--scope", choices=["once", "run", "space"], default="once",
                           help="once; or also allow this action for the rest of the run "
                                "or the whole space (creates a rule)")

    p = add(sub, "answer", cmd_answer, "answer an open question", [common, writer],
            "Answer a question; the answer is validated against its schema "
            "(see it with `proctor show ID`).")
    p.add_argument("id", help="question id (int_…)")
    how = p.add_mutually_exclusive_group(required=True)
    how.add_argument("--json", metavar="JSON", help="the answer as JSON; @FILE or - for stdin")
    how.add_argument("--text", help='shortcut for {"text": TEXT}')
    how.add_argument("--choice", metavar="VALUE", help='shortcut for {"choice": VALUE}')
    how.add_argument("--confirm", action="store_true", help='shortcut for {"confirmed": true}')
    how.add_argument("--decline", action="store_true", help='shortcut for {"confirmed": false}')
    p.add_argument("--reason")

    p = add(sub, "resolve-effect", cmd_resolve_effect,
            "say what really happened to an ambiguous effect", [common, writer])
    p.add_argument("key", help="effect key")
    p.add_argument("outcome", choices=["committed", "failed"])
    p.add_argument("--reason", required=True, help="how you know (kept as evidence)")
    p.add_argument("--external-id", help="the provider's id for it, if any")
    p.add_argument("--evidence", metavar="JSON", help="extra evidence as JSON (@FILE, -)")

    p = add(sub, "resolve-memory", cmd_resolve_memory, "resolve a memory conflict",
            [common, writer])
    p.add_argument("id", help="memory conflict id (rec_…)")
    p.add_argument("choice", choices=[*RESOLUTIONS, *RESOLUTIONS.values()])
    p.add_argument("--content", help="the merged text (for merge)")
    p.add_argument("--content-file", metavar="FILE", help="read the merged text from FILE")
    p.add_argument("--reason", required=True, help="why this version (required, as on the desk)")

    p = add(sub, "snooze", cmd_snooze, "hide inbox items until later (or wake them)",
            [common, writer])
    p.add_argument("ids", nargs="+", metavar="ID", help="approval, question, memory conflict "
                                                        "ids or effect keys")
    when = p.add_mutually_exclusive_group(required=True)
    when.add_argument("--minutes", type=float, help="hide them for this many minutes")
    when.add_argument("--wake", action="store_true", help="bring them back now")

    p = add(sub, "cancel", cmd_cancel, "ask an agent to stop a run", [common, writer])
    p.add_argument("run_id")
    p.add_argument("--reason", required=True)

    p = add(sub, "runs", cmd_runs, "list runs", [common])
    p.add_argument("--status", action="append", choices=statuses, help="repeatable")
    p.add_argument("--project")
    p.add_argument("--agent")
    p.add_argument("--text", help="search titles")
    p.add_argument("--open", action="store_true", help="only runs with open items")
    p.add_argument("--oldest-first", action="store_true")
    p.add_argument("--limit", type=positive, default=50)
    p.add_argument("--cursor")
    p.add_argument("--json", action="store_true")

    p = add(sub, "timeline", cmd_timeline, "list a run's events in order", [common])
    p.add_argument("run_id")
    p.add_argument("--after", type=natural, default=0, metavar="SEQ",
                   help="start after this sequence number")
    p.add_argument("--limit", type=positive, default=200)
    p.add_argument("--type", action="append", help="only events of this type (repeatable)")
    p.add_argument("--full", action="store_true", help="print whole payloads")
    p.add_argument("--json", action="store_true")

    p = add(sub, "verify", cmd_verify, "check a journal's integrity and digest chains",
            [common], "Run SQLite's integrity check, check the evidence triggers, and "
            "recompute every run's event chain and the audit chain. Names the first problem.")
    p.add_argument("journal_path", nargs="?", metavar="JOURNAL")
    p.add_argument("--quick", action="store_true", help="quick_check instead of integrity_check")
    p.add_argument("--run", metavar="RUN_ID", help="verify one run's chain only")
    p.add_argument("--trust", metavar="FILE",
                   help="a trusted-operators file: every operator decision must be signed by "
                        "one of its keys (names the first unsigned or forged decision)")
    p.add_argument("--json", action="store_true")

    p = add(sub, "export", cmd_export, "write a run's events as JSON lines", [common])
    p.add_argument("run_id")
    p.add_argument("-o", "--output", metavar="FILE", help="write here instead of stdout")


__all__ = ["EXIT_OK", "EXIT_REFUSED", "EXIT_STORE", "EXIT_USAGE", "guarded", "output_file",
           "positive", "register", "seconds"]
