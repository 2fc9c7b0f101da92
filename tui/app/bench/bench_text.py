"""The benchmark pane's texts: progress per level, the results table, the title, the errors.

Failed requests are counted in the progress line and the table and their errors are listed,
never hidden. Accept lengths are shown side by side: the client's, the server's (differenced
over the level, or its lifetime average, labelled so) and the mean the log's decode lines gave
during the level. Token counts are the server's, with the client's beside them when they differ.

Every text is built as Content, so nothing a server sent is read as markup.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from textual.content import Content

from tui.app.bench.bench_state import BenchPhase, BenchState, LevelProgress
from tui.app.widgets.cell_format import bar
from tui.engine.bench.bench_view import accept_view, token_view
from tui.engine.bench.level_figures import LevelFigures
from tui.engine.bench.official_terms import WORKLOAD_NOTE, differing, tool_of
from tui.engine.bench.run_compare import Cell, Change
from tui.engine.logs.sanitize import printable

Segment = str | tuple[str, str]
_VERDICT_MARK = {Change.BETTER: (" ▲", "$success"), Change.WORSE: (" ▼", "$error")}
_PHASE_TEXT = {
    BenchPhase.IDLE: ("", "$text-muted"),
    BenchPhase.ASKING: ("waiting for your answer", "$warning"),
    BenchPhase.RUNNING: ("running", "$accent"),
    BenchPhase.DONE: ("done", "$success"),
    BenchPhase.FAILED: ("stopped", "$error"),
}
_ACCEPT_HEADER = "accept: client · server · log"
GAP = 1
"""Spaces between two columns of the results table."""
WIDE = 120
"""From this width on, each figure an engine's tool defines otherwise gets its own line."""


def _number(value: object, digits: int) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return "-"
    return f"{value:.{digits}f}"


def progress_line(level: LevelProgress, width: int = 20) -> Content:
    """``c=4      ━━━━━━────  6/8  ✖ 2 failed`` for one level."""
    total = level.total
    fraction = (level.done / total) if total else (1.0 if level.finished else 0.0)
    count = f"{level.done}/{total}" if total else str(level.done)
    line = Content(f"{level.label:<8} ") + bar(fraction, width) + Content(f"  {count:>9}")
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


def _short_accept(figures: LevelFigures) -> str:
    view = accept_view(figures)
    value = view.client if view.client is not None else view.server
    return _number(value, 2)


def _short_tokens(figures: LevelFigures) -> Content:
    view = token_view(figures)
    text = str(view.server) if view.server is not None else "-"
    return Content.styled(text + " ≠", "$warning") if view.disagree else Content(text)


def _spread_text(figures: LevelFigures, name: str, value: float | None, digits: int) -> str:
    """The figure, or ``mean ±half-width`` over the level's trials."""
    spread = figures.spread(name)
    if spread is None or spread.ci95 is None:
        return _number(value, digits)
    return f"{_number(spread.mean, digits)} ±{_number(spread.ci95, digits)}"


@dataclass(frozen=True, slots=True)
class Row:
    """One row of the results table: a level (ours or an engine tool's) and its marker."""

    figures: LevelFigures
    label: str
    different: Mapping[str, str] = field(default_factory=dict)
    """Columns the tool that measured the row defines differently (marked ``≠``)."""


CellText = Callable[[Row], Content]


@dataclass(frozen=True, slots=True)
class Column:
    """A column of the results table: its name, its forms (fullest first), its priority
    (lower stays longer when the pane is narrow) and its alignment."""

    name: str
    forms: tuple[tuple[str, CellText], ...]
    priority: int
    right: bool = True


def _numeric(name: str, read: Callable[[LevelFigures], str]) -> CellText:
    def cell(row: Row) -> Content:
        text = read(row.figures)
        if name in row.different and text != "-":
            return Content.assemble(text, ("≠", "bold $warning"))
        return Content(text)

    return cell


def _done(row: Row) -> Content:
    f = row.figures
    text = f"{_number(f.completed, 0)}/{_number(f.failed, 0)}"
    failing = isinstance(f.failed, int) and f.failed > 0
    return Content.styled(text, "bold $error") if failing else Content(text)


def _label(row: Row) -> Content:
    return Content(row.label)


