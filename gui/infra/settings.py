"""What the desk remembers between sessions (QSettings): theme, single-key shortcuts,
notifications, the operator name, the default journal, the refresh fallback interval,
the memory token budget per scope, which approvals ask for confirmation, recent journals and server connections (never a password), the lists' saved views (named
filters), window geometry and splitter positions. Every part of the desk reads and writes them through one ``DeskSettings``
(tests give it a QSettings over a temporary file)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, cast

from PySide6.QtCore import QByteArray, QSettings

from proctor.core.approvals.confirm import DEFAULT_CONFIRM, NEAR_EXPIRY, STANDING_RULE
from proctor.core.ops import recent

from .watcher import POLL_MS

MAX_RECENT = 8
POLL_RANGE_MS = (100, 10_000)  # the data_version poll: the safety net under the -wal watcher
CREDENTIAL_REFS_KEY = "credentials/references"  # references only, never a secret
RECENT_SERVERS_KEY = "servers/recent"  # connection labels, never a password
WITH_PASSWORD = re.compile(r"://[^/@]*:[^/@]*@")
TOKEN_LIMIT_KEY = "memory/token_limit_per_scope"
DEFAULT_TOKEN_LIMIT = 8000
TOKEN_LIMIT_RANGE = (100, 10_000_000)  # the budget the scope tree measures each scope by
CONFIRM_KEY = "decide/confirm"
UNDO_KEY = "decide/undo_seconds"
DEFAULT_UNDO_S = 5  # the "Undo (5 s)" window after Approve or Deny; 0: off
UNDO_RANGE_S = (0, 60)  # the core's longest hold (core.kernel.limits.MAX_HOLD)
# (the tokens and the default are the core's: proctor.core.approvals.confirm)
# What can ask for a second, deliberate step before an approval: the safety classes, then
# the two situations. (token, the preference's text)
CONFIRM_CHOICES = (
    ("safe_read", "Safe reads"),
    ("idempotent_write", "Idempotent writes"),
    ("unsafe_write", "Unsafe writes"),
    ("external_side_effect", "External side effects (email, HTTP, messages)"),
    ("financial", "Financial actions (payments, refunds)"),
    ("destructive", "Destructive actions (delete, drop, force)"),
    (NEAR_EXPIRY, "Anything past or near its expiry"),
    (STANDING_RULE, "Any decision that creates a standing rule (always in this run/space)"),
)
VIEWS_KEY = "views/{page}"  # one JSON object a page: {name: {filter: value}}
MAX_VIEWS = 50  # a page's saved views
MAX_VIEW_NAME = 80  # characters
NO_CONFIRM = "none"  # stored for an empty choice (QSettings cannot store an empty list)


class DeskSettings:
    def __init__(self, qsettings: QSettings | None = None) -> None:
        self.q = qsettings or QSettings("Proctor", "Proctor Desk")

    # -- file dialogs
    def last_folder(self, kind: str) -> str:
        """The folder the operator last chose a ``kind`` file in ("" before the first)."""
        return str(self.q.value(f"dialogs/last_folder/{kind}", "") or "")

    def remember_folder(self, kind: str, path: str) -> None:
        self.q.setValue(f"dialogs/last_folder/{kind}", str(Path(path).parent))

    # -- preferences
    @property
    def theme(self) -> str:
        value = str(self.q.value("ui/theme", "system"))
        return value if value in ("system", "light", "dark") else "system"

    @theme.setter
    def theme(self, value: str) -> None:
        self.q.setValue("ui/theme", value)

    @property
    def single_keys(self) -> bool:
        return self._bool("ui/single_key_shortcuts", True)

    @single_keys.setter
    def single_keys(self, value: bool) -> None:
        self.q.setValue("ui/single_key_shortcuts", bool(value))

    @property
    def absolute_times(self) -> bool:
        """Times shown as wall times ("14:42:37") rather than relative ("12m ago")."""
        return self._bool("ui/absolute_times", False)

    @absolute_times.setter
    def absolute_times(self, value: bool) -> None:
        self.q.setValue("ui/absolute_times", bool(value))

    @property
    def notifications(self) -> bool:
        return self._bool("ui/notifications", True)

    @notifications.setter
    def notifications(self, value: bool) -> None:
        self.q.setValue("ui/notifications", bool(value))

    @property
    def operator(self) -> str:
        """The name recorded on decisions ("" = the login name or PROCTOR_OPERATOR)."""
        return str(self.q.value("journal/operator", "") or "").strip()

    @operator.setter
    def operator(self, value: str) -> None:
        self.q.setValue("journal/operator", value.strip())

    @property
    def default_journal(self) -> str:
        """The journal opened when the desk starts without one ("" = the most recent)."""
        return str(self.q.value("journal/default", "") or "").strip()

    @default_journal.setter
    def default_journal(self, value: str) -> None:
        self.q.setValue("journal/default", value.strip())

    @property
    def poll_ms(self) -> int:
        """How often the desk polls for changes when the file watcher misses them."""
        try:
            value = int(cast(Any, self.q.value("journal/poll_ms", POLL_MS)))  # int() checks
        except (TypeError, ValueError):
            return POLL_MS
        low, high = POLL_RANGE_MS
        return min(max(value, low), high)

    @poll_ms.setter
    def poll_ms(self, value: int) -> None:
        self.q.setValue("journal/poll_ms", int(value))

    @property
    def memory_token_limit(self) -> int:
        """The token budget of every memory scope (the Memory page's scope tree)."""
        try:
            value = int(
                cast(Any, self.q.value(TOKEN_LIMIT_KEY, DEFAULT_TOKEN_LIMIT))
            )  # int() checks
        except (TypeError, ValueError):
            return DEFAULT_TOKEN_LIMIT
        low, high = TOKEN_LIMIT_RANGE
        return min(max(value, low), high) if value > 0 else DEFAULT_TOKEN_LIMIT

    @memory_token_limit.setter
    def memory_token_limit(self, value: int) -> None:
        self.q.setValue(TOKEN_LIMIT_KEY, int(value))

    @property
    def undo_seconds(self) -> int:
        """How long a decision may be undone (the agent acts on it only after): whole
        seconds, 0 = off (issue 37). Unset or unreadable: DEFAULT_UNDO_S."""
        try:
            value = int(cast(Any, self.q.value(UNDO_KEY, DEFAULT_UNDO_S)))  # int() checks
        except (TypeError, ValueError):
            return DEFAULT_UNDO_S
        low, high = UNDO_RANGE_S
        return min(max(value, low), high)

    @undo_seconds.setter
    def undo_seconds(self, value: int) -> None:
        self.q.setValue(UNDO_KEY, int(value))

    @property
    def confirm(self) -> frozenset[str]:
        """What asks for confirmation before an approval (CONFIRM_CHOICES tokens). Unset or
        unreadable: DEFAULT_CONFIRM; an approval of an unknown safety class always asks."""
        stored = self.q.value(CONFIRM_KEY)
        if stored is None or stored == "":
            return DEFAULT_CONFIRM
        values = [stored] if isinstance(stored, str) else list(stored)
        if values == [NO_CONFIRM]:
            return frozenset()
        known = {token for token, _text in CONFIRM_CHOICES}
        chosen = frozenset(str(v) for v in values) & known
        return chosen if chosen else DEFAULT_CONFIRM

    @confirm.setter
    def confirm(self, value: frozenset[str]) -> None:
        known = [token for token, _text in CONFIRM_CHOICES if token in value]
        self.q.setValue(CONFIRM_KEY, known or [NO_CONFIRM])

    def shortcut_overrides(self) -> dict[str, str]:
        self.q.beginGroup("shortcuts")
        try:
            return {k: str(self.q.value(k)) for k in self.q.childKeys()}
        finally:
            self.q.endGroup()

    # -- credential references the operator has used (gui/forms/credentials.py)
    def credential_references(self) -> list[str]:
        return self._strings(CREDENTIAL_REFS_KEY)

    def set_credential_references(self, refs: list[str]) -> None:
        self.q.setValue(CREDENTIAL_REFS_KEY, list(refs))

    # -- recent journals
    def recent(self) -> list[str]:
        return self._strings("journals/recent")

    def add_recent(self, path: str | Path) -> None:
        path = str(Path(path).absolute())
        items = [path] + [p for p in self.recent() if p != path]
        self.q.setValue("journals/recent", items[:MAX_RECENT])
        recent.remember(path)  # the list the CLI falls back to as well

    # -- recent server connections (gui/shell/connect.py labels: never a password)
    def recent_servers(self) -> list[str]:
        return self._strings(RECENT_SERVERS_KEY)

    def add_recent_server(self, label: str) -> None:
        if WITH_PASSWORD.search(label):  # a label never carries one: refuse, never store it
            raise ValueError("a recent connection is kept without its password")
        items = [label] + [s for s in self.recent_servers() if s != label]
        self.q.setValue(RECENT_SERVERS_KEY, items[:MAX_RECENT])

    # -- saved views: named filters of a list (gui/widgets/saved_views.py)
    def views(self, page: str) -> dict[str, dict[str, Any]]:
        """``page``'s saved views by name, in the order they were saved (unreadable: none)."""
        try:
            data = json.loads(str(self.q.value(VIEWS_KEY.format(page=page), "") or "{}"))
        except ValueError:
            return {}
        if not isinstance(data, dict):
            return {}
        return {
            str(name): value
            for name, value in list(data.items())[:MAX_VIEWS]
            if isinstance(value, dict)
        }

    def save_view(self, page: str, name: str, filters: dict[str, Any]) -> None:
        """Keep ``filters`` as ``page``'s view ``name`` (replacing one of that name)."""
        name = " ".join(name.split())[:MAX_VIEW_NAME]
        if not name:
            raise ValueError("a view needs a name")
        views = {k: v for k, v in self.views(page).items() if k != name}
        if len(views) >= MAX_VIEWS:
            raise ValueError(f"at most {MAX_VIEWS} views are kept; delete one first")
        views[name] = dict(filters)
        self._set_views(page, views)

    def delete_view(self, page: str, name: str) -> None:
        self._set_views(page, {k: v for k, v in self.views(page).items() if k != name})

    def _set_views(self, page: str, views: dict[str, dict[str, Any]]) -> None:
        self.q.setValue(VIEWS_KEY.format(page=page), json.dumps(views, ensure_ascii=False))
        self.q.sync()

    # -- window state
    def save_state(self, key: str, state: QByteArray) -> None:
        self.q.setValue(f"window/{key}", state)

    def state(self, key: str) -> QByteArray | None:
        value = self.q.value(f"window/{key}")
        return value if isinstance(value, QByteArray) and not value.isEmpty() else None

    def sync(self) -> None:
        self.q.sync()

    def _strings(self, key: str) -> list[str]:
        value: Any = self.q.value(key, [])  # a list, or one string as QSettings keeps it
        if isinstance(value, str):
            value = [value]
        return [str(v) for v in (value or []) if v]

    def _bool(self, key: str, default: bool) -> bool:
        value = self.q.value(key, default)
        if isinstance(value, str):
            return value.lower() in ("1", "true", "yes")
        return bool(value)
