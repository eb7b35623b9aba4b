"""The Proctor MCP server: its tools, client sessions, runs, outcomes and HTTP transport."""
