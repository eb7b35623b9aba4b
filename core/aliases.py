"""Retired names, kept for the agents that embed an older Proctor: each still works and warns
(``DeprecationWarning``) naming the word that replaced it.

One concept has one word everywhere (core, desk, CLI, docs): a person answers a
**question** (it was an "interaction" in the core) and resolves a memory **conflict** (a
"reconciliation", an inbox item of kind "memory"). The journal's stored names stay as they
were (the ``interactions`` and ``memory_reconciliations`` tables, their columns, the
change-feed and signed-payload values ``interaction`` and ``reconciliation``): they are
evidence, and renaming them would change recorded bytes for no reader's benefit.

This is the only module allowed to spell a retired word in a name
(``tests/test_words.py`` refuses them everywhere else). The flat module paths of the core
before it was arranged by workflow (``proctor.core.approvals`` as a module,
``proctor.core.canonical``, ...) import too, as the modules that took their place.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings
from enum import EnumType
from typing import Any

# retired public name -> the name that replaced it (models, proctor.core, services)
NAMES = {
    "Interaction": "Question",
    "InteractionKind": "QuestionKind",
    "InteractionStatus": "QuestionStatus",
    "Interactions": "Questions",
    "Reconciliation": "Conflict",
    "ReconciliationStatus": "ConflictStatus",
}
# retired attributes of the journal and its services -> their names now
ATTRIBUTES = {
    "interactions": "questions",
    "reconciliation": "conflict",
    "reconciliations": "conflicts",
}
# retired enum members: (enum, member) -> member now
MEMBERS = {
    ("InboxKind", "MEMORY"): "CONFLICT",
    ("ChangeKind", "INTERACTION"): "QUESTION",
    ("ChangeKind", "RECONCILIATION"): "CONFLICT",
}
# retired enum values: (enum, value) -> value now (``InboxKind("memory")``, ``--kind memory``)
VALUES = {("InboxKind", "memory"): "conflict"}

# the core's flat modules before the tree was arranged by workflow -> where each went
MODULES = {
    "canonical": "kernel.canonical",
    "limits": "kernel.limits",
    "safe_text": "kernel.safe_text",
    "origin": "kernel.origin",
    "integrity": "kernel.integrity",
    "predicates": "kernel.predicates",
    "schema": "storage.schema",
    "sql": "storage.sql",
    "db": "storage.db",
    "pg": "storage.pg",
    "rows": "storage.rows",
    "paging": "storage.paging",
    "items": "storage.items",
    "tx": "storage.tx",
    "store": "storage.store",
    "migrations": "storage.migrations",
    "keys": "decisions.keys",
    "trust": "decisions.trust",
    "signing": "decisions.signing",
    "decision_rows": "decisions.writer",
    "deciders": "decisions.deciders",
    "decision_checks": "decisions.checks",
    "signed_views": "decisions.views",
    "rules": "approvals.rules",
    "approval_rules": "approvals.service",
    "inbox_rows": "inbox.rows",
    "run_facts": "runs.facts",
    "effect_rows": "effects.rows",
    "effect_views": "effects.views",
    "interactions": "questions.service",
    "credentials": "questions.credentials",
    "memory_views": "memory.views",
    "overview": "audit.overview",
    "verify": "audit.verify",
    "witness": "audit.witness",
    "timeline": "audit.timeline",
    "transfer": "ops.transfer",
    "migrate_to": "ops.migrate_to",
    "team": "ops.team",
    "integrations.mcp_host": "integrations.mcp.host",
    "integrations.mcp_http": "integrations.mcp.http",
    "integrations.mcp_outcome": "integrations.mcp.outcome",
    "integrations.mcp_runs": "integrations.mcp.runs",
    "integrations.mcp_server": "integrations.mcp.server",
    "integrations.mcp_sessions": "integrations.mcp.sessions",
    "integrations.mcp_tools": "integrations.mcp.tools",
}
# the modules that became packages of the same name: their public names, from the service
PACKAGES = {"approvals", "inbox", "runs", "effects", "memory", "audit"}
CORE = "proctor.core"


def warn(old: str, new: str, *, stacklevel: int = 3) -> None:
    warnings.warn(f"{old} is retired: use {new}", DeprecationWarning, stacklevel=stacklevel)


def name(namespace: dict[str, Any], module: str, old: str) -> Any:
    """A module's ``__getattr__``: a retired name as the one that replaced it."""
    new = NAMES.get(old)
    if new is None or new not in namespace:
        raise AttributeError(f"module {module!r} has no attribute {old!r}")
    warn(f"{module}.{old}", f"{module}.{new}", stacklevel=4)
    return namespace[new]


def service_name(package: str, old: str) -> Any:
    """A package that was a module: its old public names, from its service module."""
    if old.startswith("__"):
        raise AttributeError(old)
    service = importlib.import_module(f"{package}.service")
    if not hasattr(service, old):
        raise AttributeError(f"module {package!r} has no attribute {old!r}")
    warn(f"{package}.{old}", f"{package}.service.{old}", stacklevel=4)
    return getattr(service, old)


class RetiredAttributes:
    """The journal and its services: a retired attribute as the one that replaced it."""

    def __getattr__(self, old: str) -> Any:
        new = ATTRIBUTES.get(old)
        if new is None or old.startswith("__"):
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {old!r}")
        value = getattr(self, new)
        warn(f"{type(self).__name__}.{old}", f"{type(self).__name__}.{new}")
        return value


class Retiring(EnumType):
    """An enum whose retired members still resolve (``InboxKind.MEMORY``), with a warning."""

    def __getattr__(cls, old: str) -> Any:
        new = MEMBERS.get((cls.__name__, old))
        if new is None:
            return super().__getattr__(old)  # type: ignore[misc]
        warn(f"{cls.__name__}.{old}", f"{cls.__name__}.{new}")
        return cls[new]


def retired_value(enum: Any, value: object) -> Any:
    """An enum's ``_missing_``: a retired value as the one that replaced it, else None."""
    new = VALUES.get((enum.__name__, value)) if isinstance(value, str) else None
    if new is None:
        return None
    warn(f"{enum.__name__}({value!r})", f"{enum.__name__}({new!r})", stacklevel=6)
    return enum(new)


class _OldModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """``import proctor.core.canonical`` and the rest of the flat paths: the module now."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if not fullname.startswith(CORE + "."):
            return None
        tail = fullname[len(CORE) + 1 :]
        if tail not in MODULES:
            return None
        return importlib.machinery.ModuleSpec(fullname, self)

    def create_module(self, spec: Any) -> Any:
        new = f"{CORE}.{MODULES[spec.name[len(CORE) + 1 :]]}"
        warn(spec.name, new, stacklevel=6)
        return importlib.import_module(new)

    def exec_module(self, module: Any) -> None:
        """The module is the new one, already executed."""


def install() -> None:
    """Make the old flat module paths importable (once per process)."""
    if not any(isinstance(f, _OldModules) for f in sys.meta_path):
        sys.meta_path.append(_OldModules())
