"""Monitor-side CPU cost of scraping the engine's ``/metrics`` while it serves.

Starts the simulator (SGLang, speculative, ``--enable-metrics``) and a benchmark load against it
in processes of their own, then runs the real monitor app headless in this process as
``bringup watch`` builds it (the log tail, the health poll, its own benchmark off), reaching the
host through SSH (``--via ssh``: an embedded SSH server in another process) or directly
(``--via local``). Once READY the app is measured twice for ``--seconds`` each: first without
scraping (the baseline, in the same run), then with the serving panel scraping every
``--interval``. Prints the CPU time this process spent per wall second in both, and the
difference.

    python -m bench.serving_scrape --seconds 60
    python -m bench.serving_scrape --via local --interval 0.5

The target is less than 0.5 % of one core added at a 2 s interval.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.fixtures import embedded_ssh_target, free_port, start_sim, wait_answering
from tui.app.monitor.monitor_build import WatchSettings, build_app
from tui.app.monitor.view_model import Target
from tui.config import BenchConfig, ServingConfig
from tui.engine.startup.vocabulary import Verdict
from tui.io.bench.bench_setup import BenchOptions
from tui.io.transport.host_session import HostSession, LocalConnector, SshConnector


@contextlib.contextmanager
def _serving(port: int, log: Path) -> Iterator[None]:
    """The simulator under a steady benchmark load, both in processes of their own."""
    sim = start_sim(port, [
        "--time-scale", "0.002", "--speculative-algorithm", "EAGLE3",
        "--speculative-draft-model-path", "d/e", "--enable-metrics", "--decode-tok-s", "200",
        "--log-file", str(log),
    ])  # fmt: skip
    load = None
    try:
        url = f"http://127.0.0.1:{port}"
        wait_answering(url, "/metrics", timeout=60)
        load = subprocess.Popen(
            [sys.executable, "-m", "tui", "bench", "--url", url, "--no-save", "--warmup", "0",
             "--concurrency", "8", "--num-prompts", "100000", "--output-len", "2000"],
            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        time.sleep(2.0)
        yield
    finally:
        for process in (load, sim):
            if process is not None:
                process.kill()
                process.wait()


@contextlib.asynccontextmanager
async def _session(via: str) -> AsyncIterator[HostSession]:
    if via == "local":
        session = HostSession(LocalConnector())
        await session.start()
        try:
            yield session
        finally:
            await session.close()
        return
    async with embedded_ssh_target() as target:
        session = HostSession(SshConnector(target))
        await session.start()
        try:
            yield session
        finally:
            await session.close()


async def _run_app(
    session: HostSession, log: Path, port: int, serving: ServingConfig, seconds: float
) -> dict[str, float]:
    """The monitor as ``bringup watch`` builds it (log tail, health poll, and the scrape when
    ``serving.metrics``), its own benchmark off, measured once the server is READY."""
    settings = WatchSettings(
        target=Target("bench", "serving"),
        log_path=str(log),
        port=port,
        engine="sglang",
        bench=BenchOptions(BenchConfig(mode="off")),
        serving=serving,
    )
    app = build_app(session, settings)
    async with app.run_test(size=(160, 48)) as pilot:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            view = app.last_view
            if view is not None and view.verdict is Verdict.READY:
                break
            await pilot.pause(0.2)
        await pilot.pause(3.0)  # set-up and the first scrapes are not measured
        reads0 = app.serving.state.version
        cpu0, wall0 = time.process_time(), time.monotonic()
        await asyncio.sleep(seconds)
        cpu, wall = time.process_time() - cpu0, time.monotonic() - wall0
        reads = app.serving.state.version - reads0
    return {"cpu_s": cpu, "wall_s": wall, "percent": 100.0 * cpu / wall, "scrapes": reads}


async def measure(
    via: str, interval: float, seconds: float, port: int, log: Path
) -> dict[str, dict[str, float]]:
    async with _session(via) as session:
        off = ServingConfig(metrics=False)
        on = ServingConfig(metrics=True, interval=interval)
        return {
            "off": await _run_app(session, log, port, off, seconds),
            "on": await _run_app(session, log, port, on, seconds),
        }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--via", choices=("local", "ssh"), default="ssh")
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--interval", type=float, default=2.0)
    args = parser.parse_args()
    port = free_port()
    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "server.log"
        with _serving(port, log):
            figures = asyncio.run(measure(args.via, args.interval, args.seconds, port, log))
    off, on = figures["off"], figures["on"]
    added = on["percent"] - off["percent"]
    per_scrape = 1000 * (on["cpu_s"] - off["cpu_s"]) / max(on["scrapes"], 1)
    print(
        f"serving scrape via {args.via} every {args.interval:g} s, {args.seconds:g} s each: "
        f"off {off['percent']:.3f} % of one core, on {on['percent']:.3f} % "
        f"({on['scrapes']:.0f} scrapes, {per_scrape:.1f} ms CPU each); "
        f"added {added:.3f} % of one core"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
