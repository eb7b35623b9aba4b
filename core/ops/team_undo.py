"""Team mode: only the person who decided takes the decision back (issue 37).

An undo (``core/decisions/undo.py``) moves a held decision back to open. On a team server
each operator is a login and a person's decision names it (``operator:<login>``, checked at
the decision by ``proctor_check_operator``), so the login that undoes must be the one that
decided: another operator's raw UPDATE that undoes it is refused here, whatever the row says
about the hold. (On SQLite every writer is the same user; ``verify`` names such an undo.)"""

from __future__ import annotations


def undo_by_decider(by: str, decided: tuple[str, ...], reopened: str) -> str:
    """The PL/pgSQL of ``trg_<table>_team`` that refuses an undo (a move from ``decided``
    back to ``reopened``) by any login but the one its ``by`` column names."""
    statuses = ", ".join(f"'{s}'" for s in decided)
    return f"""
  IF TG_OP = 'UPDATE' AND OLD.status IN ({statuses}) AND NEW.status = '{reopened}'
     AND OLD.{by} IS DISTINCT FROM 'operator:' || session_user THEN
    RAISE EXCEPTION 'only the operator who made a decision undoes it (%), not operator:%',
      OLD.{by}, session_user USING ERRCODE = 'insufficient_privilege',
      HINT = 'Ask the operator who decided, or decide anew.';
  END IF;
"""


APPROVAL_UNDO = undo_by_decider("decided_by", ("approved", "denied"), "pending")
QUESTION_UNDO = undo_by_decider("resolved_by", ("resolved", "dismissed"), "presented")
