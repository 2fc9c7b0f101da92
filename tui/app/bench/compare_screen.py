"""The comparison view (``c``): runs of a profile or of a model side by side, with deltas.

One column per run, oldest first; rows are the start-up time, the accept length, and output
tok/s and median TTFT at every concurrency level any run was benchmarked at. Each figure of a
run is compared with the baseline run's (``▲`` better, ``▼`` worse, by the figure's direction).
``←``/``→`` choose a run, ``b`` (or Enter) makes it the baseline, ``m`` switches between the
profile's runs and the model's, ``t`` goes back and runs more trials of the server's levels,
tested against the baseline. The table fits the screen's width: runs that do not fit are left
out (the cursor's and the baseline's are kept, the note counts the others), and on a narrow
screen the cells drop their words (``≈ ±1.2%`` for within noise) rather than wrap.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import ScrollableContainer
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Footer, Static

from tui.engine.bench.run_compare import (
    Cell,
    Change,
    CompareRow,
    RunColumn,
    compare_rows,
    inconclusive,
)
from tui.engine.logs.sanitize import printable
from tui.io.store.run_records import Scope, load_columns
from tui.io.store.run_store import StoreError

NAME_WIDTH = 16
CELL_WIDTH = 30
SHORT_CELL_WIDTH = 17
MORE_TRIALS = (
    "Some differences are within noise or from one trial: t runs more trials of this server's "
    "levels and tests them against the baseline (or trials = 3 in the profile's [bench])."
)
SHORT_MORE_TRIALS = "Some differences are inconclusive: t runs more trials against the baseline."
_MARK = {Change.BETTER: (" ▲", "$success"), Change.WORSE: (" ▼", "$error")}

Loader = Callable[[Path | None, Scope], list[RunColumn]]


def _fit(text: str, width: int) -> str:
    text = printable(text)
    return text if len(text) <= width else text[: width - 1] + "…"


def _cell(cell: Cell, width: int = CELL_WIDTH, short: bool = False) -> Content:
    """A figure with its delta; ``short`` keeps the mark and drops the words and the interval
    (``within noise ±1.2%`` reads ``≈ ±1.2%``)."""
    if cell.delta == "baseline":
        body = Content.assemble(cell.text, (" base", "$text-muted"))
    elif cell.delta:
        mark, style = _MARK.get(cell.judgement, ("", ""))
        change = cell.delta
        if short:
            change = change.replace("within noise ", "≈").replace(" (1 trial)", "?")
        body = Content.assemble(cell.text, " ", (change + mark, style or "$text-muted"))
        if cell.interval and not short:
            body = Content.assemble(body, (f" {cell.interval}", "$text-muted"))
    else:
        body = Content(cell.text)
    if body.cell_length > width - 1:
        body = body.truncate(width - 1, ellipsis=True)
    return body.pad_right(max(0, width - body.cell_length))


def shown_runs(count: int, baseline: int, cursor: int, room: int) -> list[int]:
    """The runs that fit ``room`` columns: the cursor's, the baseline's, then the cursor's
    nearest neighbours, in their order."""
    if count <= room:
        return list(range(count))
    picked = [cursor] + ([baseline] if room > 1 and baseline != cursor else [])
    for distance in range(1, count):
        for index in (cursor - distance, cursor + distance):
            if len(picked) < room and 0 <= index < count and index not in picked:
                picked.append(index)
    return sorted(picked)


@dataclass(frozen=True, slots=True)
class Layout:
    """How the comparison fits the screen: which runs, how wide a cell, short cells or not."""

    runs: tuple[int, ...]
    cell_width: int
    short: bool

    @classmethod
    def fit(cls, count: int, baseline: int, cursor: int, width: int) -> Layout:
        """Full cells when the baseline and the chosen run fit side by side, else short ones."""
        room = max((width - NAME_WIDTH) // CELL_WIDTH, 0)
        short = room < min(count, 2)
        cell = SHORT_CELL_WIDTH if short else CELL_WIDTH
        room = max((width - NAME_WIDTH) // cell, 1)
        return cls(tuple(shown_runs(count, baseline, cursor, room)), cell, short)


def compare_table(
    columns: Sequence[RunColumn], rows: Sequence[CompareRow], baseline: int, cursor: int,
    width: int = 1000,
) -> Content:  # fmt: skip
    """The runs as aligned text fitted to ``width``: a header of run labels, the figures, then
    each shown run's launch; runs that do not fit are left out (the note says how many)."""
    layout = Layout.fit(len(columns), baseline, cursor, width)
    cell = layout.cell_width
    header = [Content(" " * NAME_WIDTH)]
    for index in layout.runs:
        column = columns[index]
        label = _fit(column.label + (" ★" if index == baseline else ""), cell - 1)
        style = "reverse bold" if index == cursor else "bold"
        header.append(Content.styled(f"{label:<{cell - 1}}", style) + Content(" "))
    lines = [Content("").join(header)]
    for row in rows:
        name = Content(f"{_fit(row.name, NAME_WIDTH - 1):<{NAME_WIDTH}}")
        cells = (_cell(row.cells[index], cell, layout.short) for index in layout.runs)
        lines.append(name + Content("").join(cells))
    lines.append(Content(""))
    for index in layout.runs:
        c = columns[index]
        line = Content.assemble(
            (f"{printable(c.label)}  ", "bold"), (printable(c.launch), "$text-muted")
        )
        lines.append(line.truncate(width, ellipsis=True) if line.cell_length > width else line)
    return Content("\n").join(lines)


