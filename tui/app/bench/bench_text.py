"""The benchmark pane's texts: progress per level, the results table, the title, the errors.

Failed requests are counted in the progress line and the table and their errors are listed,
never hidden. Accept lengths are shown side by side: the client's, the server's (differenced
over the level, or its lifetime average, labelled so) and the mean the log's decode lines gave
during the level. Token counts are the server's, with the client's beside them when they differ.

Every text is built as Content, so nothing a server sent is read as markup.
"""

from __future__ import annotations

from collections.abc import Sequence

from textual.content import Content

from tui.app.bench.bench_state import BenchPhase, BenchState, LevelProgress
from tui.app.widgets.cell_format import bar
from tui.engine.bench.bench_view import accept_view, token_view
from tui.engine.bench.level_figures import LevelFigures
from tui.engine.logs.sanitize import printable

Segment = str | tuple[str, str]
_PHASE_TEXT = {
    BenchPhase.IDLE: ("", "$text-muted"),
    BenchPhase.ASKING: ("waiting for your answer", "$warning"),
    BenchPhase.RUNNING: ("running", "$accent"),
    BenchPhase.DONE: ("done", "$success"),
    BenchPhase.FAILED: ("stopped", "$error"),
}
# Results table: header and width of each column.
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


def _accept_text(figures: LevelFigures) -> str:
    view = accept_view(figures)
    if not view.any:
        return "-"
    server = _number(view.server, 2)
    if view.server is not None and view.server_basis == "lifetime":
        server += " (lifetime)"
    log = _number(view.log, 2)
    if view.log is not None:
        log += f" ({view.log_samples})"
    return f"{_number(view.client, 2)} · {server} · {log}"


def _tokens(figures: LevelFigures) -> Content:
    view = token_view(figures)
    if not view.disagree:
        return Content(str(view.server) if view.server is not None else "-")
    client = "-" if view.client is None else str(view.client)
    text = f"{view.server} server ≠ {client} client"
    if view.mismatched_requests:
        text += f" ({view.mismatched_requests} requests differ)"
    return Content.styled(text, "$warning")


def result_row(figures: LevelFigures) -> Content:
    """One level of the results table."""
    f, failed = figures, figures.failed
    done = f"{_number(f.completed, 0)}/{_number(failed, 0)}"
    cells = (
        _number(f.concurrency, 0), done, _number(f.request_throughput, 2),
        _number(f.output_throughput, 1), _number(f.ttft_ms.median, 1),
        _number(f.tpot_ms.median, 2), _number(f.itl_ms.median, 1),
    )  # fmt: skip
    parts: list[Segment] = []
    for (_name, width), cell in zip(_COLUMNS, cells, strict=True):
        failing = cell == done and isinstance(failed, int) and failed > 0
        parts.append((f"{cell:>{width}} ", "bold $error") if failing else f"{cell:>{width}} ")
    parts.append(f" {_accept_text(figures):<36} ")
    return Content.assemble(*parts) + _tokens(figures)


def results_table(levels: Sequence[LevelFigures]) -> Content:
    """The header and one row per finished level."""
    header = "".join(f"{name:>{width}} " for name, width in _COLUMNS)
    lines = [Content.styled(f"{header} {_ACCEPT_HEADER:<36} tokens", "bold $text-muted")]
    lines.extend(result_row(figures) for figures in levels)
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
