"""What the benchmark pane and the comparison view cost the app.

Three figures, each printed per second of CPU time of this process:

- progress: ``BenchProgressed`` messages handled by a headless app (every measured request
  posts one; messages for the same level replace each other while queued), with the pane
  redrawn for each one handled;
- summaries: official ``Serving Benchmark Result`` tables parsed;
- comparisons: comparison tables of eight runs with five levels built and laid out as text.

Usage::

    python bench/bench_pane.py [--messages 5000] [--tables 2000] [--comparisons 500]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.ui.fakes import FakeLink
from tui.app.bench.bench_messages import BenchLevelFinished, BenchProgressed, BenchStarted
from tui.app.bench.compare_screen import compare_table
from tui.app.feed.feed_sources import ScriptedSource
from tui.app.monitor.monitor_app import MonitorApp
from tui.app.monitor.view_model import Target
from tui.engine.bench.level_fields import level_from_fields
from tui.engine.bench.level_figures import LevelFigures
from tui.engine.bench.level_key import LevelKey
from tui.engine.bench.official_bench import parse_summary
from tui.engine.bench.run_compare import RunColumn, compare_rows

LEVELS = (1, 2, 4, 8, 16)
SUMMARY = "\n".join(
    [f"{' Serving Benchmark Result ':=^50}"]
    + [f"{label:<40} {value:<10}" for label, value in (
        ("Backend:", "sglang"), ("Successful requests:", "64"),
        ("Benchmark duration (s):", "21.50"), ("Total generated tokens:", "16384"),
        ("Request throughput (req/s):", "2.98"), ("Output token throughput (tok/s):", "762.05"),
        ("Accept length:", "2.48"),
    )]
    + [f"{'Time to First Token':-^50}"]
    + [f"{stat} TTFT (ms):{'':<26} {100 + i:<10.2f}" for i, stat in enumerate(
        ("Mean", "Median", "P90", "P95", "P99"))]
    + ["=" * 50]
)  # fmt: skip


def _figures(level: int) -> LevelFigures:
    return level_from_fields({
        "max_concurrency": level, "completed": 64, "failed": 0, "output_throughput": 60.0 * level,
        "median_ttft_ms": 150.0, "accept_length": 2.5, "server_accept_length": 2.48,
        "server_accept_basis": "differenced", "log_accept_length": 2.51,
        "log_accept_samples": 40, "total_output_tokens": 16384, "client_output_tokens": 16384,
    })  # fmt: skip


async def progress(messages: int) -> tuple[int, float]:
    """Messages posted and CPU seconds until the last one was shown."""
    app = MonitorApp(link=FakeLink(), source=ScriptedSource([]), target=Target("bench"))
    async with app.run_test(size=(160, 48)) as pilot:
        app.bench.post_message(BenchStarted("bench", tuple(f"c={c}" for c in LEVELS), messages))
        await pilot.pause()
        started = time.process_time()
        for done in range(1, messages + 1):
            app.bench.post_message(BenchProgressed(f"c={LEVELS[0]}", done, 0))
            if done % 50 == 0:
                await asyncio.sleep(0)
        app.bench.post_message(BenchLevelFinished(f"c={LEVELS[0]}", _figures(LEVELS[0])))
        while app.bench.state.levels[0].figures is None:
            await pilot.pause(0.001)
        return messages, time.process_time() - started


def summaries(count: int) -> float:
    started = time.process_time()
    for _ in range(count):
        parse_summary(SUMMARY)
    return time.process_time() - started


def comparisons(count: int) -> float:
    columns = [
        RunColumn(n, f"#{n} 03-01 10:{n:02d}", float(n), 600.0 - n,
                  {LevelKey.closed(level): _figures(level) for level in LEVELS}, "sglang model TP8")
        for n in range(8)
    ]  # fmt: skip
    started = time.process_time()
    for _ in range(count):
        compare_table(columns, compare_rows(columns, 0), 0, 7)
    return time.process_time() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=5000)
    parser.add_argument("--tables", type=int, default=2000)
    parser.add_argument("--comparisons", type=int, default=500)
    args = parser.parse_args()
    posted, seconds = asyncio.run(progress(args.messages))
    print(f"progress messages: {posted} posted, {posted / seconds:,.0f} per CPU second")
    seconds = summaries(args.tables)
    print(f"official summaries: {args.tables / seconds:,.0f} parsed per CPU second")
    seconds = comparisons(args.comparisons)
    print(f"comparison tables (8 runs x {len(LEVELS)} levels): "
          f"{args.comparisons / seconds:,.0f} per CPU second")  # fmt: skip


if __name__ == "__main__":
    main()
