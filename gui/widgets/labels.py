"""Labels that never interpret text as markup."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget


class PlainLabel(QLabel):
    """A QLabel for data: plain text, with control and invisible format characters (ANSI
    escapes, bidi overrides) shown as escapes (``fmt.visible``) instead of obeyed."""

    def setText(self, text: str) -> None:
        from .fmt import visible

        super().setText(visible(text))


def plain_label(
    text: str = "", parent: QWidget | None = None, *, name: str = "", selectable: bool = True
) -> QLabel:
    label = PlainLabel(parent)
    label.setText(text)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setWordWrap(True)
    if name:
        label.setObjectName(name)
    if selectable:
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


def reserve_lines(label: QLabel, lines: int = 1) -> QLabel:
    """``label`` always takes the height of ``lines`` lines, shown or hidden, empty or not,
    so what sits below it never moves when it appears, changes or goes (issue 32: a form's
    "3 problems to fix" moved the buttons under the pointer). One line does not wrap (the
    rest is cut; the host puts the whole text in the tooltip); the width never grows."""
    metrics = label.fontMetrics()
    label.setWordWrap(lines > 1)
    label.setFixedHeight(lines * metrics.lineSpacing() + 2)
    policy = label.sizePolicy()
    policy.setHorizontalPolicy(QSizePolicy.Policy.Ignored)
    policy.setRetainSizeWhenHidden(True)
    label.setSizePolicy(policy)
    return label


def section(title: str, parent: QWidget) -> QLabel:
    label = plain_label(title, parent, name="SectionLabel", selectable=False)
    label.setWordWrap(False)
    return label


class PlainTip(str):
    """Tooltip markup made by ``plain_tip`` (safe to show as it is, never escaped twice)."""


def plain_tip(text: str, limit: int = 4000) -> str:
    """A tooltip that shows ``text`` literally. Qt renders a tooltip as rich text whenever
    ``Qt.mightBeRichText`` says so, so agent text is escaped and wrapped, never interpreted."""
    import html

    from .fmt import visible

    if isinstance(text, PlainTip):
        return text
    text = visible(text if len(text) <= limit else text[: limit - 1] + "…")
    return PlainTip(f"<p style='white-space:pre-wrap'>{html.escape(text)}</p>") if text else ""
