"""What the desk's parts are given (no globals): composed once in gui/shell/app.py."""

from __future__ import annotations

from dataclasses import dataclass

from proctor.core import Journal

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

    # a GuardedJournal (gui/infra/guard.py): a Journal whose every store call is checked against
    # the GUI thread; it has the Journal's attributes and services, so it is typed as one
    journal: Journal
    runner: TaskRunner
    watcher: JournalWatcher
    settings: DeskSettings
    guard: ThreadGuard
    theme: Theme | None = None


@dataclass
class PageContext:
    """What a page needs: the store (through the runner) and the window's UI services."""

    journal: Journal  # guarded, as in Services
    runner: TaskRunner
    presenter: ErrorPresenter
    registry: ActionRegistry
    settings: DeskSettings
