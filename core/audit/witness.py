"""The head witness: what a desk last saw of a journal, kept beside it, so that a lost tail
can be told later (issue 17 item 7).

A journal whose ``-wal`` was deleted before a checkpoint is a shorter chain that agrees with
itself: nothing inside it can show what is gone. The desk therefore writes, beside the
journal, ``<journal>-proctor-head``: the newest change-feed sequence it saw and the changes
just before it (sequence, kind and id of each), the journal's id, when it saw them, and when
it saw the ``-wal`` vanish. ``check`` compares a journal with that file: a change the witness
saw that is absent, or whose sequence now holds another change, is a lost tail
(``LostTail``). A journal ahead of the witness is fine. The file is written whole
(write, then rename) and is only a witness: an unreadable or foreign one is ignored.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections import deque
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from sqlalchemy import func, select

from proctor.core import errors
from proctor.core.kernel.safe_text import visible
from proctor.core.models import Frozen
from proctor.core.storage import schema as s
from proctor.core.storage.db import on_server

SUFFIX = "-proctor-head"
FORMAT = 1
WINDOW = 256  # the changes before the newest one that the witness names
NAMED = 12  # lost items named in the sentence


def witness_path(journal_path: str | os.PathLike[str]) -> Path:
    return Path(f"{os.fspath(journal_path)}{SUFFIX}")


def when(ts: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(ts))


class LostTail(Frozen):
    """Changes a desk saw in this journal that it no longer holds."""

    witness: str  # the witness file's path
    first_missing: int  # the first change-feed sequence lost (or now holding another change)
    last_seen: int  # the newest sequence the witness saw
    journal_latest: int  # the newest sequence the journal holds now
    seen_at: float  # when the witness saw ``last_seen``
    replaced: bool  # later writes took some of the lost sequences
    wal_lost_at: float | None = None  # when a desk saw the -wal vanish
    lost: list[str] = []  # noqa: RUF012 - the lost items, "approval apr_…" (NAMED at most)

    @property
    def sentence(self) -> str:
        span = (
            f"change {self.first_missing}"
            if self.first_missing == self.last_seen
            else f"changes {self.first_missing}..{self.last_seen}"
        )
        items = f" ({', '.join(visible(x, breaks=True) for x in self.lost)})" if self.lost else ""
        why = (
            f"its -wal was deleted while a desk had it open (seen at {when(self.wal_lost_at)})"
            if self.wal_lost_at is not None
            else "its -wal was lost or an older copy of the journal was put in its place"
        )
        replaced = "; later writes now hold some of those sequence numbers" if self.replaced else ""
        return (
            f"the journal is missing {span}{items} that were seen at "
            f"{when(self.seen_at)}: {why}{replaced}"
        )

    @property
    def hint(self) -> str:
        return (
            f"Those changes (acknowledged requests among them) are not in the journal. "
            f"Restore it from a backup taken after {when(self.seen_at)} if there is one "
            f"and tell the agents' owners. If you put an older copy there on purpose, "
            f"delete {self.witness} to accept it."
        )


def load(path: Path) -> dict[str, Any] | None:
    """The witness at ``path``, or None (missing, unreadable, not a witness)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("proctor_head_witness") != FORMAT:
        return None
    try:
        int(data["change_seq"]), float(data["seen_at"])
        recent = [(int(q), str(k), str(i)) for q, k, i, *_ in data.get("recent", [])]
    except (KeyError, TypeError, ValueError):
        return None
    data["recent"] = recent
    return data


def write(path: Path, data: dict[str, Any]) -> bool:
    """Write the witness whole (a temporary file renamed over it). False if it could not be
    written (a read-only folder, a full disk): it is only a witness."""
    tmp = path.with_name(f"{path.name}.tmp-{os.getpid()}")
    try:
        fd = os.open(tmp, os.O_CREAT | os.O_TRUNC | os.O_WRONLY, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, separators=(",", ":"))
        os.replace(tmp, path)
        return True
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()
        return False


