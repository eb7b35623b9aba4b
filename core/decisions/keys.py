"""Operator keys: each operator identity is an Ed25519 key pair.

The private key lives in the OS keyring (the ``secrets`` extra, ``keyring``); where no
keyring backend works it lives in a 0600 file under the platform config folder, which is
weaker (any process running as the same OS user can read it) and is said so wherever the
key is shown. Public facts about the keys (key id, public key, created, retired) are kept
beside it in ``<config>/keys/<operator>.json``. Nothing here reads or writes a journal.

``PROCTOR_KEYS_DIR`` moves the folder; ``PROCTOR_KEY_STORE=file`` skips the keyring.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import re
import time
from pathlib import Path
from typing import Any, Literal

from proctor.core import errors

KEYRING_SERVICE = "proctor-operator-key"
PUBLIC_PREFIX = "ed25519:"
Storage = Literal["keyring", "file"]
WEAKER_NOTE = (
    "the private key is in a 0600 file (no OS keyring backend works here): "
    "weaker than a keyring, any process of this OS user can read it"
)


def key_id_of(raw_public: bytes) -> str:
    """The key's id: the first 32 hex digits of sha256 over the 32 raw public-key bytes."""
    return hashlib.sha256(raw_public).hexdigest()[:32]


def fingerprint(key_id: str) -> str:
    """The key id in groups of four, as people read it out."""
    return " ".join(key_id[i : i + 4] for i in range(0, len(key_id), 4))


def public_key_text(raw_public: bytes) -> str:
    return PUBLIC_PREFIX + base64.b64encode(raw_public).decode("ascii")


def parse_public_key(text: Any) -> bytes:
    """The 32 raw bytes of ``ed25519:<base64>``; ValidationError for anything else."""
    if not isinstance(text, str) or not text.startswith(PUBLIC_PREFIX):
        raise errors.ValidationError("a public key is 'ed25519:<base64>'", field="public_key")
    try:
        raw = base64.b64decode(text[len(PUBLIC_PREFIX) :], validate=True)
    except ValueError as exc:
        raise errors.ValidationError(
            "the public key is not valid base64", field="public_key"
        ) from exc
    if len(raw) != 32:
        raise errors.ValidationError("an Ed25519 public key is 32 bytes", field="public_key")
    return raw


class OperatorKey:
    """An operator's current signing key (holds the private key; never crosses a process)."""

    def __init__(self, name: str, private: Any, created_at: float, storage: Storage) -> None:
        from cryptography.hazmat.primitives import serialization

        self.name = name
        self._private = private
        self.created_at = created_at
        self.storage = storage
        self.raw_public = private.public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw
        )
        self.key_id = key_id_of(self.raw_public)
        self.public_key = public_key_text(self.raw_public)

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.key_id)

    @property
    def weaker(self) -> bool:
        return self.storage == "file"

    def sign(self, data: bytes) -> bytes:
        return self._private.sign(data)

    @classmethod
    def generate(cls, name: str, storage: Storage = "file") -> OperatorKey:
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

        return cls(name, Ed25519PrivateKey.generate(), time.time(), storage)

    @classmethod
    def from_seed(
        cls, name: str, seed: bytes, created_at: float = 0.0, storage: Storage = "file"
    ) -> OperatorKey:
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

        return cls(name, Ed25519PrivateKey.from_private_bytes(seed), created_at, storage)

    def seed(self) -> bytes:
        from cryptography.hazmat.primitives import serialization

        return self._private.private_bytes(
            serialization.Encoding.Raw,
            serialization.PrivateFormat.Raw,
            serialization.NoEncryption(),
        )


def keys_dir() -> Path:
    env = os.environ.get("PROCTOR_KEYS_DIR")
    if env:
        return Path(env)
    import platformdirs

    return Path(platformdirs.user_config_dir("proctor")) / "keys"


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "_", name)[:120] or "_"


def _keyring() -> Any | None:
    """The keyring module if a real backend works here, else None."""
    if os.environ.get("PROCTOR_KEY_STORE", "").lower() == "file":
        return None
    try:
        import keyring
        from keyring.backends import fail
    except ImportError:
        return None
    backend = keyring.get_keyring()
    if isinstance(backend, fail.Keyring) or type(backend).__module__.endswith(".null"):
        return None
    return keyring


