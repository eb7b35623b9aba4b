"""What the desk and the CLI show about signatures: each decision signed by whom,
unsigned, or invalid; the counts the integrity view shows. Checked against the journal's
``trust`` when it has one, else against the keys the journal records (display only)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqlalchemy import select

from proctor.core.storage import schema as s

from .checks import SignatureState, decision_status

if TYPE_CHECKING:
    from proctor.core.storage.store import Store


class Signatures:
    def __init__(self, store: Store) -> None:
        self.j = store

    @property
    def trusted(self) -> bool:
        """The states are checked against a trust file (not the journal's own keys)."""
        return self.j.trust is not None

    def states(self, decision_ids: list[str]) -> dict[str, SignatureState]:
        """The signature state of each decision id (unknown ids are left out)."""
        ids = list(dict.fromkeys(decision_ids))

        def read(conn: Any) -> dict[str, SignatureState]:
            rows = conn.execute(select(s.decisions).where(s.decisions.c.id.in_(ids))).all()
            return {d.id: decision_status(conn, self.j.trust, d) for d in rows}

        return self.j.read(read) if ids else {}

    def for_target(self, target_id: str) -> dict[str, SignatureState]:
        def read(conn: Any) -> dict[str, SignatureState]:
            rows = conn.execute(
                select(s.decisions).where(s.decisions.c.target_id == target_id)
            ).all()
            return {d.id: decision_status(conn, self.j.trust, d) for d in rows}

        return self.j.read(read)

    def counts_for_run(self, run_id: str) -> dict[str, int]:
        """signed / unsigned / invalid / automatic over the run's decisions."""
        return self._counts(select(s.decisions).where(s.decisions.c.run_id == run_id))

    def counts(self) -> dict[str, int]:
        """signed / unsigned / invalid / automatic over every decision in the journal."""
        return self._counts(select(s.decisions))

    def _counts(self, stmt: Any) -> dict[str, int]:
        def read(conn: Any) -> dict[str, int]:
            counts = {"signed": 0, "unsigned": 0, "invalid": 0, "automatic": 0}
            for d in conn.execute(stmt):
                counts[decision_status(conn, self.j.trust, d).state] += 1
            return counts

        return self.j.read(read)
