"""The benchmark pane: progress per level, then the results table and tok/s per level.

Failed requests are counted in the progress line and the table and their errors are listed,
never hidden. Accept lengths are shown side by side: the client's, the server's (differenced
over the level, or its lifetime average, labelled so) and the mean the log's decode lines gave
during the level. Token counts are the server's, with the client's beside them when they differ.

Every text is built as Content, so nothing a server sent is read as markup.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Sparkline, Static

from tui.app.bench.bench_state import BenchPhase, BenchState, LevelProgress
from tui.app.widgets.cell_format import bar
from tui.engine.bench.bench_view import accept_view, throughputs, token_view
from tui.engine.logs.sanitize import printable

Segment = str | tuple[str, str]
_PHASE_TEXT = {
    BenchPhase.IDLE: ("", "$text-muted"),
    BenchPhase.ASKING: ("waiting for your answer", "$warning"),
    BenchPhase.RUNNING: ("running", "$accent"),
    BenchPhase.DONE: ("done", "$success"),
    BenchPhase.FAILED: ("stopped", "$error"),
}
# Results table: header, width and how each cell is read from a level's fields.
_COLUMNS = (("c", 4), ("done/fail", 10), ("req/s", 7), ("tok/s", 8), ("TTFT ms", 8),
            ("TPOT ms", 8), ("ITL ms", 7))  # fmt: skip
_ACCEPT_HEADER = "accept: client · server · log"


def _number(value: object, digits: int) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return "-"
    return f"{value:.{digits}f}"


def progress_line(level: LevelProgress, width: int = 20) -> Content:
    """``c=4  ━━━━━━────  6/8  ✖ 2 failed`` for one level."""
    total = level.total
    fraction = (level.done / total) if total else (1.0 if level.finished else 0.0)
    count = f"{level.done}/{total}" if total else str(level.done)
    line = Content(f"c={level.concurrency:<4} ") + bar(fraction, width) + Content(f"  {count:>9}")
    if level.failed:
        line += Content.assemble(("  ✖ ", "$error"), (f"{level.failed} failed", "bold $error"))
    if level.finished:
        line += Content.assemble(("  ✔", "$success"))
    return line


def _accept_text(fields: Mapping[str, Any]) -> str:
    view = accept_view(fields)
    if not view.any:
        return "-"
    server = _number(view.server, 2)
    if view.server is not None and view.server_basis == "lifetime":
        server += " (lifetime)"
    log = _number(view.log, 2)
    if view.log is not None:
        log += f" ({view.log_samples})"
    return f"{_number(view.client, 2)} · {server} · {log}"


def _tokens(fields: Mapping[str, Any]) -> Content:
    view = token_view(fields)
    if not view.disagree:
        return Content(str(view.server) if view.server is not None else "-")
    client = "-" if view.client is None else str(view.client)
    text = f"{view.server} server ≠ {client} client"
    if view.mismatched_requests:
        text += f" ({view.mismatched_requests} requests differ)"
    return Content.styled(text, "$warning")


def result_row(fields: Mapping[str, Any]) -> Content:
    """One level of the results table."""
    failed = fields.get("failed")
    done = f"{_number(fields.get('completed'), 0)}/{_number(failed, 0)}"
    cells = (
        _number(fields.get("max_concurrency"), 0), done,
        _number(fields.get("request_throughput"), 2), _number(fields.get("output_throughput"), 1),
        _number(fields.get("median_ttft_ms"), 1), _number(fields.get("median_tpot_ms"), 2),
        _number(fields.get("median_itl_ms"), 1),
    )  # fmt: skip
    parts: list[Segment] = []
    for (_name, width), cell in zip(_COLUMNS, cells, strict=True):
        failing = cell == done and isinstance(failed, int) and failed > 0
        parts.append((f"{cell:>{width}} ", "bold $error") if failing else f"{cell:>{width}} ")
    parts.append(f" {_accept_text(fields):<36} ")
    return Content.assemble(*parts) + _tokens(fields)


def results_table(levels: list[Mapping[str, Any]]) -> Content:
    """The header and one row per finished level."""
    header = "".join(f"{name:>{width}} " for name, width in _COLUMNS)
    lines = [Content.styled(f"{header} {_ACCEPT_HEADER:<36} tokens", "bold $text-muted")]
    lines.extend(result_row(fields) for fields in levels)
    return Content("\n").join(lines)


def title_line(state: BenchState) -> Content:
    phase, style = _PHASE_TEXT[state.phase]
    parts: list[Segment] = [("Benchmark", "bold")]
    if state.runs:
        parts.append(f" #{state.runs}")
    if state.title:
        parts.append(f" · {printable(state.title)}")
    if phase:
        parts.extend([" · ", (phase, f"bold {style}")])
    return Content.assemble(*parts)


def errors_text(state: BenchState) -> Content:
    """The benchmark's own error, then the distinct errors of failed requests."""
    lines = [Content.styled(f"✖ {printable(state.error)}", "$error")] if state.error else []
    failed = state.failed_requests
    if failed:
        lines.append(Content.styled(f"{failed} request(s) failed:", "bold $error"))
        lines.extend(Content(f"  {printable(error)}") for error in state.request_errors)
    return Content("\n").join(lines)


