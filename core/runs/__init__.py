"""Runs: runs, attempts, events and tool calls (``service.py``) and a run's whole detail in one
read (``facts.py``)."""
