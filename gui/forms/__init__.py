"""Answering the agents' questions: a form for every interaction type.

``build_view(interaction, settings)`` gives the answer view for one interaction: the
dedicated view of its kind when the agent's response schema fits it, else the generic
schema form (below the kind's material: the diff, the conflict, the memory change).
``settings`` (the desk's DeskSettings) is where a credential view remembers the
references used; without it they are kept for the view's life only.
"""

from __future__ import annotations

from typing import Any

from proctor.core.models import Question, QuestionKind

from .credentials import CredentialStore, CredentialView
from .memory_change import memory_material
from .review import (
    DiffReviewView,
    MemoryReviewView,
    MergeConflictView,
    diff_material,
    merge_material,
)
from .views import KIND_VIEWS, AnswerView, FormView

VIEWS: dict[QuestionKind, type[AnswerView]] = {
    **KIND_VIEWS,
    QuestionKind.DIFF_REVIEW: DiffReviewView,
    QuestionKind.MERGE_CONFLICT: MergeConflictView,
    QuestionKind.CREDENTIAL_BINDING: CredentialView,
    QuestionKind.MEMORY_CHANGE_REVIEW: MemoryReviewView,
}
MATERIAL = {
    QuestionKind.DIFF_REVIEW: diff_material,
    QuestionKind.MERGE_CONFLICT: merge_material,
    QuestionKind.MEMORY_CHANGE_REVIEW: memory_material,
}


def build_view(question: Question, settings: Any = None) -> AnswerView:
    cls = VIEWS.get(question.kind, FormView)
    if cls is CredentialView and cls.fits(question.response_schema):
        view: AnswerView = CredentialView(question, store=CredentialStore(settings))
    elif cls is not FormView and cls.fits(question.response_schema):
        view = cls(question)
    else:
        material = MATERIAL.get(question.kind)
        view = FormView(question, material=material(question) if material else None)
    view.untouched()
    return view


__all__ = ["VIEWS", "AnswerView", "FormView", "build_view"]
