"""What the desk remembers between sessions (QSettings): theme, single-key shortcuts,
notifications, recent journals, window geometry and splitter positions."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QByteArray, QSettings

MAX_RECENT = 8


class DeskSettings:
    def __init__(self, qsettings: QSettings | None = None) -> None:
        self.q = qsettings or QSettings("Proctor", "Proctor Desk")

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
    def notifications(self) -> bool:
        return self._bool("ui/notifications", True)

    @notifications.setter
    def notifications(self, value: bool) -> None:
        self.q.setValue("ui/notifications", bool(value))

    def shortcut_overrides(self) -> dict[str, str]:
        self.q.beginGroup("shortcuts")
        try:
            return {k: str(self.q.value(k)) for k in self.q.childKeys()}
        finally:
            self.q.endGroup()

    # -- recent journals
    def recent(self) -> list[str]:
        value = self.q.value("journals/recent", [])
        if isinstance(value, str):
            value = [value]
        return [str(v) for v in (value or []) if v]

    def add_recent(self, path: str | Path) -> None:
        path = str(Path(path).absolute())
        items = [path] + [p for p in self.recent() if p != path]
        self.q.setValue("journals/recent", items[:MAX_RECENT])

    # -- window state
    def save_state(self, key: str, state: QByteArray) -> None:
        self.q.setValue(f"window/{key}", state)

    def state(self, key: str) -> QByteArray | None:
        value = self.q.value(f"window/{key}")
        return value if isinstance(value, QByteArray) and not value.isEmpty() else None

    def sync(self) -> None:
        self.q.sync()

    def _bool(self, key: str, default: bool) -> bool:
        value = self.q.value(key, default)
        if isinstance(value, str):
            return value.lower() in ("1", "true", "yes")
        return bool(value)
