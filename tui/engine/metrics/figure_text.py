"""The serving figures as short text: one line for ``bringup stats``, cells for the view.

A figure the engine does not export (or that nothing produced yet) is left out, never shown as
zero.
"""

from __future__ import annotations

from collections.abc import Sequence

from tui.engine.metrics.figures import ServingFigures
from tui.engine.metrics.rank_figures import RankFigures, rank_of


def _percent(value: float | None) -> str | None:
    return None if value is None else f"{value * 100:.0f}%"


def _number(value: float | None, digits: int = 0) -> str | None:
    return None if value is None else f"{value:.{digits}f}"


def _pair(low: float | None, high: float | None, scale: float, digits: int) -> str | None:
    if low is None or high is None:
        return None
    return f"{low * scale:.{digits}f}/{high * scale:.{digits}f}"


def figure_cells(figures: ServingFigures) -> list[tuple[str, str]]:
    """(label, value) for each figure known, in the order the view shows them; the first ones
    matter most (a narrow view keeps only those)."""
    accept = _number(figures.accept_length, 2)
    rate = _percent(figures.acceptance_rate)
    if accept is not None and rate is not None:
        accept = f"{accept} ({rate})"
    cells = (
        ("tok/s", _number(figures.tok_s)),
        ("run", _number(figures.running)),
        ("queue", _number(figures.queued)),
        ("accept", accept),
        ("KV", _percent(figures.kv_usage)),
        ("TTFT p50/p99 s", _pair(figures.ttft_p50, figures.ttft_p99, 1, 2)),
        ("ITL p50/p99 ms", _pair(figures.itl_p50, figures.itl_p99, 1000, 1)),
        ("hit", _percent(figures.prefix_hit_rate)),
        ("preempted", _number(figures.preemptions) if figures.preemptions else None),
    )
    return [(label, value) for label, value in cells if value is not None]


def figures_line(figures: ServingFigures) -> str:
    """``tok/s 1600 · run 4 · queue 0 · accept 3.00 (67%) · KV 12% · ...``."""
    cells = figure_cells(figures)
    if not cells:
        return "no serving figures yet"
    return " · ".join(f"{label} {value}" for label, value in cells)


RANK_CELLS = ("tok/s", "run", "queue", "accept", "KV")
"""What a rank panel shows of the server's figures (the header's line shows them all)."""


def rank_cells(figures: RankFigures | ServingFigures) -> list[tuple[str, str]]:
    """(label, value) for a rank panel: one engine's figures, or the server's, most needed
    first."""
    if isinstance(figures, ServingFigures):
        return [cell for cell in figure_cells(figures) if cell[0] in RANK_CELLS]
    cells = (
        ("tok/s", _number(figures.tok_s)),
        ("run", _number(figures.running)),
        ("queue", _number(figures.queued)),
        ("KV", _percent(figures.kv_usage)),
    )
    return [(label, value) for label, value in cells if value is not None]


Cells = tuple[tuple[str, str], ...]


def panel_cells(
    tags: Sequence[str], server: ServingFigures | None, ranks: Sequence[RankFigures]
) -> dict[str, Cells]:
    """The serving cells of each rank panel: each engine's on the rank it runs on when the
    labels tell engines apart, else the server's on the first rank's."""
    if server is None or not tags:
        return {}
    if ranks:
        return {tag: tuple(rank_cells(group)) for tag, group in rank_of(tags, ranks).items()}
    return {tags[0]: tuple(rank_cells(server))}
