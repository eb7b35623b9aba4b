"""The inbox's views of the operator at the desk: "Waiting for me" (requests under a policy
whose stage is theirs — or a delegator's — and which they have not stepped on), "Waiting for
my groups", "Assigned to me" (core/policies/views.py keeps the ids), and "Assign to me"."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from PySide6.QtWidgets import QComboBox, QWidget

from proctor.core.models import InboxItem

from ..infra.actions import ActionSpec
from ..infra.i18n import QT_TR_NOOP, tr
from ..infra.tasks import request_id

# (InboxFilter field, the menu's words); "": everyone's items
VIEWS = (
    ("", QT_TR_NOOP("Everyone's")),
    ("waiting_for", QT_TR_NOOP("Waiting for me")),
    ("for_groups_of", QT_TR_NOOP("Waiting for my groups")),
    ("assigned_to", QT_TR_NOOP("Assigned to me")),
)
FIELDS = {field for field, _words in VIEWS if field}


def mine_combo(parent: QWidget) -> QComboBox:
    combo = QComboBox(parent)
    combo.setAccessibleName(tr("Whose items"))
    combo.setToolTip(
        tr(
            "Waiting for me: requests whose approval stage is yours (or a delegator's) and "
            "that you have not approved yet"
        )
    )
    for field, words in VIEWS:
        combo.addItem(tr(words), field)
    combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
    return combo


def mine_filter(field: Any, operator: str) -> dict[str, str]:
    """The InboxFilter fields of the chosen view for ``operator`` (none: everyone's)."""
    return {field: operator} if field in FIELDS and operator else {}


def is_mine(f: Any) -> bool:
    """``f`` (an InboxFilter) keeps one operator's items only."""
    return any(getattr(f, field) for field in FIELDS)


def select_mine(combo: QComboBox, field: Any) -> None:
    combo.blockSignals(True)
    combo.setCurrentIndex(max(0, combo.findData(field if field in FIELDS else "")))
    combo.blockSignals(False)


class AssignCommand:
    """ "Assign to me" on the current item: one core call (a decision and its audit row)
    through the page's decider, so its outcome is told like a decision's."""

    def __init__(self, page: Any, targets: Callable[[], list[InboxItem]]) -> None:
        self.page = page
        self.targets = targets  # the commands' own: read once per enablement refresh

    def can_assign(self) -> bool:
        targets = self.targets()
        me = self.page.journal.actor.name
        return (
            not self.page.read_only
            and len(targets) == 1
            and targets[0].assignee != me
            and not self.page.decider.busy(f"{targets[0].kind.value}:{targets[0].id}")
        )

    def assign(self) -> None:
        if not self.can_assign():
            return
        item = self.targets()[0]
        assignments, rid = self.page.journal.assignments, request_id()
        self.page.decider.submit(
            item, lambda: Assigned(assignments.assign_to_me(item.kind, item.id, request_id=rid))
        )


@dataclass(frozen=True)
class Assigned:
    """The result of "Assign to me": the item stays waiting, now the assignee's."""

    name: str

    def told(self) -> str:
        return tr("Assigned to {name}").format(name=self.name)


def assign_commands(c: AssignCommand) -> list[ActionSpec]:
    return [
        ActionSpec(
            "inbox.assign",
            QT_TR_NOOP("Assign to me"),
            QT_TR_NOOP("Inbox"),
            QT_TR_NOOP("Take the current item on: recorded as your decision, shown on its row"),
            handler=c.assign,
            enabled=c.can_assign,
            shortcut="Ctrl+Shift+M",
            section=1,
            no_icon="a row's own action; its menu and key are the affordance",
        ),
    ]
