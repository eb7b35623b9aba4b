"""`proctor demo` and `proctor open`: the desk (PySide6 is imported only when they run)."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from .ops_base import UsageError, guarded

if TYPE_CHECKING:
    from proctor.core.errors import ProctorError
    from proctor.core.kernel.links import Link
    from proctor.gui.shell.mainwindow import MainWindow

EXIT_OK, EXIT_USAGE, EXIT_STORE = 0, 2, 3


def register(sub: argparse._SubParsersAction) -> None:
    demo = sub.add_parser(
        "demo",
        help="build a demo journal, start simulated agents, open the desk",
        description="Builds a fresh demo journal (under your user data folder), starts "
        "simulated agent processes that keep asking for approvals and answers, "
        "and opens the desk on it. The agents stop when the window closes.",
    )
    demo.add_argument("--agents", type=int, default=3, help="agent processes (default 3)")
    demo.add_argument(
        "--rate", type=float, default=0.5, help="steps per second per agent (default 0.5)"
    )
    demo.add_argument("--seed", type=int, default=0, help="seed for the demo journal")
    demo.add_argument(
        "--dir",
        type=Path,
        help="folder for the demo (default: a new folder under the user data folder)",
    )
    demo.add_argument("--no-agents", action="store_true", help="open without live agents")
    demo.add_argument("--as", dest="operator", help="operator name (default: your login)")
    demo.set_defaults(func=guarded(cmd_demo))

    opener = sub.add_parser(
        "open",
        help="open a journal in the desk, or a link to an item or a run",
        description="Open a journal in the desk, or follow a link "
        "(proctor://item/ID, proctor://run/ID: the desk's Copy link) to that item or run. "
        "A link's journal is --journal, else $PROCTOR_JOURNAL, else the config's, else "
        "the most recent journal the desk opened; a desk that has it open already shows "
        "the link, else a new desk opens on it.",
    )
    opener.add_argument(
        "path",
        help="the journal file, a team journal's server URL "
        "(postgresql+psycopg://LOGIN@HOST:PORT/DATABASE; the "
        "password from the URL or the OS keyring), or a link proctor://item/ID or "
        "proctor://run/ID",
    )
    opener.add_argument(
        "--journal",
        metavar="PATH",
        help="for a link: the journal it is in (default: $PROCTOR_JOURNAL, the config, "
        "else the most recent one)",
    )
    opener.add_argument("--read-only", action="store_true", help="watch only; decide nothing")
    opener.add_argument("--as", dest="operator", help="operator name (default: your login)")
    opener.add_argument("--create", action="store_true", help="create the journal if missing")
    opener.add_argument(
        "--migrate",
        action="store_true",
        help="upgrade an older journal without asking (a backup is made first)",
    )
    opener.set_defaults(func=guarded(cmd_open))


def cmd_open(args: argparse.Namespace) -> int:
    link = link_of(args)  # before anything of Qt: a bad link is a usage error
    if link is not None:
        from .ops_base import journal_path

        args.path = journal_path(args)
    elif args.journal:
        raise UsageError("--journal goes with a link (proctor://item/ID or proctor://run/ID)")
    from proctor.gui.shell.preflight import check_or_explain

    if (refused := check_or_explain("proctor open")) is not None:
        return refused
    desk = {"link": link.url()} if link is not None else {}
    if "://" in args.path and not args.path.startswith("sqlite:///"):
        from proctor.gui.shell.start import (
            run_desk,  # a server: the desk connects (or says why not)
        )

        return run_desk(args.path, read_only=args.read_only, operator=args.operator, **desk)
    path = Path(args.path.removeprefix("sqlite:///")).expanduser()
    if not path.exists() and (args.read_only or not args.create):
        print(f"proctor open: error: no journal at {path}", file=sys.stderr)
        print(
            "  hint: Check the path, or pass --create to start a new journal there.",
            file=sys.stderr,
        )
        return EXIT_STORE
    refusal = not_a_journal(path)
    if refusal is not None:
        print(f"proctor open: error: {refusal.message}", file=sys.stderr)
        print(f"  hint: {refusal.hint}", file=sys.stderr)
        return EXIT_STORE
    from proctor.gui.shell.start import run_desk  # the window first, then the desk

    return run_desk(
        path,
        read_only=args.read_only,
        operator=args.operator,
        old_schema="migrate" if args.migrate else "ask",
        **desk,
    )


def link_of(args: argparse.Namespace) -> Link | None:
    """The link ``proctor open`` was given (None: a journal); UsageError for a malformed one."""
    from proctor.core.kernel.links import BadLink, is_link, parse_link

    if not is_link(args.path):
        return None
    try:
        return parse_link(args.path)
    except BadLink as exc:
        raise UsageError(str(exc)) from None


def not_a_journal(path: Path) -> ProctorError | None:
    """The refusal for a file that is no Proctor journal at all (a text file, a folder,
    another program's database), found before any window opens; None for anything the desk
    itself should show (a journal: damaged, older, newer, locked, read-only ...)."""
    from proctor.core import Journal, errors

    if not path.exists():
        return None
    try:
        Journal.open(path, read_only=True, create=False, on_old_schema="read_only").close()
    except (errors.NotAJournal, errors.NotFound) as err:
        return err
    except errors.StoreError as err:
        return err if path.is_dir() else None
    return None


def demo_folder(base: Path | None) -> Path:
    """A new, empty folder for one demo (user data folder, else the temp folder)."""
    import tempfile

    import platformdirs

    stamp = time.strftime("demo-%Y%m%d-%H%M%S")
    roots = (
        [base]
        if base
        else [
            Path(platformdirs.user_data_dir("proctor")) / "demos",
            Path(tempfile.gettempdir()) / "proctor-demos",
        ]
    )
    for root in roots:
        try:
            root.mkdir(parents=True, exist_ok=True, mode=0o700)
            return Path(tempfile.mkdtemp(prefix=f"{stamp}-", dir=root))
        except OSError:
            continue
    raise OSError("no writable folder for the demo journal")


def cmd_demo(args: argparse.Namespace) -> int:
    """The window comes first: an empty journal is created at once (its schema only), the
    desk opens on it, and a child process fills it in behind the window with a progress bar;
    the simulated agents start when it is full."""
    if args.agents < 0:
        print("proctor demo: --agents must be 0 or more", file=sys.stderr)
        return EXIT_USAGE
    from proctor.gui.shell.preflight import check_or_explain

    if (refused := check_or_explain("proctor demo")) is not None:
        return refused  # before any work: nothing built, no agent started
    from proctor.core import Actor, Journal
    from proctor.sim.demo import recent_start

    path = demo_folder(args.dir) / "journal.db"
    operator = args.operator or demo_operator()
    trust = demo_trust(path.parent, operator)
    Journal.open(path, actor=Actor.agent("demo-builder")).close()  # the schema, no runs yet
    print(
        f"Opening the desk on a new demo journal at {path}; it fills in behind the window.",
        flush=True,
    )
    started: list = []  # the simulated agents, once the journal is full

    def on_window(window: MainWindow) -> None:
        from proctor.gui.shell.demo_fill import DemoFill

        fill = DemoFill(window, path, seed=args.seed, start_time=recent_start(), operator=operator)
        inbox = getattr(window, "inbox", None)
        if inbox is not None:  # the demo's own fill is no arrival to hold behind "N new"
            fill.filled.connect(inbox.show_new)
        if args.agents and not args.no_agents:
            fill.filled.connect(
                lambda: started.append(start_demo_agents(path, args, trust["path"]))
            )
        fill.start()

    from proctor.gui.shell.start import run_desk  # the window first, then the desk

    try:
        return run_desk(path, operator=operator, on_window=on_window)
    finally:
        for agents in started:
            agents.stop()
            print("Stopped the simulated agents.", flush=True)
        print(f"The demo journal stays at {path}", flush=True)


def start_demo_agents(path: Path, args: argparse.Namespace, trust: Path | None = None) -> object:
    """The simulated agents; with ``trust`` they refuse any decision the operator's key did
    not sign (their ``PROCTOR_TRUSTED_OPERATORS``; the desk and the demo's builder keep
    theirs)."""
    from proctor.sim.agents import start_agents

    agents = start_agents(path, agents=args.agents, rate=args.rate, seed=args.seed, trust=trust)
    print(
        f"Started {args.agents} simulated agents"
        + (f"; they trust only your key ({trust})." if trust else "."),
        flush=True,
    )
    return agents


def demo_operator() -> str:
    """The name the desk will decide as (its Preferences, else the login name)."""
    from proctor.core.journal import default_operator_name
    from proctor.gui.infra.settings import DeskSettings

    return DeskSettings().operator or default_operator_name()


def demo_trust(folder: Path, operator: str) -> dict:
    """The operator's key (made if it has none) as ``folder/trusted-operators.json``, the
    file the demo's simulated agents trust."""
    import json

    from proctor.core.decisions.keys import KeyStore

    store = KeyStore()
    key, _ = store.init(operator)
    path = folder / "trusted-operators.json"
    path.write_text(json.dumps(store.export(operator), indent=2) + "\n", encoding="utf-8")
    return {"path": path, "fingerprint": key.fingerprint}
