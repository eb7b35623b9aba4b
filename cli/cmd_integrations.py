"""`proctor mcp JOURNAL`: serve the journal to MCP hosts over stdio (or `--http`: streamable
HTTP on localhost, bearer-token protected)."""

from __future__ import annotations

import argparse
import sys
from typing import Any


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "mcp",
        help="serve a journal to MCP hosts (stdio, or --http): they ask a person through Proctor",
        description="Run an MCP server on stdio (or, with --http, on MCP's streamable HTTP "
        "transport at http://127.0.0.1:PORT/mcp, every request carrying "
        "'Authorization: Bearer TOKEN'). Tools: request_approval, ask_human, "
        "submit_approval, submit_question, await_decision. Each host session is "
        "a run in JOURNAL; the desk shows its requests live. A request filed with "
        "an idempotency_key outlives its connection. Needs the 'mcp' extra (pip "
        "install 'proctor[mcp]').",
    )
    p.add_argument("journal", metavar="JOURNAL", help="journal file (created if missing)")
    p.add_argument("--project", default="mcp", help="project of the runs (default: mcp)")
    p.add_argument(
        "--agent", default=None, help="agent name of the runs (default: the MCP client's name)"
    )
    p.add_argument(
        "--trust",
        metavar="FILE",
        help="a trusted-operators file (`proctor keys export`): a decision reaches "
        "the host only if one of its operators signed it (default: "
        "$PROCTOR_TRUSTED_OPERATORS; neither: decisions are not checked)",
    )
    p.add_argument(
        "--http",
        action="store_true",
        help="serve streamable HTTP instead of stdio (for agents in other processes and languages)",
    )
    p.add_argument(
        "--host",
        default="127.0.0.1",
        help="--http: address to bind (default 127.0.0.1: this machine only)",
    )
    p.add_argument(
        "--port",
        type=int,
        default=8765,
        help="--http: port (default 8765; 0 picks a free one, printed on stderr)",
    )
    p.add_argument(
        "--token-file",
        metavar="FILE",
        default=None,
        help="--http: where the generated bearer token is written, mode 0600 "
        "(default JOURNAL.mcp-token); $PROCTOR_MCP_TOKEN gives one instead",
    )
    p.add_argument(
        "--session-idle",
        type=float,
        default=300.0,
        metavar="S",
        help="--http: a session (or, for a client that sends no session id, MCP "
        "2026-07-28, the one run per agent name) is closed after S seconds without a "
        "request (default 300)",
    )
    p.add_argument(
        "--max-sessions",
        type=int,
        default=64,
        metavar="N",
        help="--http: keep at most N sessions open; one more is refused with HTTP 503 (default 64)",
    )
    p.set_defaults(func=run_mcp)
    register_hook(sub)


def run_mcp(args: argparse.Namespace) -> int:
    try:
        from proctor.core.integrations.mcp.server import serve_stdio
    except ModuleNotFoundError as exc:
        if exc.name not in ("mcp", "anyio"):
            raise
        print("proctor mcp needs the MCP SDK: pip install 'proctor[mcp]'", file=sys.stderr)
        return 2
    from proctor.core import Actor, Journal, errors

    try:  # refuse a path that cannot be a journal before any host connects
        # with the server's own trust: a probe without it would warn "trusts no key" on every
        # start on a signed journal, and (the warning is said once per path) hide the real state
        Journal.open(args.journal, actor=Actor.agent(args.agent or "mcp"), trust=args.trust).close()
    except errors.StoreError as err:
        print(f"proctor mcp: error: {err.message}", file=sys.stderr)
        if err.hint:
            print(f"  hint: {err.hint}", file=sys.stderr)
        return 3
    if not args.http:
        serve_stdio(args.journal, project=args.project, agent=args.agent, trust=args.trust)
        return 0
    from proctor.core.integrations.mcp.http import serve_http

    try:
        serve_http(
            args.journal,
            host=args.host,
            port=args.port,
            project=args.project,
            agent=args.agent,
            trust=args.trust,
            token_file=args.token_file,
            session_idle_s=args.session_idle,
            max_sessions=args.max_sessions,
        )
    except (OSError, ValueError) as err:
        print(f"proctor mcp: error: {err}", file=sys.stderr)
        return 3
    return 0


HOOKS = ("claude-code", "codex")


def register_hook(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "hook",
        help="answer a coding agent's tool-permission hook from the desk",
        description="Read a hook event on stdin, file it as an approval in the journal, wait "
        "for the operator and print the agent's decision JSON. claude-code: a "
        "PreToolUse command hook; prints permissionDecision allow / deny (with "
        "the operator's reason) / ask. Its own errors and a timeout answer 'ask', "
        "never 'allow'. codex: Codex CLI's PreToolUse hook, which honours only "
        "'deny' (anything else runs the call): approved prints nothing, denied, "
        "edited, timed out and the hook's own errors print 'deny'.",
    )
    p.add_argument("agent_kind", choices=HOOKS, metavar="AGENT", help="claude-code or codex")
    p.add_argument(
        "--journal", default=None, help="journal file (default: $PROCTOR_JOURNAL); it must exist"
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=55.0,
        help="seconds to wait for the operator before answering 'ask' (default 55; "
        "keep it below the hook's timeout in settings.json)",
    )
    p.add_argument(
        "--agent", default=None, help="agent name on the desk (default: claude-code / codex)"
    )
    p.add_argument(
        "--trust",
        metavar="FILE",
        default=None,
        help="a trusted-operators file: only a decision a trusted operator signed "
        "allows or denies (default: $PROCTOR_TRUSTED_OPERATORS, if set)",
    )
    p.add_argument(
        "--project", default=None, help="project of the runs (default: claude-code / codex)"
    )
    p.set_defaults(func=run_hook)


def run_hook(args: argparse.Namespace) -> int:
    import json
    import os
    import signal

    from proctor import hook_guard

    if args.agent_kind == "codex":
        from proctor.core.integrations.codex import decide
        from proctor.core.integrations.codex import refuse as fallback
    else:
        from proctor.core.integrations.claude_code import ask, decide

        def fallback(reason: str) -> dict[str, Any]:
            return ask(f"{reason}; asking instead")

    def stop(signum: int, _frame: object) -> None:
        raise SystemExit(128 + signum)

    kind = args.agent_kind
    if kind != "codex" or hook_guard.phase == "off":  # codex: hook_guard's, from the start
        signal.signal(signal.SIGTERM, stop)
    out: dict[str, Any] | None
    try:
        raw = sys.stdin.read()
    except (OSError, UnicodeDecodeError) as exc:
        out = fallback(f"stdin could not be read ({type(exc).__name__})")
    else:
        hook_guard.enter("wait")  # a SIGTERM from here on withdraws the request, then denies
        try:
            out = decide(
                raw,
                args.journal or os.environ.get("PROCTOR_JOURNAL"),
                timeout=args.timeout,
                agent=args.agent or kind,
                project=args.project or kind,
                trust=args.trust,
            )
            hook_guard.enter("done")  # inside the try: a SIGTERM just before this still denies
        except SystemExit:
            if kind != "codex":
                raise
            # stopped mid-wait (the request is withdrawn): Codex would run the call on a
            # silent exit, so say no first
            out = fallback("the hook was stopped before a decision")
    hook_guard.enter("done")
    if out is not None:
        sys.stdout.write(json.dumps(out, ensure_ascii=True) + "\n")
        sys.stdout.flush()
    return 0
