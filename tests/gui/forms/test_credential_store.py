"""Credential references are remembered in the desk's settings (a test's temporary file),
never in the user's real QSettings; a store without settings keeps them for itself."""

from __future__ import annotations

from proctor.gui.forms.credentials import CredentialStore

from ..conftest import WAIT_MS
from .test_forms_agents import Desk, keyring_backend, send  # noqa: F401 (a fixture)

REF = "vault://team/stripe-refunds"


def test_a_used_reference_is_kept_in_the_desks_settings(
    qtbot,
    journal_path,
    open_desk,
    settings,
    keyring_backend,  # noqa: F811 - a pytest fixture, imported for its name
):
    desk = Desk(qtbot, journal_path, open_desk)
    detail = desk.ask_here({"kind": "credential_binding", "prompt": "Stripe key?"})
    qtbot.keyClicks(detail.view.refs.lineEdit(), REF)
    send(qtbot, detail)
    qtbot.waitUntil(lambda: settings.credential_references() == [REF], timeout=WAIT_MS)
    again = desk.ask_here({"kind": "credential_binding", "prompt": "Stripe key again?"})
    offered = [again.view.refs.itemText(i) for i in range(again.view.refs.count())]
    assert REF in offered


def test_a_store_without_settings_keeps_references_to_itself(qapp):
    lonely = CredentialStore()
    lonely.remember(REF)
    lonely.remember("vault://team/other")
    assert lonely.references() == ["vault://team/other", REF]
    assert CredentialStore().references() == []  # nothing went to shared settings
