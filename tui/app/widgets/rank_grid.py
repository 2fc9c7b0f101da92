"""The grid of rank panels: columns follow the pane's size; panels go compact when many."""

from __future__ import annotations

import math
from collections.abc import Sequence

from textual.containers import Grid, VerticalScroll
from textual.content import Content
from textual.widgets import Static

from tui.app.widgets.node_rows import node_title
from tui.app.widgets.rank_panel import RankCard, RankPanel
from tui.engine.startup.snapshot import NodeSummary

FULL_WIDTH = 34
FULL_HEIGHT = 6
COMPACT_WIDTH = 28
COMPACT_HEIGHT = 2


def grid_shape(
    count: int, width: int, height: int, groups: int = 1, largest: int | None = None
) -> tuple[int, bool]:
    """Columns and whether panels must be compact so that ``count`` ranks fit the area.

    With several groups (nodes) of at most ``largest`` ranks, columns are balanced for one
    group, so that every node's ranks fill their rows evenly."""
    if count <= 0:
        return 1, False
    usable = max(1, height - 2 * (groups - 1) if groups > 1 else height)
    group = largest or count
    columns = _balanced(group, max(1, width // FULL_WIDTH))
    rows = math.ceil(count / columns) if groups == 1 else groups * math.ceil(group / columns)
    if rows * FULL_HEIGHT <= usable:
        return columns, False
    return _balanced(group, max(1, width // COMPACT_WIDTH)), True


def _balanced(count: int, most: int) -> int:
    """As few columns as keep the same number of rows, so rows are evenly filled."""
    columns = min(count, most)
    rows = math.ceil(count / columns)
    return math.ceil(count / rows)


class RankGrid(VerticalScroll):
    """Every rank's panel, one grid per node when the server spans several."""

    DEFAULT_CSS = """
    RankGrid {
        height: 1fr;
        scrollbar-size-vertical: 1;
        & > Grid { height: auto; grid-gutter: 0 1; grid-rows: auto; }
        & > .node-title { color: $text-muted; text-style: bold; height: 1; }
        & > .waiting { color: $text-muted; padding: 1 2; }
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._layout: tuple[tuple[int, tuple[str, ...]], ...] = ()
        self._panels: dict[str, RankPanel] = {}
        self._titles: dict[int, Static] = {}
        self._compact = False

    def on_mount(self) -> None:
        self.mount(Static(Content("Waiting for the log's first line…"), classes="waiting"))

    def show(
        self, cards: Sequence[RankCard], nodes: Sequence[NodeSummary] = (), now: float = 0.0
    ) -> None:
        """Apply the latest cards, rebuilding the panels only when the set of ranks changed;
        ``nodes`` fills the row above each node's ranks when the server spans several (a node
        whose ranks have not logged yet still gets its row)."""
        layout = _group(cards, nodes)
        if layout != self._layout:
            self._rebuild(layout)
        for card in cards:
            panel = self._panels.get(card.rank.tag)
            if panel is not None:
                panel.show(card)
        summaries = {summary.node: summary for summary in nodes}
        for node, title in self._titles.items():
            content = node_title(node, summaries.get(node), now)
            shown = title.visual
            if not (isinstance(shown, Content) and shown.is_same(content)):
                title.update(content, layout=False)

    def panels(self) -> list[RankPanel]:
        return list(self._panels.values())

    def on_resize(self) -> None:
        self._reshape()

    def _rebuild(self, layout: tuple[tuple[int, tuple[str, ...]], ...]) -> None:
        self._layout = layout
        self.remove_children()
        if not layout:
            self.on_mount()
        self._panels = {tag: RankPanel(tag) for _, tags in layout for tag in tags}
        several = len(layout) > 1
        self._titles = {}
        for node, tags in layout:
            if several:
                self._titles[node] = Static(node_title(node, None, 0.0), classes="node-title")
                self.mount(self._titles[node])
            if tags:
                self.mount(Grid(*(self._panels[tag] for tag in tags)))
        self._reshape()

    def _reshape(self) -> None:
        if not self._panels:
            return
        size = self.scrollable_content_region.size
        largest = max(len(tags) for _, tags in self._layout)
        groups = len(self._layout)
        columns, compact = grid_shape(len(self._panels), size.width, size.height, groups, largest)
        self._compact = compact
        for grid in self.query_children(Grid):
            grid.styles.grid_size_columns = columns
        for panel in self._panels.values():
            if panel.has_class("-compact") != compact:
                panel.set_class(compact, "-compact")
                panel.redraw()


def _group(
    cards: Sequence[RankCard], summaries: Sequence[NodeSummary] = ()
) -> tuple[tuple[int, tuple[str, ...]], ...]:
    nodes: dict[int, list[str]] = {summary.node: [] for summary in summaries}
    for card in cards:
        nodes.setdefault(card.rank.node, []).append(card.rank.tag)
    return tuple((node, tuple(tags)) for node, tags in sorted(nodes.items()))
