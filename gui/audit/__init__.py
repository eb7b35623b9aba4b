"""Audit: every operator action and automatic decision, newest first."""
