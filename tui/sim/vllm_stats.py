"""vLLM's periodic statistics lines, from the counters of what was really generated."""

from __future__ import annotations

import asyncio
import os
from typing import TypeAlias

from tui.sim.config import SimConfig
from tui.sim.http_common import ServerState
from tui.sim.output import LogSink


async def vllm_stats_loop(config: SimConfig, sink: LogSink, state: ServerState) -> None:
    """vLLM's periodic ``Engine 000:`` line (and ``SpecDecoding metrics:`` when speculative)."""
    interval = float(os.environ.get("VLLM_LOG_STATS_INTERVAL", "10") or 10)
    totals = state.stats.totals
    last = (
        totals.prompt_tokens,
        totals.generation_tokens,
        totals.verify_steps,
        totals.verify_tokens,
        list(totals.per_position),
    )
    while True:
        await asyncio.sleep(max(interval, 0.05))
        now = (
            totals.prompt_tokens,
            totals.generation_tokens,
            totals.verify_steps,
            totals.verify_tokens,
            list(totals.per_position),
        )
        if now[:2] == last[:2] and not state.stats.running:
            continue
        _log_interval(config, sink, state, last, now, interval)
        last = now


Counters: TypeAlias = tuple[int, int, int, int, list[int]]


def _log_interval(
    config: SimConfig,
    sink: LogSink,
    state: ServerState,
    last: Counters,
    now: Counters,
    interval: float,
) -> None:
    stats = state.stats
    usage = 100 * stats.tokens_in_use / stats.capacity
    sink.log(
        None,
        f"Engine 000: Avg prompt throughput: {(now[0] - last[0]) / interval:.1f} "
        f"tokens/s, Avg generation throughput: {(now[1] - last[1]) / interval:.1f} "
        f"tokens/s, Running: {len(stats.running)} reqs, Waiting: {stats.waiting} reqs, "
        f"GPU KV cache usage: {usage:.1f}%, Prefix cache hit rate: 0.0%",
        src="loggers.py:123",
    )
    drafts = now[2] - last[2]
    if not config.speculative or drafts <= 0:
        return
    accepted = (now[3] - last[3]) - drafts
    width = config.max_accept - 1
    positions = ", ".join(f"{(now[4][i] - last[4][i]) / drafts:.3f}" for i in range(width))
    sink.log(
        None,
        f"SpecDecoding metrics: Mean acceptance length: {1 + accepted / drafts:.2f}, "
        f"Accepted throughput: {accepted / interval:.2f} tokens/s, Drafted throughput: "
        f"{drafts * width / interval:.2f} tokens/s, Accepted: {accepted} tokens, Drafted: "
        f"{drafts * width} tokens, Per-position acceptance rate: {positions}, Avg Draft "
        f"acceptance rate: {100 * accepted / (drafts * width):.1f}%",
        src="metrics.py:96",
    )
