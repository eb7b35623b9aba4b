"""Answering the agents' questions: a form for every interaction type.

``build_view(interaction)`` gives the answer view for one interaction: the dedicated
view of its kind when the agent's response schema fits it, else the generic schema form
(below the kind's material: the diff, the conflict, the memory change).
"""

from __future__ import annotations

from proctor.core.models import Interaction, InteractionKind

from .credentials import CredentialView
from .review import (
    DiffReviewView,
    MemoryReviewView,
    MergeConflictView,
    diff_material,
    memory_material,
    merge_material,
)
from .views import KIND_VIEWS, AnswerView, FormView

VIEWS = {**KIND_VIEWS,
         InteractionKind.DIFF_REVIEW: DiffReviewView,
         InteractionKind.MERGE_CONFLICT: MergeConflictView,
         InteractionKind.CREDENTIAL_BINDING: CredentialView,
         InteractionKind.MEMORY_CHANGE_REVIEW: MemoryReviewView}
MATERIAL = {InteractionKind.DIFF_REVIEW: diff_material,
            InteractionKind.MERGE_CONFLICT: merge_material,
            InteractionKind.MEMORY_CHANGE_REVIEW: memory_material}


def build_view(interaction: Interaction) -> AnswerView:
    cls = VIEWS.get(interaction.kind, FormView)
    if cls is not FormView and cls.fits(interaction.response_schema):
        view = cls(interaction)
    else:
        material = MATERIAL.get(interaction.kind)
        view = FormView(interaction, material=material(interaction) if material else None)
    view.untouched()
    return view


__all__ = ["AnswerView", "FormView", "VIEWS", "build_view"]
