"""The serving figures as text: known figures only, most important first."""

from __future__ import annotations

from tui.engine.metrics.figure_text import figure_cells, figures_line
from tui.engine.metrics.figures import ServingFigures


def test_the_line_names_each_known_figure_and_leaves_out_the_unknown() -> None:
    figures = ServingFigures(
        10.0, 10.0, tok_s=1600.4, running=4, queued=0, kv_usage=0.123, accept_length=2.954,
        acceptance_rate=0.651, ttft_p50=0.012, ttft_p99=0.04, itl_p50=0.0025, itl_p99=0.0049,
    )  # fmt: skip
    assert figures_line(figures) == (
        "tok/s 1600 · run 4 · queue 0 · accept 2.95 (65%) · KV 12% · TTFT p50/p99 s 0.01/0.04 · "
        "ITL p50/p99 ms 2.5/4.9"
    )
    assert [label for label, _ in figure_cells(ServingFigures(10.0, 0.0, tok_s=0.0))] == ["tok/s"]
    assert figures_line(ServingFigures(10.0, 0.0)) == "no serving figures yet"
    assert "preempted 3" in figures_line(ServingFigures(10.0, 2.0, preemptions=3.0))
