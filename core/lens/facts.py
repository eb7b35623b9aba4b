"""What the lens returns: facts read from an action, with the span of text each comes from,
and the strongest safety class they imply."""

from __future__ import annotations

from dataclasses import dataclass

from proctor.core.kernel.safe_text import visible
from proctor.core.models import SafetyClass

# weakest to strongest
ORDER: tuple[str, ...] = (
    SafetyClass.SAFE_READ.value,
    SafetyClass.IDEMPOTENT_WRITE.value,
    SafetyClass.UNSAFE_WRITE.value,
    SafetyClass.EXTERNAL_SIDE_EFFECT.value,
    SafetyClass.FINANCIAL.value,
    SafetyClass.DESTRUCTIVE.value,
)
# every code a fact may carry (docs/lens.md's table); rule conditions may name these
CODES: frozenset[str] = frozenset(
    {
        "sql.unbounded_write", "sql.drop", "sql.truncate", "sql.alter", "sql.write",
        "sql.many_statements",
        "shell.commands", "shell.sudo", "shell.recursive_delete", "shell.forced_delete",
        "shell.pipe_to_shell", "shell.env_hijack", "shell.system_redirect", "shell.background",
        "shell.chained", "shell.publish", "shell.discard",
        "http.write_method", "http.production", "http.payment", "http.large_body",
        "path.outside_cwd", "path.system", "path.wildcard",
        "diff.files", "diff.deleted_file",
    }
)  # fmt: skip
SNIPPET = 60  # characters of agent text quoted in a sentence


def rank(safety: str | None) -> int:
    """Position in ``ORDER`` (-1 for None or an unknown value)."""
    return ORDER.index(safety) if safety in ORDER else -1


def quoted(text: str) -> str:
    """Agent text fit for a sentence: invisible characters as escapes, at most SNIPPET long."""
    shown = visible(text, breaks=True)
    return shown if len(shown) <= SNIPPET else shown[: SNIPPET - 1] + "…"


@dataclass(frozen=True)
class Fact:
    code: str  # stable dotted code, e.g. "sql.unbounded_write"
    text: str  # one plain sentence for a person
    field: str  # where in the action, e.g. "args.command"
    start: int  # span [start, end) in that field's string
    end: int
    implies: str | None  # the SafetyClass value this fact implies, or None


@dataclass(frozen=True)
class Reading:
    facts: tuple[Fact, ...]
    unread: tuple[str, ...]  # plain sentences: "could not read args.query as SQL"
    detected: str | None  # the strongest SafetyClass value any fact implies

    def ranked(self) -> list[Fact]:
        """The facts, most severe first (stable within one class)."""
        return sorted(self.facts, key=lambda f: -rank(f.implies))

    def summary(self, limit: int = 3) -> str:
        """One line: the most severe facts first, then "+N more"; the unread sentences when
        no fact was read; "" when there is nothing to say."""
        texts = [f.text for f in self.ranked()] or list(self.unread)
        shown = "; ".join(texts[: max(limit, 1)])
        rest = len(texts) - max(limit, 1)
        return f"{shown} (+{rest} more)" if rest > 0 else shown


def reading_of(facts: list[Fact], unread: list[str]) -> Reading:
    strongest = max((f.implies for f in facts), key=rank, default=None)
    return Reading(tuple(facts), tuple(unread), strongest if rank(strongest) >= 0 else None)


def stronger_than_declared(declared: str, reading: Reading) -> str | None:
    """A sentence when the reading's detected class is stronger than the declared one."""
    if reading.detected is None or rank(reading.detected) <= rank(declared):
        return None
    worst = reading.ranked()[0]
    return f"declared {quoted(str(declared))}, but the lens reads {reading.detected}: {worst.text}"
