"""What the lens says of one approval, for every place that shows or confirms it (the desk's
detail and confirmation, ``proctor show`` and ``proctor approve``): the reading of the action
the operator would approve, whether it reads stronger than the agent declared, and what is new
against the precedent (the last approved actions of the same tool in the same project)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from proctor.core.models import Approval

from .facts import Reading, stronger_than_declared
from .read import read_action

PRECEDENT = 10  # approved actions compared


@dataclass(frozen=True)
class Lens:
    reading: Reading
    declared: str | None  # "declared safe_read, but the lens reads destructive: …", or None
    declared_class: str  # the safety class the agent declared
    new: tuple[str, ...]  # facts no precedent had, most severe first
    precedent: int  # how many approved actions were compared (0: nothing to compare with)

    def detected(self) -> tuple[str, str] | None:
        """(class, why) when it reads stronger than declared: what the confirmation asks for
        (``proctor.core.approvals.confirm.risks``)."""
        if self.declared is None or self.reading.detected is None:
            return None
        return self.reading.detected, self.reading.ranked()[0].text

    def new_line(self) -> str:
        """One line on the precedent: "" when there is none to compare with."""
        if not self.precedent:
            return ""
        if not self.new:
            return f"nothing new against the last {self.precedent} approved"
        shown = "; ".join(self.new[:3])
        more = f" (+{len(self.new) - 3} more)" if len(self.new) > 3 else ""
        return f"new against the last {self.precedent} approved: {shown}{more}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "facts": [
                {
                    "code": f.code,
                    "text": f.text,
                    "field": f.field,
                    "start": f.start,
                    "end": f.end,
                    "implies": f.implies,
                }
                for f in self.reading.facts
            ],
            "unread": list(self.reading.unread),
            "detected": self.reading.detected,
            "declared": self.declared,
            "new": list(self.new),
            "precedent": self.precedent,
        }


def lens_of(approval: Approval, similar: Sequence[Approval] = (), action: Any = None) -> Lens:
    """The lens on ``approval`` (its ``action``, when the operator edited it), against the
    approved ones among ``similar`` (``Approvals.similar``) of the same project."""
    reading = read_action(approval.action if action is None else action)
    past = [
        read_action(p.effective_action)
        for p in similar
        if p.status.value == "approved" and p.project == approval.project
    ][:PRECEDENT]
    declared = stronger_than_declared(approval.safety_class.value, reading)
    safety = approval.safety_class.value
    return Lens(reading, declared, safety, new_this_time(reading, past), len(past))


def new_this_time(reading: Reading, approved: Sequence[Reading]) -> tuple[str, ...]:
    """The facts of ``reading`` that no approved reading had (by their sentence: a table, host,
    path or flag never approved before reads as a sentence never seen), most severe first;
    none when there is nothing to compare with."""
    if not approved:
        return ()
    seen = {f.text for r in approved for f in r.facts}
    new: list[str] = []
    for fact in reading.ranked():
        if fact.text not in seen and fact.text not in new:
            new.append(fact.text)
    return tuple(new)