def _describe(kind: str, entity_id: str) -> str:
    return f"{kind.replace('_', ' ')} {entity_id}"


def compare(conn: Any, data: dict[str, Any], path: Path) -> LostTail | None:
    """The tail of ``data`` (a loaded witness) that the journal on ``conn`` lacks, if any."""
    from proctor.core.decisions.signing import journal_id_in

    journal_id = journal_id_in(conn)
    if data.get("journal_id") and journal_id and data["journal_id"] != journal_id:
        return None  # another journal now lives at this path
    latest = int(conn.execute(select(func.max(s.changes.c.seq))).scalar() or 0)
    seen = int(data["change_seq"])
    recent = sorted(data["recent"])
    c = s.changes.c
    held = {
        row.seq: (row.entity_kind, row.entity_id)
        for row in conn.execute(
            select(c.seq, c.entity_kind, c.entity_id).where(c.seq.in_([q for q, _k, _i in recent]))
        )
    }
    bad = [(q, k, i) for q, k, i in recent if held.get(q) != (k, i)]
    if not bad and seen <= latest:
        return None
    first = bad[0][0] if bad else latest + 1
    lost: list[str] = []
    for _q, kind, entity_id in bad:
        name = _describe(kind, entity_id)
        if kind not in ("audit", "event") and name not in lost and len(lost) < NAMED:
            lost.append(name)
    return LostTail(
        witness=str(path),
        first_missing=first,
        last_seen=max(seen, first),
        journal_latest=latest,
        seen_at=float(data["seen_at"]),
        replaced=any(q in held for q, _k, _i in bad),
        wal_lost_at=data.get("wal_lost_at"),
        lost=lost,
    )


def check(journal: Any) -> LostTail | None:
    """Compare ``journal`` with its witness file; never raises (None when there is no
    witness, it cannot be read, or the journal holds everything it saw)."""
    if on_server(journal.path):
        return None
    path = witness_path(journal.path)
    data = load(path)
    if data is None:
        return None
    try:
        return journal.read(lambda conn: compare(conn, data, path))
    except (errors.ProctorError, OSError, ValueError):
        return None


class HeadWitness:
    """What one desk saw, to be written beside the journal. ``observe`` takes the change
    feed's rows as they are read; ``snapshot`` is the file's content (taken on the thread
    that observes), ``write`` writes it (any thread)."""

    def __init__(self, journal_path: str | os.PathLike[str]) -> None:
        # a server journal has no file to lose a -wal of, and no folder to write beside
        self.path: Path | None = None if on_server(journal_path) else witness_path(journal_path)
        self.journal_id: str | None = None
        self.change_seq = 0
        self.seen_at: float | None = None
        self.wal_lost_at: float | None = None
        self.recent: deque[tuple[int, str, str]] = deque(maxlen=WINDOW)
        self.dirty = False

    def observe(self, changes: Iterable[Any]) -> None:
        for ch in changes:
            if ch.seq > self.change_seq:
                self.recent.append((ch.seq, ch.entity_kind, ch.entity_id))
                self.change_seq = ch.seq
                self.seen_at = time.time()
                self.dirty = True

    def lost_wal(self) -> None:
        self.wal_lost_at = time.time()
        self.dirty = True

    def snapshot(self) -> dict[str, Any] | None:
        """The file's content, or None while nothing was seen."""
        if self.seen_at is None:
            return None
        self.dirty = False
        return {
            "proctor_head_witness": FORMAT,
            "journal_id": self.journal_id,
            "change_seq": self.change_seq,
            "seen_at": self.seen_at,
            "wal_lost_at": self.wal_lost_at,
            "recent": [list(r) for r in self.recent],
        }

    def write(self, data: dict[str, Any]) -> bool:
        return False if self.path is None else write(self.path, data)


def journal_id(journal: Any) -> str | None:
    from proctor.core.decisions.signing import journal_id_in

    return journal.read(journal_id_in)
