"""`proctor mcp JOURNAL`: serve the journal to MCP hosts over stdio."""

from __future__ import annotations

import argparse
import sys


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "mcp", help="serve a journal to MCP hosts (stdio): they ask a person through Proctor",
        description="Run an MCP server on stdio. Tools: request_approval, ask_human, "
                    "submit_approval, submit_question, await_decision. Each host session is "
                    "a run in JOURNAL; the desk shows its requests live. Needs the 'mcp' "
                    "extra (pip install 'proctor[mcp]').")
    p.add_argument("journal", metavar="JOURNAL", help="journal file (created if missing)")
    p.add_argument("--project", default="mcp", help="project of the runs (default: mcp)")
    p.add_argument("--agent", default=None,
                   help="agent name of the runs (default: the MCP client's name)")
    p.add_argument("--trust", metavar="FILE",
                   help="a trusted-operators file (`proctor keys export`): a decision reaches "
                        "the host only if one of its operators signed it (default: "
                        "$PROCTOR_TRUSTED_OPERATORS; neither: decisions are not checked)")
    p.set_defaults(func=run_mcp)


def run_mcp(args: argparse.Namespace) -> int:
    try:
        from proctor.core.integrations.mcp_server import serve_stdio
    except ModuleNotFoundError as exc:
        if exc.name not in ("mcp", "anyio"):
            raise
        print("proctor mcp needs the MCP SDK: pip install 'proctor[mcp]'", file=sys.stderr)
        return 2
    from proctor.core import Actor, Journal, errors

    try:  # refuse a path that cannot be a journal before any host connects
        Journal.open(args.journal, actor=Actor.agent(args.agent or "mcp")).close()
    except errors.StoreError as err:
        print(f"proctor mcp: error: {err.message}", file=sys.stderr)
        if err.hint:
            print(f"  hint: {err.hint}", file=sys.stderr)
        return 3
    serve_stdio(args.journal, project=args.project, agent=args.agent, trust=args.trust)
    return 0
