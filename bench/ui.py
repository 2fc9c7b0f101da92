"""The monitor's cost in a real terminal: CPU while idle and while busy, stalls, memory.

Each scenario runs the real app (real engine, real widgets) inside a tmux pane of 160x48 with
8 ranks, fed by an in-process source, and reports from inside the app:

- ``idle``: the start's log so far, then nothing; CPU share of one core over 10 s.
- ``busy``: 8 ranks logging 500 lines/s each (4,000 lines/s) for 10 s; CPU share.
- ``backlog``: 100,000 lines arriving at once (as 64 KiB chunks, as the tail delivers them);
  the longest event-loop stall, measured by a 5 ms sleep probe.
- ``memory``: 10,000,000 lines fed as fast as they are handled; resident memory afterwards.

The source puts its chunks into the app's ingest queue as a tail does, so a full queue holds it
back.

    python -m bench.ui              # every scenario (about two minutes)
    python -m bench.ui busy idle    # some
    python -m bench.ui --help       # this text
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

from textual.message import Message

from tui.app.feed.engine_link import EngineAdapter
from tui.app.feed.feed_sources import Put
from tui.app.feed.stream_items import ChunkReceived
from tui.app.monitor.monitor_app import MonitorApp
from tui.app.monitor.view_model import ConnectionState, Target

RANKS = 8
CHUNK = 65536
WINDOW = 10.0
WARMUP = 2.0
SCENARIOS = ("idle", "busy", "backlog", "memory")
TARGETS = {"idle": "< 1 %", "busy": "< 25 %", "backlog": "< 50 ms", "memory": "< 200 MB"}
ROOT = Path(__file__).resolve().parents[1]
SOCKET = "bringup-bench"  # a private tmux server: the user's own sessions are never touched
Post = Callable[[Message], object]


def _stamp(second: int) -> str:
    minutes, secs = divmod(second % 3600, 60)
    return f"2026-03-01 10:{minutes:02d}:{secs:02d}"


def startup_text() -> str:
    lines = [f"[{_stamp(0)}] server_args={{'model_path': 'm', 'tp_size': {RANKS}}}"]
    for tp in range(RANKS):
        lines.append(f"[{_stamp(5)} TP{tp}] Init parallel begin.")
        lines.append(f"[{_stamp(8)} TP{tp}] Load weight begin. avail mem=78.52 GB")
    return "\n".join(lines) + "\n"


def busy_lines(start: int) -> Iterator[str]:
    """Endless per-rank lines, round-robin over ranks: mostly chatter a rank prints while it
    loads (what floods a log at hundreds of lines a second), one in ten a warning and one in
    fifty a decode statistics line."""
    n = start
    while True:
        head = f"[{_stamp(10 + n // 4000)} TP{n % RANKS}]"
        if n % 50 == 0:
            yield (
                f"{head} Decode batch, #running-req: 12, #token: {3456 + n % 97}, token usage: "
                "0.05, accept len: 2.51, gen throughput (token/s): 812.33, #queue-req: 0"
            )
        elif n % 10 == 0:
            yield f"{head} WARNING: expert weight {n % 256} uses a fallback kernel (slower)"
        else:
            yield f"{head} loaded layer {n % 61} expert {n % 256} shard {n % 64} in 0.{n % 97:02d}s"
        n += 1


def chunks(count: int) -> Iterator[bytes]:
    """``count`` lines as the tail would deliver them: 64 KiB chunks cut anywhere."""
    lines = busy_lines(0)
    buffer = bytearray()
    for _ in range(count):
        buffer += next(lines).encode() + b"\n"
        if len(buffer) >= CHUNK:
            yield bytes(buffer[:CHUNK])
            del buffer[:CHUNK]
    if buffer:
        yield bytes(buffer)


class Probe:
    """Measures the event loop from inside: the longest overshoot of a 5 ms sleep."""

    def __init__(self) -> None:
        self.worst = 0.0
        self.running = True
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self.watch_loop())

    async def watch_loop(self) -> None:
        while self.running:
            before = time.perf_counter()
            await asyncio.sleep(0.005)
            self.worst = max(self.worst, time.perf_counter() - before - 0.005)


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def _nothing_waiting() -> None:
    return None


class BenchSource:
    """Feeds the app the way the scenario asks and then reports through ``done``."""

    def __init__(self, scenario: str, probe: Probe) -> None:
        self.scenario = scenario
        self.probe = probe
        self.done: Callable[[dict[str, float]], None] = lambda result: None
        self.settled: Callable[[], Awaitable[None]] = _nothing_waiting
        self.backlog_chunks: list[bytes] = []

    async def run(self, post: Post, put: Put) -> None:
        await put(ChunkReceived(startup_text().encode()))
        backlog = list(chunks(100_000)) if self.scenario == "backlog" else []
        await asyncio.sleep(WARMUP)
        if self.scenario == "backlog":
            self.backlog_chunks = backlog
            self.probe.start()
        runner = getattr(self, f"_{self.scenario}")
        self.done(await runner(put))

    async def _idle(self, put: Put) -> dict[str, float]:
        start = time.process_time()
        await asyncio.sleep(WINDOW)
        return {"cpu_percent": 100 * (time.process_time() - start) / WINDOW}

    async def _busy(self, put: Put) -> dict[str, float]:
        lines = busy_lines(0)
        per_tick = int(RANKS * 500 * 0.05)
        start, began, sent = time.process_time(), time.monotonic(), 0
        while (elapsed := time.monotonic() - began) < WINDOW:
            due = int(elapsed / 0.05) + 1
            while sent < due:
                text = "\n".join(next(lines) for _ in range(per_tick)) + "\n"
                await put(ChunkReceived(text.encode()))
                sent += 1
            await asyncio.sleep(0.05)
        cpu = 100 * (time.process_time() - start) / WINDOW
        return {"cpu_percent": cpu, "lines_per_second": sent * per_tick / WINDOW}

    async def _backlog(self, put: Put) -> dict[str, float]:
        self.probe.worst = 0.0
        began = time.perf_counter()
        for chunk in self.backlog_chunks:
            await put(ChunkReceived(chunk))
        await self.settled()
        return {"max_stall_ms": 1000 * self.probe.worst, "seconds": time.perf_counter() - began}

    async def _memory(self, put: Put) -> dict[str, float]:
        began = time.perf_counter()
        for chunk in chunks(10_000_000):
            await put(ChunkReceived(chunk))  # the full queue holds it back, as it holds a tail
        await self.settled()
        await asyncio.sleep(1.0)
        return {"rss_mb": rss_mb(), "seconds": time.perf_counter() - began}


def child(scenario: str, out: Path) -> int:
    """Run inside the tmux pane: the app with the scenario's source; results to ``out``."""
    probe = Probe()
    source = BenchSource(scenario, probe)
    app = MonitorApp(link=EngineAdapter(), source=source, target=Target("bench"))

    def done(result: dict[str, float]) -> None:
        probe.running = False
        out.write_text(json.dumps(result))
        app.exit()

    source.done = done
    source.settled = app.ingest.settled
    app.state.set_connection(ConnectionState.CONNECTED)
    app.run()
    return 0


