"""``bringup runs --compare``: benchmark sessions side by side, judged against their noise.

A session is one ``bringup bench`` (or one benchmark of a run): its levels share their
recording time. The oldest shown session is the baseline; each figure reads better or worse
only when Welch's t-test over the trials says so (``tui.engine.bench.run_compare``), otherwise
``within noise`` with the ± half-width, or ``(1 trial)`` when a side has a single trial.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from tui.engine.bench.level_figures import LevelFigures
from tui.engine.bench.level_key import LevelKey
from tui.engine.bench.run_compare import Change, RunColumn, compare_rows, inconclusive
from tui.engine.logs.sanitize import sanitize_line
from tui.io.store.run_store import StoredBench

MARKS = {Change.BETTER: " better", Change.WORSE: " worse", Change.SAME: ""}


def sessions(benches: Sequence[StoredBench], limit: int) -> list[RunColumn]:
    """The newest ``limit`` sessions, oldest first, closed-loop levels by concurrency and
    open-loop levels by request rate."""
    grouped: dict[float, dict[LevelKey, LevelFigures]] = {}
    first_id: dict[float, int] = {}
    for bench in benches:
        levels = grouped.setdefault(bench.recorded_at, {})
        levels.setdefault(LevelKey.of(bench.result), bench.result)
        first_id[bench.recorded_at] = min(first_id.get(bench.recorded_at, bench.id), bench.id)
    newest = sorted(grouped)[-limit:]
    return [
        RunColumn(
            first_id[at],
            f"#{first_id[at]} {time.strftime('%m-%d %H:%M', time.localtime(at))}",
            at,
            None,
            grouped[at],
        )
        for at in newest
    ]


def compare_text(columns: Sequence[RunColumn]) -> str:
    if len(columns) < 2:
        return "fewer than two benchmark sessions recorded: nothing to compare"
    rows = [row for row in compare_rows(columns, 0) if row.name != "start-up (s)"]
    width = max(len(row.name) for row in rows)
    cells = [
        [
            f"{cell.text} {cell.delta}{MARKS[cell.judgement]} {cell.interval}".rstrip()
            for cell in row.cells
        ]
        for row in rows
    ]
    col = max(len(text) for text in [*(c.label for c in columns), *(t for r in cells for t in r)])
    lines = [" " * width + "".join(f"  {sanitize_line(c.label):<{col}}" for c in columns)]
    for row, texts in zip(rows, cells, strict=True):
        lines.append(f"{row.name:<{width}}" + "".join(f"  {text:<{col}}" for text in texts))
    lines.append("better/worse: Welch's t-test over the trials at 95 % and more than 2 %")
    if inconclusive(rows):
        lines.append("some differences are inconclusive: benchmark again with --trials 3 or more")
    return "\n".join(line.rstrip() for line in lines)
