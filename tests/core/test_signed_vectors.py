"""The signature format's test vectors (docs/signed-decisions-vectors.json) hold: RFC 8785
bytes, key id, and an Ed25519 signature any implementation reproduces (Ed25519 is
deterministic), checked with the libraries directly as another language would."""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path

import pytest
import rfc8785
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from proctor.core.decisions.keys import OperatorKey
from proctor.core.decisions.signing import canonical_bytes, verify_bytes

DOC = json.loads(
    (Path(__file__).parents[2] / "docs" / "signed-decisions-vectors.json").read_text(
        encoding="utf-8"
    )
)
FIELDS_1 = {
    "proctor_signed",
    "kind",
    "journal_id",
    "record_id",
    "target_kind",
    "target_id",
    "target_version",
    "subject_digest",
    "edited_action_digest",
    "content",
    "reason",
    "operator",
    "key_id",
    "signed_at",
}
# format 2 (issue #31) adds what a trusting agent relies on besides the item
FIELDS_2 = FIELDS_1 | {
    "run_id",
    "attempt",
    "scope",
    "expires_at",
    "rule_id",
    "rule_version",
    "request_sequence",
    "request_digest",
}
FIELDS = {1: FIELDS_1, 2: FIELDS_2}


def test_the_vectors_key_id_is_sha256_of_the_raw_public_key():
    key = DOC["key"]
    raw = base64.b64decode(key["public_key"].removeprefix("ed25519:"))
    assert hashlib.sha256(raw).hexdigest()[:32] == key["key_id"]
    assert (
        OperatorKey.from_seed("x", bytes.fromhex(key["seed_hex"])).public_key == key["public_key"]
    )


@pytest.mark.parametrize("vector", DOC["vectors"], ids=lambda v: v["name"])
def test_vector(vector):
    data = vector["canonical"].encode("utf-8")
    assert set(vector["payload"]) == FIELDS[vector["payload"]["proctor_signed"]]
    assert rfc8785.dumps(vector["payload"]) == data
    assert canonical_bytes(json.loads(data)) == data
    assert hashlib.sha256(data).hexdigest() == vector["canonical_sha256"]
    raw = base64.b64decode(DOC["key"]["public_key"].removeprefix("ed25519:"))
    Ed25519PublicKey.from_public_bytes(raw).verify(base64.b64decode(vector["signature"]), data)
    signer = OperatorKey.from_seed("alice", bytes.fromhex(DOC["key"]["seed_hex"]))
    assert base64.b64encode(signer.sign(data)).decode() == vector["signature"]
    assert not verify_bytes(raw, data + b" ", vector["signature"])


def test_both_formats_have_vectors_and_the_code_signs_the_newest():
    from proctor.core.decisions.signing import FORMAT, payload_of

    assert {v["payload"]["proctor_signed"] for v in DOC["vectors"]} == {1, 2}
    made = payload_of(
        kind="decision",
        journal_id="j",
        record_id="d",
        target_kind="approval",
        target_id="a",
        target_version=2,
        subject_digest=None,
        content=None,
        reason=None,
        operator="operator:alice",
        key_id="k",
        signed_at=1.0,
    )
    assert made["proctor_signed"] == FORMAT == 2 and set(made) == FIELDS_2
