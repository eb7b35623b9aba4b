"""What the risk lens reads in an approval's action (``proctor.core.lens``), in two reserved
lines above the decision buttons: the most severe facts (or, first and marked, that the action
reads as a stronger class than the agent declared), then what is new against the approved
precedent. Every fact, with the field it comes from, is in the tooltip. Agent text is shown
bounded and escaped; the reading is made with the entity, on the task runner."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QWidget

from proctor.core.lens import Lens

from ..infra.i18n import tr
from ..widgets import fmt
from ..widgets.labels import plain_label, plain_tip, reserve_lines

TIP_FACTS = 30


def lens_text(lens: Lens | None) -> tuple[str, str]:
    """(what it reads as, what is new against the precedent): one line each."""
    if lens is None:
        return "", ""
    reading = lens.reading
    detected = lens.detected()
    if detected is not None:
        first = tr("⚠ Reads as {detected}, declared {declared}: {why}").format(
            declared=lens.declared_class.replace("_", " "),
            detected=detected[0].replace("_", " "),
            why=detected[1],
        )
    elif reading.facts:
        first = tr("Reads as: {summary}").format(summary=reading.summary(3))
    elif reading.unread:
        first = tr("Reads as: {unread}").format(unread="; ".join(reading.unread))
    else:
        first = tr("Reads as: nothing the lens can read (no command, SQL, URL, path or diff)")
    return fmt.bounded(first, 400), fmt.bounded(lens.new_line(), 400)


def lens_tip(lens: Lens | None) -> str:
    if lens is None:
        return ""
    facts = lens.reading.ranked()
    lines = [
        f"• {f.text}"
        + (f"  [{f.implies.replace('_', ' ')}]" if f.implies else "")
        + f"  ({f.field})"
        for f in facts[:TIP_FACTS]
    ]
    if len(facts) > TIP_FACTS:
        lines.append(tr("… and {n} more").format(n=len(facts) - TIP_FACTS))
    lines += [f"? {u}" for u in lens.reading.unread]
    return plain_tip("\n".join(lines))


class LensLine:
    """The two lines and their tooltip; ``set_lens(None)`` while the entity loads."""

    def __init__(self, parent: QWidget) -> None:
        self.read: QLabel = reserve_lines(plain_label(parent=parent), 1)
        self.read.setAccessibleName(tr("What the action reads as"))
        self.new: QLabel = reserve_lines(plain_label(parent=parent, name="Muted"), 1)
        self.new.setAccessibleName(tr("What is new against the approved precedent"))

    def text(self) -> str:
        return f"{self.read.text()}\n{self.new.text()}"

    def set_lens(self, lens: Lens | None) -> None:
        first, second = lens_text(lens)
        tip = lens_tip(lens)
        for label, text in ((self.read, first), (self.new, second)):
            label.setText(text)
            label.setToolTip(tip)
