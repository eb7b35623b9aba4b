"""Questions: an agent asks, a person answers through a validated form (``service.py``), and
what a credential reference is (``credentials.py``)."""
