"""Answering the agents' questions: a form for every interaction type.

``build_view(interaction, settings)`` gives the answer view for one interaction: the
dedicated view of its kind when the agent's response schema fits it, else the generic
schema form (below the kind's material: the diff, the conflict, the memory change).
``settings`` (the desk's DeskSettings) is where a credential view remembers the
references used; without it they are kept for the view's life only.
"""

from __future__ import annotations

from typing import Any

from proctor.core.models import Interaction, InteractionKind

from .credentials import CredentialStore, CredentialView
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


def build_view(interaction: Interaction, settings: Any = None) -> AnswerView:
    cls = VIEWS.get(interaction.kind, FormView)
    if cls is CredentialView and cls.fits(interaction.response_schema):
        view: AnswerView = CredentialView(interaction, store=CredentialStore(settings))
    elif cls is not FormView and cls.fits(interaction.response_schema):
        view = cls(interaction)
    else:
        material = MATERIAL.get(interaction.kind)
        view = FormView(interaction, material=material(interaction) if material else None)
    view.untouched()
    return view


__all__ = ["AnswerView", "FormView", "VIEWS", "build_view"]
