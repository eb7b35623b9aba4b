"""Approval policies: who must approve what (docs/policies.md).

Groups of operators kept in the journal (``groups``), policies that match requests the way
rules do and say what a request needs (``match``), each approver's step and the progress of
a request through its policy (``steps``), the facade ``Policies`` (``service``) and what
``proctor verify`` checks (``verify``). The store's triggers are core/storage/policy_sql.py.
"""