def hint_text(state: BenchState) -> Content:
    note = f"{printable(state.note)} · " if state.note else ""
    return Content.styled(f"{note}b runs the benchmark again · c compares runs", "$text-muted")


class BenchPane(Vertical):
    """Under the rank grid once the server is ready or a benchmark has run."""

    DEFAULT_CSS = """
    BenchPane {
        display: none;
        height: auto;
        max-height: 50%;
        border-top: heavy $accent;
        background: $surface;
        padding: 0 1;
        &.-shown { display: block; }
        & > Static { height: auto; }
        & > #bench-title { height: 1; }
        & > #bench-spark-row { height: 1; display: none; }
        & > #bench-spark-row.-shown { display: block; }
        & #bench-spark-label { width: auto; color: $text-muted; }
        & Sparkline { width: 24; }
        & Sparkline > .sparkline--max-color { color: $success; }
        & Sparkline > .sparkline--min-color { color: $accent; }
        & > #bench-hint { height: 1; }
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.version = -1

    def compose(self) -> ComposeResult:
        yield Static(Content(""), id="bench-title")
        yield Static(Content(""), id="bench-progress")
        yield Static(Content(""), id="bench-table")
        with Horizontal(id="bench-spark-row"):
            yield Static(Content("tok/s by level "), id="bench-spark-label")
            yield Sparkline([], id="bench-spark")
        yield Static(Content(""), id="bench-errors")
        yield Static(Content(""), id="bench-hint")

    def show(self, state: BenchState) -> None:
        """Redraw from ``state`` (only when it changed since the last call)."""
        if state.version == self.version:
            return
        self.version = state.version
        self.set_class(bool(state.runs or state.note or state.phase is not BenchPhase.IDLE),
                       "-shown")  # fmt: skip
        self.query_one("#bench-title", Static).update(title_line(state))
        progress = Content("\n").join(progress_line(level) for level in state.levels)
        self.query_one("#bench-progress", Static).update(progress)
        results = state.results
        table = results_table(results) if results else Content("")
        self.query_one("#bench-table", Static).update(table)
        spark_row = self.query_one("#bench-spark-row", Horizontal)
        spark_row.set_class(bool(results), "-shown")
        self.query_one("#bench-spark", Sparkline).data = throughputs(results)
        errors = errors_text(state)
        shown = self.query_one("#bench-errors", Static)
        shown.update(errors)
        shown.display = bool(errors.plain)
        self.query_one("#bench-hint", Static).update(hint_text(state))


class BenchAskScreen(ModalScreen[bool]):
    """``bench.mode = "ask"``: benchmark the server that just became ready? (default Yes)."""

    DEFAULT_CSS = """
    BenchAskScreen { align: center middle; }
    BenchAskScreen > Vertical {
        width: 60; height: auto; border: thick $accent; background: $surface; padding: 1 2;
    }
    BenchAskScreen .question { text-style: bold; }
    BenchAskScreen Horizontal { height: auto; margin-top: 1; align-horizontal: right; }
    BenchAskScreen Button { margin-left: 2; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Yes", id="bench-yes"),
        Binding("n,escape", "answer(False)", "No", id="bench-no"),
    ]

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Content("The server is ready. Benchmark it now?"), classes="question")
            with Horizontal():
                yield Button("Yes", id="yes", variant="primary")
                yield Button("No", id="no")

    def on_mount(self) -> None:
        self.query_one("#yes", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)
