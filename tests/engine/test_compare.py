"""Runs side by side with deltas against a chosen baseline."""

from __future__ import annotations

from tui.engine.bench.level_fields import level_from_fields
from tui.engine.bench.level_figures import LevelFigures
from tui.engine.bench.level_key import LevelKey
from tui.engine.bench.run_compare import (
    BenchLevel,
    Change,
    RunColumn,
    compare_rows,
    delta,
    newest_levels,
    run_accept_length,
)

C1, C4 = LevelKey.closed(1), LevelKey.closed(4)


def _trials(**means: float) -> dict[str, dict[str, float]]:
    """Three trials per figure with a 0.5 % spread: every delta below is far outside it."""
    return {name: {"n": 3, "mean": m, "std": m * 0.005, "ci95": m * 0.0124}
            for name, m in means.items()}  # fmt: skip


def _column(run_id: int, startup: float | None, tok_s: float, ttft: float) -> RunColumn:
    accept = 2.0 + run_id
    level = {"output_throughput": tok_s, "median_ttft_ms": ttft, "accept_length": accept,
             "trials": _trials(output_throughput=tok_s, median_ttft_ms=ttft,
                               accept_length=accept)}  # fmt: skip
    return RunColumn(
        run_id, f"run {run_id}", 100.0 * run_id, startup, {C1: level_from_fields(level)}
    )


def test_deltas_follow_each_figures_direction() -> None:
    columns = [_column(1, 600.0, 100.0, 50.0), _column(2, 540.0, 125.0, 60.0)]
    rows = {row.name: row.cells for row in compare_rows(columns, baseline=0)}
    assert [c.delta for c in rows["start-up (s)"]] == ["baseline", "-10.0%"]
    assert rows["start-up (s)"][1].judgement is Change.BETTER
    assert rows["tok/s @c=1"][1].text == "125.0"
    assert rows["tok/s @c=1"][1].delta == "+25.0%"
    assert rows["tok/s @c=1"][1].judgement is Change.BETTER
    assert rows["TTFT ms @c=1"][1].judgement is Change.WORSE
    assert rows["accept length"][1].text == "4.00"


def test_choosing_another_baseline_moves_the_deltas() -> None:
    columns = [_column(1, 600.0, 100.0, 50.0), _column(2, None, 125.0, 60.0)]
    rows = {row.name: row.cells for row in compare_rows(columns, baseline=1)}
    assert rows["tok/s @c=1"][0].delta == "-20.0%"
    assert rows["tok/s @c=1"][1].delta == "baseline"
    # The baseline has no start-up time: the other run shows its figure without a delta.
    assert rows["start-up (s)"][0].text == "600.0"
    assert rows["start-up (s)"][0].delta == ""
    assert rows["start-up (s)"][1].text == "-"


def test_levels_only_some_runs_have_show_a_dash() -> None:
    one = _column(1, 600.0, 100.0, 50.0)
    four = RunColumn(
        2, "run 2", 200.0, 610.0, {C4: level_from_fields({"output_throughput": 380.0})}
    )
    rows = {row.name: row.cells for row in compare_rows([one, four], baseline=0)}
    assert [c.text for c in rows["tok/s @c=4"]] == ["-", "380.0"]
    assert [c.text for c in rows["tok/s @c=1"]] == ["100.0", "-"]
    assert compare_rows([], 0) == []


def test_the_newest_level_of_each_run_wins() -> None:
    levels = [
        BenchLevel(1, 1, 10.0, level_from_fields({"output_throughput": 90.0})),
        BenchLevel(1, 1, 20.0, level_from_fields({"output_throughput": 95.0})),
        BenchLevel(1, 4, 20.0, level_from_fields({"output_throughput": 300.0})),
        BenchLevel(None, 1, 30.0, level_from_fields({"output_throughput": 1.0})),
    ]
    runs = newest_levels(levels)
    assert runs == {1: {C1: level_from_fields({"output_throughput": 95.0}),
                        C4: level_from_fields({"output_throughput": 300.0})}}  # fmt: skip


def column(levels: dict[LevelKey, LevelFigures]) -> RunColumn:
    return RunColumn(1, "", 0.0, None, levels)


def test_accept_length_skips_the_lifetime_server_figure() -> None:
    lifetime = {"server_accept_length": 2.2, "server_accept_basis": "lifetime"}
    assert run_accept_length(column({C1: level_from_fields(lifetime)})) is None
    differenced = {"server_accept_length": 2.4, "server_accept_basis": "differenced"}
    assert run_accept_length(column({C1: level_from_fields(differenced)})) == 2.4


def test_delta_of_equal_and_zero_bases() -> None:
    assert delta(5.0, 5.0, True) == ("±0%", Change.SAME)
    assert delta(2.0, 0.0, True) == ("+2.00", Change.BETTER)
    assert delta(-1.0, 0.0, False) == ("-1.00", Change.BETTER)


def test_open_loop_levels_are_compared_by_request_rate() -> None:
    def run(run_id: int, tok_s: float) -> RunColumn:
        fields = {"output_throughput": tok_s, "request_rate": 8.0, "max_concurrency": 0,
                  "trials": _trials(output_throughput=tok_s)}  # fmt: skip
        figures = level_from_fields(fields, 0)
        return RunColumn(run_id, f"run {run_id}", 0.0, None, {LevelKey.of(figures): figures})

    rows = {row.name: row.cells for row in compare_rows([run(1, 100.0), run(2, 80.0)], 0)}
    assert rows["tok/s @r=8"][1].delta == "-20.0%"
    assert rows["tok/s @r=8"][1].judgement is Change.WORSE
    stored = [BenchLevel(1, 0, 1.0, figures) for figures in run(1, 100.0).levels.values()]
    stored.append(BenchLevel(1, 4, 1.0, level_from_fields({"output_throughput": 5.0})))
    assert sorted(key.label for key in newest_levels(stored)[1]) == ["c=4", "r=8"]


def test_our_figures_are_compared_rather_than_an_engine_tools() -> None:
    ours = level_from_fields({"output_throughput": 90.0})
    tool = level_from_fields({"output_throughput": 80.0, "source": "official sglang"})
    stored = [BenchLevel(1, 1, 10.0, ours), BenchLevel(1, 1, 20.0, tool)]
    assert newest_levels(stored) == {1: {C1: ours}}
    assert newest_levels(stored[1:]) == {1: {C1: tool}}
