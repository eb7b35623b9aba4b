"""New policy…: a policy drafted in the desk as with ``proctor add-policy`` — its name, the
tool and resource it matches, the stages it needs ("ops:2", or "ops:1, then finance:1" for
a sequence), an optional condition — previewed as it is typed (which pending requests it
matches, which past ones it would have governed; read off the GUI thread) before anything
is made. Cancel is the default; nothing is written until Make policy."""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from proctor.core import errors
from proctor.core.policies.models import PolicyDraft, PolicyPreview, stage_of

from ..infra.context import PageContext
from ..infra.i18n import tr
from ..widgets.dialogs import cancel_by_default
from ..widgets.labels import plain_label

PREVIEW_DELAY_MS = 300  # typing pauses this long before the draft is previewed


def draft_from(name: str, tool: str, resource: str, stages: str, when: str) -> PolicyDraft:
    """The draft the fields say; ``ValidationError`` naming what to fix."""
    parts = [p for p in stages.replace(" then ", ",then,").split(",then,") if p.strip()]
    staged = [stage_of(p.strip().rstrip(",")) for p in parts]
    if not name.strip():
        raise errors.ValidationError("a policy needs a name", field="name")
    if not staged:
        raise errors.ValidationError("a policy needs a stage, e.g. ops:2", field="stages")
    try:
        return PolicyDraft(
            name=name.strip(),
            action_pattern=tool.strip() or "*",
            resource_pattern=resource.strip() or "*",
            predicate=when.strip() or None,
            mode="sequence" if len(staged) > 1 else "quorum",
            stages=staged,
        )
    except ValueError as exc:  # pydantic's: a field out of its bounds
        raise errors.ValidationError(str(exc).splitlines()[0], field="policy") from exc


class NewPolicyDialog(QDialog):
    """The draft's fields, its preview, and Make policy (``draft``, ``reason`` after exec)."""

    def __init__(self, ctx: PageContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(tr("New policy"))
        self.ctx = ctx
        self.draft: PolicyDraft | None = None
        self.fields = {
            key: QLineEdit(self) for key in ("name", "tool", "resource", "stages", "when", "reason")
        }
        hints = {
            "name": tr("e.g. payments: two people"),
            "tool": tr("tool or glob, e.g. payments.*"),
            "resource": tr("* (any)"),
            "stages": tr("ops:2 — or ops:1, then finance:1"),
            "when": tr("optional condition, e.g. args.amount > 5000"),
            "reason": tr("why (kept in the audit log)"),
        }
        titles = {
            "name": tr("Name"),
            "tool": tr("Tool"),
            "resource": tr("Resource"),
            "stages": tr("Needs"),
            "when": tr("When"),
            "reason": tr("Reason"),
        }
        form = QFormLayout()
        for key, field in self.fields.items():
            field.setPlaceholderText(hints[key])
            field.setAccessibleName(titles[key])
            field.textChanged.connect(self._changed)
            form.addRow(titles[key], field)
        self.preview = plain_label(tr("Fill in a name, a tool and what it needs."), self)
        self.preview.setAccessibleName(tr("What the policy would govern"))
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self
        )
        self.make_button = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.make_button.setText(tr("Make policy"))
        self.make_button.setEnabled(False)
        cancel_by_default(self.buttons)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.preview)
        layout.addWidget(self.buttons)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(PREVIEW_DELAY_MS)
        self._timer.timeout.connect(self._preview)
        self.resize(560, self.sizeHint().height())

    @property
    def reason(self) -> str:
        return self.fields["reason"].text().strip()

    def _changed(self) -> None:
        self.draft = None
        self.make_button.setEnabled(False)
        self._timer.start()

    def _preview(self) -> None:
        f = {k: w.text() for k, w in self.fields.items()}
        try:
            draft = draft_from(f["name"], f["tool"], f["resource"], f["stages"], f["when"])
        except errors.ValidationError as err:
            self.preview.setText(str(err))
            return
        policies = self.ctx.journal.policies
        self.ctx.runner.latest(
            "new-policy-preview",
            lambda: (draft, policies.preview(draft)),
            on_done=self._on_preview,
            on_error=lambda exc: self.preview.setText(str(exc)),
            owner=self,
        )

    def _on_preview(self, got: tuple[PolicyDraft, PolicyPreview]) -> None:
        draft, preview = got
        self.draft = draft
        self.preview.setText(
            tr(
                "Needs {needs} (distinct people, never the requester). It would govern the "
                "requests filed from now on; {pending} pending now match it (they keep the "
                "way they were filed), and it would have governed {past} of the past."
            ).format(needs=draft.needs(), pending=len(preview.pending), past=preview.past_total)
        )
        self.make_button.setEnabled(not getattr(self.ctx.journal, "read_only", False))
        self.make_button.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
