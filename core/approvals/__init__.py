"""Approvals: an agent asks before it acts, a person or a standing rule decides, the agent
consumes the decision. The service (``service.py``), its standing rules (``standing.py``:
made, previewed, revoked) and how a rule matches a request (``rules.py``)."""
