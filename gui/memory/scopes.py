"""The scope tree: All memory → project / space / user → each key, with entry counts,
pending conflicts and estimated tokens against the per-scope budget."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QItemSelectionModel, QModelIndex, Qt, Signal, Slot
from PySide6.QtGui import QBrush, QColor, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTreeView, QWidget

from proctor.core.memory.views import CHARS_PER_TOKEN, ScopeUsage, estimate_tokens
from proctor.core.models import MemoryScope

from ..infra.i18n import QT_TR_NOOP, tr
from ..infra.theme import over_budget_color
from ..widgets import fmt
from ..widgets.labels import plain_tip

SCOPE_ROLE = Qt.ItemDataRole.UserRole + 1
HEADERS = [QT_TR_NOOP("Scope"), "#", QT_TR_NOOP("Tokens")]
TITLES = {MemoryScope.PROJECT: "Projects", MemoryScope.SPACE: "Spaces", MemoryScope.USER: "Users"}


def key_of(scope: MemoryScope | None, scope_key: str | None) -> str:
    """The tree's id for a scope choice: "" (all), "project", "project\x1fwebshop"."""
    if scope is None:
        return ""
    return scope.value if scope_key is None else f"{scope.value}\x1f{scope_key}"


def parse_key(key: str) -> tuple[MemoryScope | None, str | None]:
    if not key:
        return None, None
    scope, _, rest = key.partition("\x1f")
    return MemoryScope(scope), (rest if _ else None)


def compact(n: int) -> str:
    return f"{n / 1000:.1f}k" if n >= 1000 else str(n)


def tokens_text(tokens: int, limit: int | None) -> str:
    return f"{compact(tokens)} / {compact(limit)}" if limit else compact(tokens)


def _row(
    text: str,
    key: str,
    entries: int,
    conflicts: int,
    tokens: int,
    limit: int | None,
    tip: str,
    over: QColor,
) -> list[QStandardItem]:
    name = QStandardItem(f"{text}  ⚠{conflicts}" if conflicts else text)
    name.setAccessibleText(f"{text}: {entries} entries, {conflicts} pending conflicts")
    count = QStandardItem(str(entries))
    size = QStandardItem(tokens_text(tokens, limit))
    for item in (name, count, size):
        item.setEditable(False)
        item.setData(key, SCOPE_ROLE)
        item.setToolTip(plain_tip(tip))
    count.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    size.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    if limit and tokens > limit:
        size.setForeground(QBrush(over))
        size.setAccessibleText(f"{tokens} tokens, over the budget of {limit}")
    return [name, count, size]


def usage_tip(u: ScopeUsage, limit: int) -> str:
    over = (
        " — " + tr("over the budget by {count}").format(count=f"{u.tokens - limit:,}")
        if u.tokens > limit
        else ""
    )
    return tr(
        "{scope} {key}\n{entries} entries ({pinned} pinned, {removed} removed), "
        "{conflicts} pending conflicts\nabout {tokens} tokens of {limit}{over}\n"
        "(estimated as characters / {ratio}: {chars} characters)"
    ).format(
        scope=u.scope.value,
        key=u.scope_key,
        entries=u.entries,
        pinned=u.pinned,
        removed=u.removed,
        conflicts=u.conflicts,
        tokens=f"{u.tokens:,}",
        limit=f"{limit:,}",
        over=over,
        ratio=CHARS_PER_TOKEN,
        chars=f"{u.chars:,}",
    )


class ScopeTree(QTreeView):
    """Signals:
    scope_chosen(object, object): the MemoryScope (or None for all) and scope key (or
        None for every key of that scope) the operator chose.
    """

    scope_chosen = Signal(object, object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model_ = QStandardItemModel(0, len(HEADERS), self)
        self.model_.setHorizontalHeaderLabels([tr(h) for h in HEADERS])
        self.setModel(self.model_)
        self.setAccessibleName(tr("Memory scopes"))
        self.setUniformRowHeights(True)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        header = self.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.resizeSection(1, 36)
        header.resizeSection(2, 76)
        self.setIndentation(12)
        self.setMinimumWidth(240)
        self.chosen = ""
        self.usages: list[ScopeUsage] = []
        self.limit = 0
        self.selectionModel().currentChanged.connect(self._on_current)
        self.set_usage([], 0)

    def set_usage(self, usages: list[ScopeUsage], limit: int) -> None:
        """Rebuild the tree from ``usages``; keeps the chosen scope selected."""
        self.usages, self.limit = list(usages), limit
        over = over_budget_color(self.palette())
        self.model_.removeRows(0, self.model_.rowCount())
        total = sum(u.entries for u in usages)
        root = _row(
            "All memory",
            "",
            total,
            sum(u.conflicts for u in usages),
            estimate_tokens(sum(u.chars for u in usages)),
            None,
            f"{total} entries in {len(usages)} scopes",
            over,
        )
        self.model_.appendRow(root)
        for scope in MemoryScope:
            members = [u for u in usages if u.scope == scope]
            if not members:
                continue
            group = _row(
                TITLES[scope],
                key_of(scope, None),
                sum(u.entries for u in members),
                sum(u.conflicts for u in members),
                estimate_tokens(sum(u.chars for u in members)),
                None,
                f"every {scope.value} scope",
                over,
            )
            for u in members:
                group[0].appendRow(
                    _row(
                        fmt.bounded(u.scope_key, 80),
                        key_of(scope, u.scope_key),
                        u.entries,
                        u.conflicts,
                        u.tokens,
                        limit,
                        usage_tip(u, limit),
                        over,
                    )
                )
            root[0].appendRow(group)
        self.expandAll()
        self._select(self.chosen)

    def _select(self, key: str) -> None:
        index = self._find(key) or self.model_.index(0, 0)
        self.selectionModel().blockSignals(True)
        self.selectionModel().setCurrentIndex(
            index,
            QItemSelectionModel.SelectionFlag.ClearAndSelect
            | QItemSelectionModel.SelectionFlag.Rows,
        )
        self.selectionModel().blockSignals(False)

    def _find(self, key: str) -> QModelIndex | None:
        matches = self.model_.match(
            self.model_.index(0, 0),
            SCOPE_ROLE,
            key,
            1,
            Qt.MatchFlag.MatchExactly | Qt.MatchFlag.MatchRecursive,
        )
        return matches[0] if matches else None

    def choose(self, scope: MemoryScope | None, scope_key: str | None) -> None:
        """Select a scope from code (tests, links) and announce it."""
        index = self._find(key_of(scope, scope_key))
        if index is not None:
            self.setCurrentIndex(index)

    def changeEvent(self, event: QEvent) -> None:
        """A theme change rebuilds the rows with the new palette's colours."""
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange and hasattr(self, "usages"):
            self.set_usage(self.usages, self.limit)

    def usage_of(self, scope: MemoryScope, scope_key: str) -> ScopeUsage | None:
        return next((u for u in self.usages if u.scope == scope and u.scope_key == scope_key), None)

    @Slot(QModelIndex, QModelIndex)
    def _on_current(self, current: QModelIndex, _previous: QModelIndex) -> None:
        key = str(current.data(SCOPE_ROLE) or "") if current.isValid() else ""
        if key != self.chosen:
            self.chosen = key
            self.scope_chosen.emit(*parse_key(key))
