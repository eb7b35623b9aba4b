"""Proctor: the operator desk for AI-agent runs."""

from .hook_guard import install_if_codex_hook

install_if_codex_hook()  # `proctor hook codex`: a SIGTERM from here on denies (hook_guard)

__version__ = "0.1.0"
