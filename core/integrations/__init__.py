"""Adapters that let agent runtimes nobody on this team wrote report to a Proctor journal.

Each adapter lives in its own module and imports its third-party library lazily, so the base
install never needs it: ``proctor.core.integrations.mcp_server`` (extra ``mcp``) and
``proctor.core.integrations.langgraph`` (extra ``langgraph``). No Qt here, ever.
"""
