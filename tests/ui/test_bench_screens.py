"""The benchmark pane and the comparison view at 80x24: columns are dropped or shortened, never
wrapped, and the screen says which."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.ui.bench_screens import (
    bench_app,
    open_compare,
    pane_results,
    populate_runs,
    show_results,
    utc,
)
from tui.app.bench.bench_state import BenchState
from tui.app.bench.bench_text import fit_columns, results_table, table_rows, verdict_text
from tui.app.bench.compare_screen import Layout, shown_runs
from tui.engine.bench.run_compare import Cell, Change, CompareRow

Compare = Callable[..., bool]


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("BRINGUP_DATA_DIR", raising=False)
    monkeypatch.setenv("TZ", "UTC")
    utc()
    return tmp_path / "data"


def test_bench_pane_at_80x24(snap_compare: Compare, data_dir: Path) -> None:
    app = bench_app(data_dir)
    assert snap_compare(app, terminal_size=(80, 24), run_before=show_results(app))


def test_compare_view_at_80x24(snap_compare: Compare, data_dir: Path) -> None:
    populate_runs(data_dir, runs=4)
    app = bench_app(data_dir)
    assert snap_compare(app, terminal_size=(80, 24), run_before=open_compare(app))


def _state() -> BenchState:
    state = BenchState()
    state.started("t", ("c=1", "c=4", "r=8"), 20)
    for label, figures in pane_results():
        state.level_finished(label, figures)
    return state


@pytest.mark.parametrize("width", [40, 60, 78, 100, 158])
def test_every_line_of_the_table_fits_its_width(width: int) -> None:
    table = results_table(_state(), width)
    assert max(len(line) for line in table.plain.splitlines()) <= width


def test_narrow_tables_drop_the_least_needed_columns_and_say_so() -> None:
    rows = table_rows(_state())
    wide, hidden = fit_columns(rows, 158)
    assert hidden == []
    assert "accept: client · server · log" in [f.cells[0].plain for f in wide]
    narrow, hidden = fit_columns(rows, 50)
    assert [f.column.name for f in narrow][:3] == ["level", "done/fail", "tok/s"]
    assert "tokens" in hidden
    assert "ITL ms" in hidden
    assert "tok/s" not in hidden
    assert "not shown at this width: " in results_table(_state(), 50).plain


def test_the_comparison_keeps_the_baseline_and_the_cursor() -> None:
    assert shown_runs(8, 0, 7, 2) == [0, 7]
    assert shown_runs(8, 0, 4, 3) == [0, 3, 4]
    assert shown_runs(3, 0, 2, 5) == [0, 1, 2]
    layout = Layout.fit(8, 0, 7, 78)
    assert layout.runs == (0, 7)
    assert not layout.short
    narrow = Layout.fit(8, 0, 7, 50)
    assert narrow.short
    assert narrow.runs == (0, 7)


def test_verdicts_fit_one_line_per_level() -> None:
    state = _state()
    assert verdict_text(state).plain == ""
    state.verdicts_read("#3 12-01 21:40", ())
    assert "no earlier run" in verdict_text(state).plain
    cells = {
        "tok/s": Cell("690.4", "+5.1%", Change.BETTER, False, "±1.9%"),
        "TTFT ms": Cell("25.3", "within noise ±2.2%", Change.SAME, True),
        "TPOT ms": Cell("1.30", "within noise ±0.4%", Change.SAME, True),
    }
    rows = [
        CompareRow(f"{name} @c=1", (Cell("1", "baseline"), cell)) for name, cell in cells.items()
    ]
    state.verdicts_read("#3 12-01 21:40", rows)
    wide = verdict_text(state, 120).plain.splitlines()
    assert wide == [
        "against #3 12-01 21:40 (Welch's t-test, 95 %):",
        "  c=1      tok/s +5.1% ▲ ±1.9%  TTFT within noise ±2.2%  TPOT within noise ±0.4%",
    ]
    narrow = verdict_text(state, 60).plain.splitlines()
    assert narrow[1] == "  c=1      tok/s +5.1% ▲ ±1.9% TTFT ≈±2.2% TPOT ≈±0.4%"
