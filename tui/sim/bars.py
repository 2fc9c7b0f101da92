"""When rank 0 redraws its tqdm bars during a stage, and what each redraw shows.

A bar starts once every rank has logged its "begin" line and closes just before rank 0 logs
its "end" line (its loader returns first), so in a healthy start no log line lands inside an
open bar; a failure that cuts the stage short leaves the bar open, as in real logs.
"""

from __future__ import annotations

from tui.sim.logfmt import graph_bar, shard_bar

BAR_DELAY = 0.2
BAR_END = 0.998
SHARDS = "Loading safetensors checkpoint shards"

Draw = tuple[float, str, float]


def _span(start: float, pace: float) -> tuple[float, float]:
    return start + BAR_DELAY, max(pace * BAR_END - BAR_DELAY, pace / 2)


def shard_draws(start: float, pace: float, total: int, scale: float) -> list[Draw]:
    """Weight loading: ``(at, text, fraction loaded)``; tqdm redraws the last state on close."""
    begin, span = _span(start, pace)
    draws = []
    for n in range(total + 1):
        at = begin + span * n / total
        draws.append((at, "\r" + shard_bar(SHARDS, n, total, (at - begin) * scale), n / total))
    final = shard_bar(SHARDS, total, total, span * scale)
    draws.append((begin + span, f"\r{final}\n", 1.0))
    return draws


def graph_draws(
    start: float, pace: float, sizes: list[int], avail: float, after: float, scale: float
) -> list[Draw]:
    """CUDA-graph capture, batch sizes counting down, free memory shrinking as it goes."""
    order = sizes[::-1]
    total = len(order)
    begin, span = _span(start, pace)
    draws = []
    for n in range(total + 1):
        at = begin + span * n / total
        memory = avail - (avail - after) * n / total
        desc = f"Capturing batches (bs={order[min(n, total - 1)]} avail_mem={memory:.2f} GB)"
        tail = "\n" if n == total else ""
        draws.append((at, "\r" + graph_bar(desc, n, total, (at - begin) * scale) + tail, n / total))
    return draws
