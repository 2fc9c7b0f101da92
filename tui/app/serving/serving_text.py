"""The serving panel's lines, each laid out for its width: cells are dropped from the end and
sparklines shortened, never wrapped."""

from __future__ import annotations

from collections.abc import Sequence

from rich.cells import cell_len
from textual.content import Content

from tui.app.serving.serving_state import ServingState
from tui.engine.logs.sanitize import printable
from tui.engine.metrics.figure_text import figure_cells
from tui.engine.startup.snapshot import DecodeSummary

BLOCKS = "▁▂▃▄▅▆▇█"
SPARKED = {"tok/s": "tok_s", "run": "running", "queue": "queued", "accept": "accept_length",
           "KV": "kv_usage", "TTFT p50/p99 s": "ttft_p99", "ITL p50/p99 ms": "itl_p99"}  # fmt: skip
SPARK_WIDTH = 10
GAP = "  "


def spark(values: Sequence[float], width: int) -> str:
    """The last ``width`` values as block characters, from their least (▁) to their greatest
    (█); a series that does not move is a flat middle line."""
    shown = list(values)[-width:]
    if not shown:
        return ""
    low, high = min(shown), max(shown)
    if high - low <= 1e-9 * max(abs(high), 1.0):
        return BLOCKS[3] * len(shown)
    return "".join(BLOCKS[min(7, int((value - low) / (high - low) * 7.999))] for value in shown)


def figures_line(state: ServingState, width: int) -> Content:
    """``serving  tok/s 1600 ▂▃▅▇  run 4  queue 0  accept 2.98 (66%) ...`` fitted to ``width``:
    sparklines while there is room for them, then as many cells as fit. The pieces are measured
    as plain text and the line is assembled once, for the layout that fits. While the scrapes
    are spaced out for an idle server the head says so: ``serving idle · every 30 s  tok/s 0``."""
    if state.figures is None:
        return Content("")
    head = _head(state)
    cells = figure_cells(state.figures)
    for spark_width in (SPARK_WIDTH, 5, 0):
        pieces = _pieces(cells, state, spark_width)
        if _fitting(head, pieces, width) == len(pieces):
            return _assemble(head, pieces)
    pieces = _pieces(cells, state, 0)
    return _assemble(head, pieces[: _fitting(head, pieces, width)])


Piece = list[tuple[str, str]]
"""One cell's (text, style) runs."""
HEAD = ("serving", "bold $rank-ready")


def _head(state: ServingState) -> Piece:
    """``serving``, and how far apart the scrapes are while the server is idle."""
    if state.idle_every is None:
        return [HEAD]
    return [HEAD, (f" idle · every {state.idle_every:g} s", "$text-muted")]


def _pieces(cells: list[tuple[str, str]], state: ServingState, spark_width: int) -> list[Piece]:
    pieces = []
    for label, value in cells:
        piece = [(GAP, ""), (f"{label} ", "$text-muted"), (value, "bold")]
        series = state.series(SPARKED[label]) if spark_width and label in SPARKED else []
        if series:
            piece.append((f" {spark(series, spark_width)}", "$accent"))
        pieces.append(piece)
    return pieces


def _fitting(head: Piece, pieces: list[Piece], width: int) -> int:
    """How many of the pieces fit after the head."""
    used = sum(cell_len(text) for text, _ in head)
    for count, piece in enumerate(pieces):
        used += sum(cell_len(text) for text, _ in piece)
        if used > width:
            return count
    return len(pieces)


def _assemble(head: Piece, pieces: list[Piece]) -> Content:
    return Content.assemble(*head, *(run for piece in pieces for run in piece))


def status_line(state: ServingState, decode: DecodeSummary, width: int) -> Content:
    """The alarms that hold, or why there are no figures (and the decode lines' instead)."""
    if state.alarms:
        text = " · ".join(alarm.text for alarm in state.alarms)
        return _cut(Content.styled(f"⚠ {printable(text)}", "bold $rank-stalled"), width)
    if state.missing is None:
        return Content("")
    fallback = _decode_text(decode)
    why = printable(state.missing)
    if state.absent and fallback:
        return _cut(Content.assemble((f"{why}; ", "$text-muted"), fallback), width)
    return _cut(Content.styled(why, "$text-muted"), width)


def _decode_text(decode: DecodeSummary) -> str:
    parts = []
    if decode.gen_throughput:
        parts.append(f"tok/s {decode.gen_throughput[-1]:.0f}")
    if decode.accept_len:
        parts.append(f"accept {decode.accept_len[-1]:.2f}")
    return f"decode lines: {' · '.join(parts)}" if parts else ""


def _cut(line: Content, width: int) -> Content:
    if line.cell_length <= width:
        return line
    return line[: max(width - 1, 0)] + Content("…")
