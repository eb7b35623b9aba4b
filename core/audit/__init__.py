"""Audit and integrity: the audit log and the change feed (``service.py``), the overview's facts,
run timelines, ``verify`` and the head witness kept beside a journal file."""
