"""`proctor keys init|show|export|retire`: the operator's signing key.

Every decision an operator makes from the CLI or the desk is signed with this key; agents
that are given the exported trusted-operators file refuse decisions it did not sign
(docs/signed-decisions.md).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from proctor.core import errors
from proctor.core.decisions.keys import WEAKER_NOTE, KeyStore, fingerprint

from . import ops_render as render
from .ops_base import EXIT_OK, EXIT_REFUSED, add, operator_name
from .parsing import plain_parser


def _describe(name: str, key: Any, created: bool) -> None:
    print(f"operator: {render.clean(name)}")
    print(f"key id:   {key.key_id}")
    print(f"fingerprint: {key.fingerprint}")
    print(f"public key:  {key.public_key}")
    print(f"stored in:   {'the OS keyring' if key.storage == 'keyring' else 'a 0600 file'}")
    if key.weaker:
        print(f"  note: {WEAKER_NOTE}")
    if created:
        print("(made now)")


def cmd_init(args: argparse.Namespace) -> int:
    name = operator_name(args)
    key, created = KeyStore().init(name)
    _describe(name, key, created)
    return EXIT_OK


def cmd_show(args: argparse.Namespace) -> int:
    name = operator_name(args)
    store = KeyStore()
    key = store.load(name)
    if key is None:
        print(
            f"{render.clean(name)} has no current key; `proctor keys init` makes one",
            file=sys.stderr,
        )
    else:
        _describe(name, key, False)
    for info in store.keys(name):
        if info.get("retired_at"):
            print(f"retired: {fingerprint(info['key_id'])} at {render.when(info['retired_at'])}")
    return EXIT_OK if key is not None else EXIT_REFUSED


def cmd_export(args: argparse.Namespace) -> int:
    name = operator_name(args)
    store = KeyStore()
    if not store.keys(name):
        raise errors.NotFound(f"{name} has no key yet; `proctor keys init` makes one")
    text = json.dumps(store.export(name), indent=2) + "\n"
    if args.output:
        with open(args.output, "w", encoding="utf-8") as fh:
            fh.write(text)
        print(
            f"wrote {args.output}: give it to agents as --trust / PROCTOR_TRUSTED_OPERATORS",
            file=sys.stderr,
        )
    else:
        sys.stdout.write(text)
    return EXIT_OK


def cmd_retire(args: argparse.Namespace) -> int:
    name = operator_name(args)
    info = KeyStore().retire(name)
    if info is None:
        raise errors.NotFound(f"{name} has no current key to retire")
    print(
        f"retired {fingerprint(info['key_id'])}: its private key is deleted. Agents refuse "
        "what it signs from now on once they have the new trusted-operators file "
        "(`proctor keys export`); the next decision makes a new key."
    )
    return EXIT_OK


def register(sub: Any) -> None:
    p = sub.add_parser(
        "keys",
        help="the operator's signing key (init, show, export, retire)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    keys = p.add_subparsers(dest="keys_command", metavar="ACTION", required=True)
    who = plain_parser()
    who.add_argument(
        "--as",
        dest="operator",
        metavar="NAME",
        help="operator name (default: $PROCTOR_OPERATOR, the config, your OS user)",
    )
    add(keys, "init", cmd_init, "make the operator's key (if it has none) and show it", [who])
    add(keys, "show", cmd_show, "show the operator's key and fingerprint", [who])
    e = add(
        keys,
        "export",
        cmd_export,
        "print a trusted-operators file with the operator's keys (retired ones marked)",
        [who],
    )
    e.add_argument("-o", "--output", metavar="FILE")
    add(keys, "retire", cmd_retire, "retire the current key (a new one is made on next use)", [who])
