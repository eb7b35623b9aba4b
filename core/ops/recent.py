"""The journals opened lately, shared by the desk and the command line: the desk remembers
each journal it opens; either one, started without a journal named, opens the default one
(the desk's preference, the CLI's config) or else the most recent that still exists.

The list is a small JSON file (``recent-journals.json``) in the user's state folder
(``$PROCTOR_STATE_DIR``, else platformdirs' ``user_state_dir("proctor")``), written whole
and replaced atomically, mode 0600. Paths only: a server URL is never kept here (the desk
keeps connection labels, without passwords, in its own settings). A missing or unreadable
file is an empty list: remembering is a convenience, never a reason to fail."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

MAX_RECENT = 8
FILE_NAME = "recent-journals.json"


def state_dir() -> Path:
    named = os.environ.get("PROCTOR_STATE_DIR")
    if named:
        return Path(named).expanduser()
    import platformdirs

    return Path(platformdirs.user_state_dir("proctor"))


def recent_journals() -> list[str]:
    """The journals remembered, most recent first (they may no longer exist)."""
    try:
        data = json.loads((state_dir() / FILE_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    items = data.get("journals") if isinstance(data, dict) else None
    return [str(p) for p in items if isinstance(p, str) and p] if isinstance(items, list) else []


def remember(path: str | os.PathLike[str]) -> None:
    """Put the journal file ``path`` first in the list (a server URL is not kept)."""
    text = os.fspath(path)
    if "://" in text:
        return
    text = str(Path(text).expanduser().absolute())
    items = [text] + [p for p in recent_journals() if p != text]
    folder = state_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".recent-", suffix=".json")
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump({"journals": items[:MAX_RECENT]}, out, indent=1)
        os.replace(tmp, folder / FILE_NAME)
    except OSError:
        return


def start_journal(candidates: Iterable[str | None] = ()) -> Path | None:
    """The journal to open when none was named: the first of ``candidates`` (a default, the
    desk's own list) that is an existing file, else the most recent remembered one."""
    for candidate in [*candidates, *recent_journals()]:
        if candidate and Path(candidate).expanduser().is_file():
            return Path(candidate).expanduser()
    return None


__all__ = ["recent_journals", "remember", "start_journal"]