COLUMNS = (
    Column("level", (("level", _label),), 0, right=False),
    Column("done/fail", (("done/fail", _done), ("ok/✖", _done)), 2),
    Column("req/s", (("req/s", _numeric("req/s", lambda f: _number(f.request_throughput, 2))),), 6),
    Column("tok/s", (("tok/s", _numeric("tok/s", lambda f: _spread_text(
        f, "output_throughput", f.output_throughput, 1))),), 1),
    Column("TTFT ms", (("TTFT ms", _numeric("TTFT ms", lambda f: _spread_text(
        f, "median_ttft_ms", f.ttft_ms.median, 1))),), 3),
    Column("TPOT ms", (("TPOT ms", _numeric("TPOT ms", lambda f: _spread_text(
        f, "median_tpot_ms", f.tpot_ms.median, 2))),), 4),
    Column("ITL ms", (("ITL ms", _numeric("ITL ms", lambda f: _spread_text(
        f, "median_itl_ms", f.itl_ms.median, 1))),), 7),
    Column("accept", (
        (_ACCEPT_HEADER, _numeric("accept", _accept_text)),
        ("accept", _numeric("accept", _short_accept)),
    ), 5, right=False),
    Column("tokens", (("tokens", lambda row: _tokens(row.figures)),
                      ("tokens", lambda row: _short_tokens(row.figures))), 8, right=False),
)  # fmt: skip
"""The results table's columns in the order they are shown."""


@dataclass(frozen=True, slots=True)
class Fitted:
    """A column as laid out: which form, its width and its cells (header first)."""

    column: Column
    cells: tuple[Content, ...]
    width: int


def _form(column: Column, index: int, rows: Sequence[Row]) -> Fitted:
    header, cell = column.forms[index]
    cells = (Content(header), *(cell(row) for row in rows))
    return Fitted(column, cells, max(c.cell_length for c in cells))


def fit_columns(rows: Sequence[Row], width: int) -> tuple[list[Fitted], list[str]]:
    """The columns that fit ``width`` (in table order) and the names of those left out.

    Columns are taken by priority in their narrowest form while they fit, then widened to a
    fuller form, again by priority, where the room left allows; a cell is never wrapped.
    """
    by_priority = sorted(COLUMNS, key=lambda column: column.priority)
    taken: dict[str, Fitted] = {}
    used = 0
    for column in by_priority:
        narrow = _form(column, len(column.forms) - 1, rows)
        need = narrow.width + (GAP if taken else 0)
        if used + need <= width:
            taken[column.name] = narrow
            used += need
    for column in by_priority:
        held = taken.get(column.name)
        if held is None:
            continue
        for index in range(len(column.forms) - 1):
            wider = _form(column, index, rows)
            if used + wider.width - held.width <= width:
                used += wider.width - held.width
                taken[column.name] = wider
                break
    shown = [taken[c.name] for c in COLUMNS if c.name in taken]
    hidden = [c.name for c in COLUMNS if c.name not in taken]
    return shown, hidden


def _line(fitted: Sequence[Fitted], index: int) -> Content:
    parts = []
    for column in fitted:
        cell = column.cells[index]
        pad = column.width - cell.cell_length
        parts.append(cell.pad_left(pad) if column.column.right else cell.pad_right(pad))
    return Content(" " * GAP).join(parts)


def table_rows(state: BenchState) -> list[Row]:
    """Our row of each finished level, then the engine tool's row of it when the tool ran."""
    rows = []
    for level in state.levels:
        mark = "▸" if state.selected == level.label else " "
        if level.figures is not None:
            rows.append(Row(level.figures, f"{mark}{level.label}"))
        if level.official is not None:
            different = differing(level.official.source)
            tool = printable(tool_of(level.official.source))
            rows.append(Row(level.official, f" └ {tool}", different))
    return rows


