"""Credential binding: the agent gets a *reference* to a credential, never the secret.

The operator picks a reference (one the agent suggested, or one configured before and
remembered in the desk's settings — references only), types another reference, or
types a new secret in a masked field. A new secret goes to the OS keyring (the optional
``keyring`` package) under service "proctor"; the answer carries
``keyring://proctor/<name>``. Without a usable keyring backend the desk refuses to store
a secret and says so. The secret is never part of the answer, a draft, the journal or a
log line.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Slot
from PySide6.QtWidgets import QButtonGroup, QComboBox, QLineEdit, QRadioButton, QWidget

from proctor.core.models import Question
from proctor.core.questions.credentials import looks_like_secret as looks_like_secret
from proctor.core.questions.credentials import reference_problem

from ..infra.i18n import tr
from ..infra.settings import DeskSettings
from ..widgets.fmt import visible
from ..widgets.labels import plain_label, section
from .validate import Problem
from .views import AnswerView, request_dict

SERVICE = "proctor"
REF_PREFIX = f"keyring://{SERVICE}/"
MAX_REFS = 200
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


class SecretNotStored(Exception):
    """The secret could not be put in the OS keyring (nothing was sent to the agent)."""


def keyring_status() -> tuple[bool, str]:
    """(usable, why not). May talk to the OS keyring service: call it off the GUI thread."""
    try:
        import keyring
        from keyring.backends import fail
    except ImportError:
        return False, "the keyring package is not installed (pip install 'proctor[secrets]')"
    try:
        backend = keyring.get_keyring()
    except Exception as exc:  # noqa: BLE001 - a broken backend configuration
        return False, f"the OS keyring cannot be used ({type(exc).__name__})"
    chained = getattr(backend, "backends", None)
    if isinstance(backend, fail.Keyring) or chained == [] or getattr(backend, "priority", 1) <= 0:
        return False, "no OS keyring is available on this machine"
    first = chained[0] if chained else backend  # a chainer writes to its first backend
    if type(first).__name__ in PLAINTEXT_BACKENDS:
        return False, (
            f"the only keyring here ({type(first).__module__}) keeps secrets in a plain file"
        )
    return True, ""


# keyring backends that write secrets to a file as they are (keyrings.alt's): not an OS keyring
PLAINTEXT_BACKENDS = ("PlaintextKeyring",)


def store_secret(name: str, secret: str) -> str:
    """Put ``secret`` in the OS keyring under ``name``; returns the reference."""
    usable, why = keyring_status()
    if not usable:
        raise SecretNotStored(f"The secret was not stored: {why}.")
    import keyring

    try:
        keyring.set_password(SERVICE, name, secret)
    except Exception as exc:  # noqa: BLE001 - locked keyring, refused access ... (never echo the secret)
        raise SecretNotStored(
            f"The OS keyring refused the secret ({type(exc).__name__})."
        ) from None
    return REF_PREFIX + name


class CredentialStore:
    """The references this operator has used (references only, never a secret), kept in
    the desk's settings. Without them (a view built outside a desk) they last for this
    store's life and never reach the user's real settings."""

    def __init__(self, settings: DeskSettings | None = None) -> None:
        self.settings = settings
        self._session: list[str] = []

    def references(self) -> list[str]:
        refs = self.settings.credential_references() if self.settings is not None else self._session
        return refs[:MAX_REFS]

    def remember(self, ref: str) -> None:
        refs = ([ref] + [r for r in self.references() if r != ref])[:MAX_REFS]
        if self.settings is None:
            self._session = refs
        else:
            self.settings.set_credential_references(refs)


class CredentialView(AnswerView):
    """Choose a credential reference, or store a new secret in the OS keyring."""

    KEYS = frozenset({"credential_ref", "note"})
    MAIN = "credential_ref"
    keyring_known: tuple[bool, str] | None = None  # checked once per session, off the GUI thread

    def __init__(
        self,
        question: Question,
        parent: QWidget | None = None,
        *,
        store: CredentialStore | None = None,
    ) -> None:
        super().__init__(question, parent)
        self.store = store or CredentialStore()
        self.keyring_ok, self.keyring_why = False, "checking for an OS keyring…"
        request = request_dict(question)
        self._facts(request)
        self.mode = QButtonGroup(self)
        self.use_ref = QRadioButton(tr("Use a credential reference"), self)
        self.new_secret = QRadioButton(tr("Store a new secret in the OS keyring"), self)
        self.mode.addButton(self.use_ref, 0)
        self.mode.addButton(self.new_secret, 1)
        self.use_ref.setChecked(True)
        self.mode.idToggled.connect(self._on_mode)
        self.refs = QComboBox(self)
        self.refs.setEditable(True)
        self.refs.setAccessibleName(tr("Credential reference"))
        editor = self.refs.lineEdit()  # an editable combo box has one
        assert editor is not None
        editor.setPlaceholderText(tr("e.g. vault://team/stripe"))
        suggested = request.get("suggested")
        suggested = suggested if isinstance(suggested, list) else []
        known = [str(s)[:300] for s in suggested[:MAX_REFS]] + self.store.references()
        for ref in dict.fromkeys(known):  # shown escaped; the reference itself kept as data
            self.refs.addItem(visible(ref), ref)
        self.refs.setCurrentIndex(-1)
        self.refs.editTextChanged.connect(self.changed)
        self.name = QLineEdit(self)
        self.name.setAccessibleName(tr("New credential name"))
        self.name.setPlaceholderText(tr("A name for it, e.g. stripe-refunds"))
        self.name.textChanged.connect(self.changed)
        self.secret = QLineEdit(self)
        self.secret.setAccessibleName(tr("Secret"))
        self.secret.setPlaceholderText(tr("The secret (stored in the OS keyring only)"))
        self.secret.setEchoMode(QLineEdit.EchoMode.Password)
        self.secret.textChanged.connect(self.changed)
        self.keyring_note = plain_label(self.keyring_why, self, name="Muted")
        self._layout()
        if CredentialView.keyring_known is not None:
            self.set_keyring(*CredentialView.keyring_known)
        else:
            self.new_secret.setEnabled(False)
            self._on_mode(0, True)

    def _facts(self, request: dict) -> None:
        service = str(request.get("service", ""))[:100]
        scopes = request.get("scopes") if isinstance(request.get("scopes"), list) else []
        facts = [f"Service: {service}"] if service else []
        if scopes:
            facts.append("Scopes: " + ", ".join(str(s)[:80] for s in scopes[:30]))
        if request.get("purpose"):
            facts.append(f"Purpose: {str(request['purpose'])[:200]}")
        if facts:
            self.layout_.addWidget(plain_label("  ·  ".join(facts), self))

    def _layout(self) -> None:
        self.layout_.addWidget(section("Credential", self))
        self.layout_.addWidget(
            plain_label(
                tr("The agent receives a reference only; the secret never goes into the journal."),
                self,
                name="Muted",
            )
        )
        self.layout_.addWidget(self.use_ref)
        self.layout_.addWidget(self.refs)
        self.layout_.addWidget(self.new_secret)
        self.layout_.addWidget(self.name)
        self.layout_.addWidget(self.secret)
        self.layout_.addWidget(self.keyring_note)
        self.note = self.add_note()
        self.layout_.addWidget(self.problem)

    def set_keyring(self, usable: bool, why: str) -> None:
        """The result of the keyring check (done on the task runner)."""
        CredentialView.keyring_known = (usable, why)
        self.keyring_ok, self.keyring_why = usable, why
        self.keyring_note.setText(
            ""
            if usable
            else tr(
                "Cannot store secrets here: {why}. Put the secret in your "
                "secret manager and give its reference instead."
            ).format(why=why)
        )
        self.keyring_note.setVisible(not usable)
        self.new_secret.setEnabled(usable)
        self.new_secret.setToolTip(
            ""
            if usable
            else tr("No OS keyring here ({why}): give a reference instead.").format(why=why)
        )
        if not usable and self.new_secret.isChecked():
            self.use_ref.setChecked(True)
        self._on_mode(self.mode.checkedId(), True)

    @Slot(int, bool)
    def _on_mode(self, _id: int, checked: bool) -> None:
        if not checked:
            return
        storing = self.new_secret.isChecked()
        self.refs.setEnabled(not storing)
        self.name.setEnabled(storing)
        self.secret.setEnabled(storing)
        self.changed()

    def storing(self) -> bool:
        return self.new_secret.isChecked()

    def reference(self) -> str:
        if self.storing():
            return REF_PREFIX + self.name.text().strip()
        return self.typed_ref()

    def typed_ref(self) -> str:
        """The reference chosen (a suggestion's own text, not its escaped display) or typed."""
        index = self.refs.currentIndex()
        if index >= 0 and self.refs.currentText() == self.refs.itemText(index):
            data = self.refs.itemData(index)
            if isinstance(data, str):
                return data.strip()
        return self.refs.currentText().strip()

    def value(self) -> Any:
        out: dict[str, Any] = {}
        if self.reference() and (not self.storing() or self.name.text().strip()):
            out["credential_ref"] = self.reference()
        if self.note is not None and self.note.text():
            out["note"] = self.note.text()
        return out

    def view_problems(self) -> list[Problem]:
        where = ("credential_ref",)
        if not self.storing():
            problem = reference_problem(self.typed_ref())
            return [Problem(where, problem)] if problem else []
        if not self.keyring_ok:
            return [Problem(where, f"cannot store a secret: {self.keyring_why}")]
        if not NAME.fullmatch(self.name.text().strip()):
            return [Problem(where, "name the credential: letters, digits, '.', '_' or '-'")]
        if not self.secret.text():
            return [Problem(where, "type the secret")]
        return []

    def before_submit(self) -> Callable[[], Any] | None:
        if not self.storing():
            return None
        name, secret = self.name.text().strip(), self.secret.text()
        return lambda: store_secret(name, secret)

    def submitted(self) -> None:
        self.secret.clear()
        ref = self.reference()
        if ref:
            self.store.remember(ref)

    def draft(self) -> Any:
        return {
            "mode": self.mode.checkedId(),
            "ref": self.refs.currentText(),
            "name": self.name.text(),
            "note": self.note.text() if self.note else "",
        }

    def restore(self, draft: Any) -> None:
        if not isinstance(draft, dict):
            return
        self.refs.setEditText(str(draft.get("ref", "")))
        self.name.setText(str(draft.get("name", "")))
        if self.note is not None:
            self.note.setText(str(draft.get("note", "")))
        if draft.get("mode") == 1 and self.new_secret.isEnabled():
            self.new_secret.setChecked(True)

    def focus_primary(self) -> None:
        self.refs.setFocus()
