"""Operator keys: made on first use, private key in the keyring or (weaker) a 0600 file,
retired keys sign no more and are exported with their retirement time."""

from __future__ import annotations

import stat

import keyring
import pytest
from keyring.backend import KeyringBackend

from proctor.core.decisions.keys import KeyStore
from proctor.core.decisions.trust import Trust


class MemoryKeyring(KeyringBackend):
    priority = 1

    def __init__(self) -> None:
        super().__init__()
        self.items: dict[tuple[str, str], str] = {}

    def get_password(self, service, username):
        return self.items.get((service, username))

    def set_password(self, service, username, password):
        self.items[(service, username)] = password

    def delete_password(self, service, username):
        self.items.pop((service, username), None)


@pytest.fixture
def ring(monkeypatch):
    backend = MemoryKeyring()
    previous = keyring.get_keyring()
    keyring.set_keyring(backend)
    monkeypatch.delenv("PROCTOR_KEY_STORE", raising=False)
    yield backend
    keyring.set_keyring(previous)


def test_without_a_keyring_the_key_is_a_0600_file(tmp_path, monkeypatch):
    monkeypatch.setenv("PROCTOR_KEY_STORE", "file")
    store = KeyStore(tmp_path / "keys")
    key, created = store.init("alice")
    assert created and key.storage == "file" and key.weaker
    files = list((tmp_path / "keys").iterdir())
    assert files and all(stat.S_IMODE(f.stat().st_mode) == 0o600 for f in files)
    assert stat.S_IMODE((tmp_path / "keys").stat().st_mode) == 0o700
    again, created = store.init("alice")
    assert not created and again.key_id == key.key_id


def test_with_a_keyring_the_private_key_is_not_on_disk(tmp_path, ring):
    store = KeyStore(tmp_path / "keys")
    key, _ = store.init("alice")
    assert key.storage == "keyring" and not key.weaker
    assert not list((tmp_path / "keys").glob("*.key"))
    assert ring.items
    assert store.load("alice").key_id == key.key_id


def test_retire_then_init_makes_a_new_key_and_export_names_both(tmp_path, monkeypatch):
    monkeypatch.setenv("PROCTOR_KEY_STORE", "file")
    store = KeyStore(tmp_path / "keys")
    old, _ = store.init("alice")
    retired = store.retire("alice")
    assert retired["retired_at"] and store.load("alice") is None
    assert not list((tmp_path / "keys").glob(f"*{old.key_id}.key"))  # cannot sign again
    new, created = store.init("alice")
    assert created and new.key_id != old.key_id
    trust = Trust.from_document(store.export("alice"))
    assert trust.keys[old.key_id].retired_at == retired["retired_at"]
    assert trust.keys[new.key_id].retired_at is None