def results_table(state: BenchState, width: int = 200) -> Content:
    """The header and one row per finished level, fitted to ``width`` cells; a line says which
    columns did not fit, another which figures an engine's tool defines differently."""
    rows = table_rows(state)
    if not rows:
        return Content("")
    fitted, hidden = fit_columns(rows, width)
    header = _line(fitted, 0).stylize("bold $text-muted")
    lines = [header, *(_line(fitted, index + 1) for index in range(len(rows)))]
    if hidden:
        lines.append(_fit_line(f"not shown at this width: {', '.join(hidden)}", width))
    shown = {column.column.name for column in fitted}
    notes = {name: why for row in rows for name, why in row.different.items() if name in shown}
    if notes:
        tool = printable(next(tool_of(row.figures.source) for row in rows if row.different))
        if width < WIDE:
            names = ", ".join(notes)
            lines.append(_fit_line(f"≠ {tool}'s own definitions: {names} (and own prompts)", width))
        else:
            lines.append(_fit_line(f"≠ {tool} defines it otherwise ({WORKLOAD_NOTE}):", width))
            lines.extend(_fit_line(f"  {name}: {why}", width) for name, why in notes.items())
    return Content("\n").join(lines)


def _fit_line(text: str, width: int) -> Content:
    """A muted note cut to ``width`` with an ellipsis, never wrapped."""
    if len(text) > width:
        text = text[: max(width - 1, 0)] + "…"
    return Content.styled(text, "$text-muted")


def title_line(state: BenchState, width: int = 200) -> Content:
    """``Benchmark #2 · done · generate · 20 prompts ...``, cut to one line of ``width``."""
    phase, style = _PHASE_TEXT[state.phase]
    parts: list[Segment] = [("Benchmark", "bold")]
    if state.runs:
        parts.append(f" #{state.runs}")
    if phase:
        parts.extend([" · ", (phase, f"bold {style}")])
    if state.title:
        parts.append(f" · {printable(state.title)}")
    line = Content.assemble(*parts)
    return line.truncate(width, ellipsis=True) if line.cell_length > width else line


def errors_text(state: BenchState) -> Content:
    """The benchmark's own error, then the distinct errors of failed requests."""
    lines = [Content.styled(f"✖ {printable(state.error)}", "$error")] if state.error else []
    failed = state.failed_requests
    if failed:
        lines.append(Content.styled(f"{failed} request(s) failed:", "bold $error"))
        lines.extend(Content(f"  {printable(error)}") for error in state.request_errors)
    return Content("\n").join(lines)


def hint_text(state: BenchState, width: int = 200) -> Content:
    """The note, then the keys, shortened to fit one line of ``width`` cells."""
    note = f"{printable(state.note)} · " if state.note else ""
    target = f"level {state.selected}" if state.selected else "every level"
    forms = (
        f"b benchmarks again · t more trials of {target} · v chooses a level · c compares",
        f"b again · t trials ({state.selected or 'all'}) · v level · c compare",
        "b · t · v · c",
    )
    for keys in forms:
        if len(note) + len(keys) <= width:
            return Content.styled(note + keys, "$text-muted")
    return _fit_line(note + forms[-1], width)


def verdict_text(state: BenchState, width: int = 200) -> Content:
    """After more trials: each level's tok/s, TTFT and TPOT against the earlier run's, one line
    per level, as ``bringup runs --compare`` judges them (Welch's t-test over the trials)."""
    if state.verdicts is None:
        return Content("")
    if not state.verdicts:
        return _fit_line("no earlier run has these levels to test against", width)
    head = f"against {printable(state.verdict_base)} (Welch's t-test, 95 %):"
    lines = [_fit_line(head, width)]
    by_level: dict[str, list[Content]] = {}
    for row in state.verdicts:
        figure, _, level = row.name.partition(" @")
        by_level.setdefault(level, []).append(_verdict_cell(figure.split()[0], row.cells[-1]))
    for level, cells in by_level.items():
        line = Content(f"  {level:<8} ") + Content("  ").join(cells)
        if line.cell_length > width:
            short = [Content(cell.plain.replace("within noise ", "≈")) for cell in cells]
            line = Content(f"  {level:<8} ") + Content(" ").join(short)
        lines.append(line.truncate(width, ellipsis=True) if line.cell_length > width else line)
    return Content("\n").join(lines)


def _verdict_cell(figure: str, cell: Cell) -> Content:
    """``tok/s +5.1% ▲ ±1.9%`` or ``TTFT within noise ±2.2%``."""
    mark, style = _VERDICT_MARK.get(cell.judgement, ("", "$text-muted"))
    extra = f"{mark} {cell.interval}".rstrip()
    return Content.assemble(f"{figure} {cell.delta}", (extra, style))
