"""Proctor: the operator desk for AI-agent runs."""

__version__ = "0.1.0"
