"""Adapters that let agent runtimes nobody on this team wrote report to a Proctor journal.

Each adapter lives in its own module and imports its third-party library lazily, so the base
install never needs it: ``proctor.core.integrations.mcp.server`` and ``.mcp_http`` (extra
``mcp``), ``.langgraph`` (extra ``langgraph``), ``.openai_agents``, ``.pydanticai``; the hooks
``.claude_code`` and ``.codex`` need nothing. No Qt here, ever.
"""