def in_tmux(scenario: str) -> dict[str, float]:
    folder = Path(tempfile.mkdtemp(prefix="bringup-bench-"))
    out = folder / "result.json"
    session = f"bringup-bench-{os.getpid()}-{scenario}"
    command = f"{sys.executable} -m bench.ui --child {scenario} {out}"
    subprocess.run(
        ["tmux", "-L", SOCKET, "new-session", "-d", "-s", session, "-x", "160", "-y", "48",
         "-c", str(ROOT), command],
        check=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 1800
        while not out.exists() and time.monotonic() < deadline:
            time.sleep(0.5)
        return json.loads(out.read_text()) if out.exists() else {}
    finally:
        subprocess.run(["tmux", "-L", SOCKET, "kill-session", "-t", session], check=False,
                       capture_output=True)  # fmt: skip
        shutil.rmtree(folder, ignore_errors=True)


def main(argv: list[str]) -> int:
    if argv[:1] == ["--child"]:
        return child(argv[1], Path(argv[2]))
    unknown = [name for name in argv if name not in SCENARIOS]
    if unknown:
        print(__doc__ if unknown[0] in ("-h", "--help") else f"unknown scenario {unknown[0]!r}")
        return 0 if unknown[0] in ("-h", "--help") else 2
    if shutil.which("tmux") is None:
        print("tmux is needed to measure the app in a real terminal")
        return 1
    for scenario in argv or SCENARIOS:
        result = in_tmux(scenario)
        figures = ", ".join(f"{key} {value:.2f}" for key, value in result.items())
        print(f"{scenario:8} {figures or 'no result'}   (target {TARGETS[scenario]})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
