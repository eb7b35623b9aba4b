"""What the desk's parts are given (no globals): composed once in gui/app.py."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .actions import ActionRegistry
from .errors import ErrorPresenter
from .guard import ThreadGuard
from .settings import DeskSettings
from .tasks import TaskRunner
from .theme import Theme
from .watcher import JournalWatcher


@dataclass
class Services:
    """The open journal (guarded) and the machinery around it."""

    journal: Any  # a GuardedJournal: every store call checked against the GUI thread
    runner: TaskRunner
    watcher: JournalWatcher
    settings: DeskSettings
    guard: ThreadGuard
    theme: Theme | None = None


@dataclass
class PageContext:
    """What a page needs: the store (through the runner) and the window's UI services."""

    journal: Any
    runner: TaskRunner
    presenter: ErrorPresenter
    registry: ActionRegistry
    settings: DeskSettings
