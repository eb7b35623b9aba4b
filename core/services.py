"""Hang the services off an open journal."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .journal import Journal


def attach_services(journal: Journal) -> None:
    from .approvals import Approvals
    from .audit import Audit, Changes
    from .effects import Effects
    from .inbox import Inbox
    from .interactions import Interactions
    from .memory import Memory
    from .overview import Overview
    from .runs import Runs

    journal.runs = Runs(journal)
    journal.approvals = Approvals(journal)
    journal.interactions = Interactions(journal)
    journal.memory = Memory(journal)
    journal.effects = Effects(journal)
    journal.inbox = Inbox(journal)
    journal.audit = Audit(journal)
    journal.changes = Changes(journal)
    journal.overview = Overview(journal)
    from .signed_views import Signatures

    journal.signatures = Signatures(journal)