class CompareScreen(Screen[int | None]):
    """Runs side by side, read from the history file; dismissed with the baseline's run id
    when ``t`` asks for more trials against it."""

    DEFAULT_CSS = """
    CompareScreen {
        layout: vertical;
        & > #compare-title { height: auto; padding: 0 1; background: $panel; }
        & > #compare-scroll { height: 1fr; padding: 1 1; }
        & #compare-table { width: auto; }
        & > #compare-note { height: auto; padding: 0 1; color: $text-muted; }
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,c", "close", "Close", id="compare-close"),
        Binding("left", "move(-1)", "Previous run", id="compare-previous"),
        Binding("right", "move(1)", "Next run", id="compare-next"),
        Binding("b,enter", "baseline", "Set baseline", id="compare-baseline"),
        Binding("m", "scope", "Profile / model", id="compare-scope"),
        Binding("t", "more_trials", "More trials", id="compare-more-trials"),
    ]

    def __init__(
        self, scopes: Sequence[Scope], data_dir: Path | None, loader: Loader | None = None
    ) -> None:
        super().__init__()
        self.scopes = list(scopes)
        self.scope_index = 0
        self.data_dir = data_dir
        self.loader: Loader = loader or load_columns
        self.columns: list[RunColumn] = []
        self.baseline = 0
        self.cursor = 0
        self.loaded = False
        self.problem = ""

    def compose(self) -> ComposeResult:
        yield Static(Content(""), id="compare-title")
        with ScrollableContainer(id="compare-scroll"):
            yield Static(Content(""), id="compare-table")
        yield Static(Content(""), id="compare-note")
        yield Footer()

    def on_mount(self) -> None:
        self.reload()

    @property
    def scope(self) -> Scope | None:
        return self.scopes[self.scope_index] if self.scopes else None

    def reload(self) -> None:
        self.loaded = False
        self.run_worker(self._load(), group="compare", exclusive=True, exit_on_error=False)

    async def _load(self) -> None:
        scope = self.scope
        columns: list[RunColumn] = []
        self.problem = ""
        if scope is not None:
            try:
                columns = await asyncio.to_thread(self.loader, self.data_dir, scope)
            except StoreError as exc:
                self.problem = str(exc)
        self.columns = columns
        self.baseline = 0
        self.cursor = max(len(columns) - 1, 0)
        self.loaded = True
        self.redraw()

    def redraw(self) -> None:
        scope = self.scope
        what = scope.label if scope is not None else "no profile or model known yet"
        count = len(self.columns)
        parts = [f"Runs of {what}", f"{count} run{'s' * (count != 1)}"]
        if self.columns:
            parts.append(f"baseline {self.columns[self.baseline].label}")
        self.query_one("#compare-title", Static).update(Content(" · ".join(parts)))
        width = self._width()
        rows = compare_rows(self.columns, self.baseline)
        table = compare_table(self.columns, rows, self.baseline, self.cursor, width)
        empty = Content("No recorded runs here yet: runs are kept when the server becomes ready.")
        self.query_one("#compare-table", Static).update(table if self.columns else empty)
        self.query_one("#compare-note", Static).update(Content(self._note(rows, width)))

    def _note(self, rows: Sequence[CompareRow], width: int) -> str:
        if self.problem:
            return f"✖ {printable(self.problem)}"
        layout = Layout.fit(len(self.columns), self.baseline, self.cursor, width)
        narrow = width < 120
        lines = [
            "▲ better ▼ worse (Welch's t, 95 %) · ←/→ run · b base"
            if narrow
            else "▲ better, ▼ worse than the baseline (Welch's t-test, 95 %) · ←/→ choose a "
            "run · b sets the baseline"
        ]
        hidden = len(self.columns) - len(layout.runs)
        if hidden:
            lines[0] += f" · {hidden} run{'s' * (hidden != 1)} hidden"
        if layout.short:
            lines[0] += " · ≈ within noise, ? one trial"
        if inconclusive(rows):
            lines.append(SHORT_MORE_TRIALS if narrow else MORE_TRIALS)
        return "\n".join(lines)

    def _width(self) -> int:
        """Cells a line of the table has (the screen's width less the padding)."""
        return max((self.size.width or self.app.size.width) - 2, NAME_WIDTH + SHORT_CELL_WIDTH)

    def on_resize(self) -> None:
        if self.loaded:
            self.redraw()

    def action_more_trials(self) -> None:
        """Back to the monitor, which runs more trials and tests them against the baseline."""
        baseline = self.columns[self.baseline].run_id if self.columns else None
        self.dismiss(baseline)

    def action_close(self) -> None:
        self.dismiss(None)

    def action_move(self, step: int) -> None:
        if self.columns:
            self.cursor = min(max(self.cursor + step, 0), len(self.columns) - 1)
            self.redraw()

    def action_baseline(self) -> None:
        if self.columns:
            self.baseline = self.cursor
            self.redraw()

    def action_scope(self) -> None:
        if len(self.scopes) > 1:
            self.scope_index = (self.scope_index + 1) % len(self.scopes)
            self.reload()
