"""The comparison view (``c``): runs of a profile or of a model side by side, with deltas.

One column per run, oldest first; rows are the start-up time, the accept length, and output
tok/s and median TTFT at every concurrency level any run was benchmarked at. Each figure of a
run is compared with the baseline run's (``▲`` better, ``▼`` worse, by the figure's direction).
``←``/``→`` choose a run, ``b`` (or Enter) makes it the baseline, ``m`` switches between the
profile's runs and the model's.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
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
MORE_TRIALS = (
    "Some differences are within noise or from one trial: benchmark again with more trials "
    "(trials = 3 in the profile's [bench], or bringup bench --trials 3) to settle them."
)
_MARK = {Change.BETTER: (" ▲", "$success"), Change.WORSE: (" ▼", "$error")}

Loader = Callable[[Path | None, Scope], list[RunColumn]]


def _fit(text: str, width: int) -> str:
    text = printable(text)
    return text if len(text) <= width else text[: width - 1] + "…"


def _cell(cell: Cell) -> Content:
    if cell.delta == "baseline":
        body = Content.assemble(cell.text, (" base", "$text-muted"))
    elif cell.delta:
        mark, style = _MARK.get(cell.judgement, ("", ""))
        body = Content.assemble(cell.text, " ", (cell.delta + mark, style or "$text-muted"))
        if cell.interval:
            body = Content.assemble(body, (f" {cell.interval}", "$text-muted"))
    else:
        body = Content(cell.text)
    return body.pad_right(max(0, CELL_WIDTH - body.cell_length))


def compare_table(
    columns: Sequence[RunColumn], rows: Sequence[CompareRow], baseline: int, cursor: int
) -> Content:
    """The runs as aligned text: a header of run labels, the figures, then each run's launch."""
    header = [Content(" " * NAME_WIDTH)]
    for index, column in enumerate(columns):
        label = _fit(column.label + (" ★" if index == baseline else ""), CELL_WIDTH - 1)
        style = "reverse bold" if index == cursor else "bold"
        header.append(Content.styled(f"{label:<{CELL_WIDTH - 1}}", style) + Content(" "))
    lines = [Content("").join(header)]
    for row in rows:
        name = Content(f"{_fit(row.name, NAME_WIDTH - 1):<{NAME_WIDTH}}")
        lines.append(name + Content("").join(_cell(cell) for cell in row.cells))
    lines.append(Content(""))
    lines.extend(
        Content.assemble((f"{printable(c.label)}  ", "bold"), (printable(c.launch), "$text-muted"))
        for c in columns
    )
    return Content("\n").join(lines)


class CompareScreen(Screen[None]):
    """Runs side by side, read from the history file."""

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
        rows = compare_rows(self.columns, self.baseline)
        table = compare_table(self.columns, rows, self.baseline, self.cursor)
        empty = Content("No recorded runs here yet: runs are kept when the server becomes ready.")
        self.query_one("#compare-table", Static).update(table if self.columns else empty)
        note = f"✖ {printable(self.problem)}" if self.problem else (
            "▲ better, ▼ worse than the baseline (Welch's t-test, 95 %) · ←/→ choose a run · "
            "b sets the baseline"
        )  # fmt: skip
        if not self.problem and inconclusive(rows):
            note += f"\n{MORE_TRIALS}"
        self.query_one("#compare-note", Static).update(Content(note))

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