class KeyStore:
    """The operator keys of this OS user (``keys_dir()``)."""

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder or keys_dir()

    # ------------------------------------------------------------ public
    def load(self, name: str) -> OperatorKey | None:
        """``name``'s current key, or None when it has none (or its private key is gone)."""
        index = self._index(name)
        current = index.get("current")
        info = next((k for k in index.get("keys", []) if k["key_id"] == current), None)
        if info is None:
            return None
        seed = self._read_private(name, info)
        if seed is None:
            return None
        key = OperatorKey.from_seed(name, seed, info["created_at"], info["storage"])
        if key.key_id != info["key_id"]:
            raise errors.Corrupt(f"the stored private key of {name} does not match its key id")
        return key

    def init(self, name: str) -> tuple[OperatorKey, bool]:
        """``name``'s current key, made now if it has none. Returns (key, created)."""
        key = self.load(name)
        if key is not None:
            return key, False
        key = OperatorKey.generate(name)
        key.storage = self._write_private(name, key)
        index = self._index(name)
        index.setdefault("keys", []).append(
            {
                "key_id": key.key_id,
                "public_key": key.public_key,
                "created_at": key.created_at,
                "retired_at": None,
                "storage": key.storage,
            }
        )
        index.update(name=name, current=key.key_id)
        self._save_index(name, index)
        return key, True

    def retire(self, name: str) -> dict | None:
        """Retire ``name``'s current key: its private key is deleted and it signs no more;
        trusted-operators files exported from now on carry its retirement time."""
        index = self._index(name)
        current = index.get("current")
        info = next((k for k in index.get("keys", []) if k["key_id"] == current), None)
        if info is None:
            return None
        info["retired_at"] = time.time()
        index["current"] = None
        self._delete_private(name, info)
        self._save_index(name, index)
        return info

    def keys(self, name: str) -> list[dict]:
        return list(self._index(name).get("keys", []))

    def export(self, name: str) -> dict:
        """A trusted-operators file naming every key of ``name`` (retired ones with their
        retirement time)."""
        return trust_file(
            [
                {"name": name, "public_key": k["public_key"], "retired_at": k["retired_at"]}
                for k in self.keys(name)
            ]
        )

    # ------------------------------------------------------------ files
    def _index_path(self, name: str) -> Path:
        return self.folder / f"{_safe(name)}.json"

    def _private_path(self, name: str, key_id: str) -> Path:
        return self.folder / f"{_safe(name)}-{key_id}.key"

    def _index(self, name: str) -> dict:
        path = self._index_path(name)
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {"name": name, "current": None, "keys": []}
        except (OSError, ValueError) as exc:
            raise errors.Corrupt(f"{path} cannot be read: {exc}") from exc

    def _save_index(self, name: str, index: dict) -> None:
        self._ensure_folder()
        _write_private_file(self._index_path(name), json.dumps(index, indent=2) + "\n")

    def _ensure_folder(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.chmod(self.folder, 0o700)

    def _write_private(self, name: str, key: OperatorKey) -> Storage:
        secret = base64.b64encode(key.seed()).decode("ascii")
        ring = _keyring()
        if ring is not None:
            try:
                ring.set_password(KEYRING_SERVICE, f"{name}:{key.key_id}", secret)
                return "keyring"
            except Exception:  # noqa: BLE001 - any backend failure means: use the file
                pass
        self._ensure_folder()
        _write_private_file(self._private_path(name, key.key_id), secret + "\n")
        return "file"

    def _read_private(self, name: str, info: dict) -> bytes | None:
        if info.get("storage") == "keyring":
            ring = _keyring()
            secret = None
            if ring is not None:
                try:
                    secret = ring.get_password(KEYRING_SERVICE, f"{name}:{info['key_id']}")
                except Exception:  # noqa: BLE001
                    secret = None
        else:
            try:
                secret = self._private_path(name, info["key_id"]).read_text("ascii").strip()
            except FileNotFoundError:
                secret = None
        return base64.b64decode(secret) if secret else None

    def _delete_private(self, name: str, info: dict) -> None:
        if info.get("storage") == "keyring":
            ring = _keyring()
            if ring is not None:
                with contextlib.suppress(Exception):
                    ring.delete_password(KEYRING_SERVICE, f"{name}:{info['key_id']}")
        else:
            self._private_path(name, info["key_id"]).unlink(missing_ok=True)


def _write_private_file(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` as a 0600 file (replaced atomically)."""
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_CREAT | os.O_TRUNC | os.O_WRONLY, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)


def trust_file(operators: list[dict]) -> dict:
    """The trusted-operators document (docs/signed-decisions.md)."""
    return {"proctor_trusted_operators": 1, "operators": operators}


def operator_key(name: str, *, create: bool = True) -> OperatorKey | None:
    """The operator's key from this user's store (made on first use when ``create``)."""
    store = KeyStore()
    return store.init(name)[0] if create else store.load(name)
