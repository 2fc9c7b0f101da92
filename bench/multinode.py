"""What watching several nodes as one server costs: merged engine and 32-rank screen.

- ``engine``: four nodes of eight ranks (the simulator's own start-up logs, then node 0 serving
  decode lines) fed through ``ClusterEngine`` in 8 KiB slices, the app's ingest size, next to
  the same bytes through four independent ``LogEngine`` readers. Reports CPU seconds per MB and
  what the merge adds (``time.process_time``, so other work on a shared machine does not count).
- ``screen``: the real app, headless at 160x48 and 240x70, with 32 ranks mid-start (and one
  node of 8 for reference); CPU time of one repaint (``flush``) as the clock ticks, median and
  95th percentile over 200 repaints.

    python -m bench.multinode            # both
    python -m bench.multinode engine     # one
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from collections.abc import Callable

from tui.app.feed.cluster_link import ClusterLink
from tui.app.feed.feed_sources import ScriptedSource
from tui.app.monitor.monitor_app import MonitorApp
from tui.app.monitor.view_model import ConnectionState, Target
from tui.engine.cluster.cluster_engine import ClusterEngine
from tui.engine.logs.log_engine import LogEngine
from tui.sim.config import SimConfig
from tui.sim.sglang_startup import build_sglang
from tui.sim.timeline import Log, Raw

NODES = 4
TP = 32
SLICE = 8 * 1024
DECODE_LINES = 200_000
T0 = 1_780_000_000.0


class Clock:
    """A clock the bench moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def node_log(node: int, nodes: int = NODES, tp: int = TP) -> bytes:
    """Node ``node``'s start-up as the simulator writes it, at full pace, in log form."""
    timeline = build_sglang(SimConfig(tp_size=tp, nnodes=nodes, node_rank=node))
    lines: list[str] = []
    for step in timeline.steps:
        if isinstance(step.action, Log):
            stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(T0 + step.at))
            who = f" {step.action.who}" if step.action.who else ""
            lines.append(f"[{stamp}{who}] {step.action.msg}\n")
        elif isinstance(step.action, Raw):
            lines.append(step.action.text)
    return "".join(lines).encode()


def decode_lines(count: int) -> bytes:
    """Node 0 serving: TP0's decode statistics, one line per batch."""
    out = []
    for index in range(count):
        stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(T0 + 600 + index // 20))
        out.append(
            f"[{stamp} TP0] Decode batch, #running-req: 12, #token: 4096, token usage: 0.01, "
            f"accept len: 2.41, gen throughput (token/s): 812.5, #queue-req: 0\n"
        )
    return "".join(out).encode()


def slices(data: bytes) -> list[bytes]:
    return [data[at : at + SLICE] for at in range(0, len(data), SLICE)]


def timed(work: Callable[[], None]) -> float:
    started = time.process_time()
    work()
    return time.process_time() - started


def bench_engine() -> None:
    logs = [node_log(node) for node in range(NODES)]
    logs[0] += decode_lines(DECODE_LINES)
    pieces = [(node, piece) for node, log in enumerate(logs) for piece in slices(log)]
    total = sum(len(log) for log in logs) / 1e6
    clock = Clock()

    def merged() -> None:
        cluster = ClusterEngine([f"gpu-{k}" for k in range(NODES)], clock=clock)
        for node, piece in pieces:
            clock.now += 0.001
            cluster.feed(node, piece)

    def separate() -> None:
        engines = [LogEngine(clock=clock, node=node) for node in range(NODES)]
        for node, piece in pieces:
            clock.now += 0.001
            engines[node].feed(piece)

    alone, together = timed(separate), timed(merged)
    print(f"engine: {NODES} nodes x {TP // NODES} ranks, {total:.1f} MB in {len(pieces)} slices")
    print(f"  four LogEngines:  {alone:6.2f} s CPU  ({alone / total * 1000:6.1f} ms/MB)")
    print(f"  one ClusterEngine:{together:6.2f} s CPU  ({together / total * 1000:6.1f} ms/MB)")
    print(f"  merge overhead:   {(together - alone) / len(pieces) * 1e6:6.1f} us per slice")


async def screen_cost(size: tuple[int, int], nodes: int, tp: int) -> list[float]:
    clock = Clock()
    hosts = [f"gpu-{k}" for k in range(nodes)]
    link = ClusterLink(hosts, "auto", clock)
    app = MonitorApp(link=link, source=ScriptedSource([]), target=Target("big"), clock=clock)
    logs = [node_log(node, nodes, tp) for node in range(nodes)]
    async with app.run_test(size=size) as pilot:
        app.state.set_connection(ConnectionState.CONNECTED)
        for node, log in enumerate(logs):
            app.state.feed(log[: len(log) // 2], node)
        app.flush()
        await pilot.pause()
        costs = []
        for _ in range(200):
            clock.now += 1.0
            app.state.touch()
            costs.append(timed(app.flush))
            await pilot.pause()
    return costs


def bench_screen() -> None:
    for size, nodes, tp in (((160, 48), 1, 8), ((160, 48), 4, 32), ((240, 70), 4, 32)):
        costs = sorted(asyncio.run(screen_cost(size, nodes, tp)))
        median = statistics.median(costs) * 1000
        p95 = costs[int(len(costs) * 0.95)] * 1000
        print(f"screen {size[0]}x{size[1]}, {nodes} x {tp // nodes} ranks: repaint median "
              f"{median:.2f} ms CPU, p95 {p95:.2f} ms CPU")  # fmt: skip


def main(argv: list[str]) -> None:
    chosen = argv or ["engine", "screen"]
    if "engine" in chosen:
        bench_engine()
    if "screen" in chosen:
        bench_screen()


if __name__ == "__main__":
    main(sys.argv[1:])
