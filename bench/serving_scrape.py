"""Monitor-side CPU cost of scraping the engine's ``/metrics`` while it serves.

Starts the simulator (SGLang, speculative, ``--enable-metrics``) and a benchmark load against it
in processes of their own, then runs the real monitor app headless in this process as
``bringup watch`` builds it (the log tail, the health poll, its own benchmark off), reaching the
host through SSH (``--via ssh``) or directly (``--via local``). Through SSH the server is
OpenSSH's ``sshd`` on 127.0.0.1 when it is installed (``--sshd embedded``: the embedded asyncssh
server, in a process of its own), and the output says which. Once READY the app is measured
for ``--seconds`` without scraping (the baseline, in the same run), then as long with the
serving panel scraping every ``--interval``; ``--rounds`` repeats the pair. ``--scraper-only``
measures the app's scraper alone (``MetricsSetup``'s, no app) against the session left idle,
which leaves the app's repaint out. Prints the CPU time this process spent per wall second in
each, and the difference.

    python -m bench.serving_scrape --seconds 60 --rounds 3
    python -m bench.serving_scrape --scraper-only --seconds 60 --rounds 3
    python -m bench.serving_scrape --via local --interval 0.5

The target is less than 0.5 % of one core added at a 2 s interval.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.fixtures import embedded_ssh_target, free_port, start_sim, wait_answering
from tests.sshd import sshd_binary, start_openssh
from tui.app.monitor.monitor_build import WatchSettings, build_app
from tui.app.monitor.view_model import Target
from tui.config import BenchConfig, ServingConfig
from tui.engine.startup.vocabulary import Verdict
from tui.io.bench.bench_setup import BenchOptions
from tui.io.metrics.metrics_scrape import MetricsScraped, ScrapeOptions
from tui.io.metrics.metrics_setup import MetricsSetup
from tui.io.transport.host_session import HostSession, LocalConnector, SshConnector

Run = dict[str, float]
"""One measured run: CPU and wall seconds, percent of a core, scrapes read."""


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
async def _session(via: str, sshd: str, folder: Path) -> AsyncIterator[HostSession]:
    if via == "local":
        connector: LocalConnector | SshConnector = LocalConnector()
        async with _started(HostSession(connector)) as session:
            yield session
        return
    if sshd == "openssh":
        server = start_openssh(folder / "sshd")
        try:
            async with _started(HostSession(SshConnector(server.target()))) as session:
                yield session
        finally:
            server.stop()
        return
    async with (
        embedded_ssh_target() as target,
        _started(HostSession(SshConnector(target))) as session,
    ):
        yield session


@contextlib.asynccontextmanager
async def _started(session: HostSession) -> AsyncIterator[HostSession]:
    await session.start()
    try:
        yield session
    finally:
        await session.close()


async def _run_app(
    session: HostSession, log: Path, port: int, serving: ServingConfig, seconds: float
) -> Run:
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


async def _run_scraper(session: HostSession, port: int, interval: float, seconds: float) -> Run:
    """The app's scraper alone (no app), or with ``interval`` 0 the session left idle."""
    scrapes = 0

    async def scrape() -> None:
        nonlocal scrapes
        setup = MetricsSetup(session, port, ScrapeOptions(interval=interval))
        async with contextlib.aclosing(setup.scraper().scrapes()) as reports:
            async for report in reports:
                scrapes += isinstance(report, MetricsScraped)

    worker = asyncio.get_running_loop().create_task(scrape()) if interval else None
    await asyncio.sleep(3.0)  # the first scrapes are not measured
    scrapes0 = scrapes
    cpu0, wall0 = time.process_time(), time.monotonic()
    await asyncio.sleep(seconds)
    cpu, wall = time.process_time() - cpu0, time.monotonic() - wall0
    if worker is not None:
        worker.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await worker
    count = scrapes - scrapes0
    return {"cpu_s": cpu, "wall_s": wall, "percent": 100.0 * cpu / wall, "scrapes": count}


async def measure(
    via: str,
    sshd: str,
    interval: float,
    seconds: float,
    rounds: int,
    port: int,
    log: Path,
    scraper_only: bool = False,
) -> list[dict[str, Run]]:
    """``rounds`` pairs of runs: the app without scraping, then with it (or, with
    ``scraper_only``, the session idle, then the app's scraper alone)."""
    off = ServingConfig(metrics=False)
    on = ServingConfig(metrics=True, interval=interval)
    async with _session(via, sshd, log.parent) as session:
        if scraper_only:
            # As the app's log tail does, run a command first: OpenSSH's sshd sets TCP_NODELAY
            # on a connection only once it runs a session (before, each answer waits ~40 ms).
            await session.run(["true"])
            return [
                {
                    "off": await _run_scraper(session, port, 0.0, seconds),
                    "on": await _run_scraper(session, port, interval, seconds),
                }
                for _ in range(rounds)
            ]
        return [
            {
                "off": await _run_app(session, log, port, off, seconds),
                "on": await _run_app(session, log, port, on, seconds),
            }
            for _ in range(rounds)
        ]


def _report(pair: dict[str, Run]) -> tuple[float, float, str]:
    """The CPU added (percent of a core, ms per scrape) and a line saying so."""
    off, on = pair["off"], pair["on"]
    added = on["percent"] - off["percent"]
    per_scrape = 1000 * (on["cpu_s"] - off["cpu_s"] * on["wall_s"] / off["wall_s"])
    per_scrape /= max(on["scrapes"], 1)
    line = (
        f"off {off['percent']:.3f} % of one core, on {on['percent']:.3f} % "
        f"({on['scrapes']:.0f} scrapes, {per_scrape:.2f} ms CPU each); "
        f"added {added:.3f} % of one core"
    )
    return added, per_scrape, line


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--via", choices=("local", "ssh"), default="ssh")
    parser.add_argument(
        "--sshd", choices=("openssh", "embedded"),
        default="openssh" if sshd_binary() is not None else "embedded",
    )  # fmt: skip
    parser.add_argument("--seconds", type=float, default=30.0, help="each run's window")
    parser.add_argument("--rounds", type=int, default=1, help="pairs of runs, off then on")
    parser.add_argument("--interval", type=float, default=2.0)
    parser.add_argument(
        "--scraper-only", action="store_true",
        help="measure the app's scraper alone against the session left idle (no app)",
    )  # fmt: skip
    args = parser.parse_args()
    if args.sshd == "openssh" and sshd_binary() is None:
        parser.error("--sshd openssh: no sshd binary on this machine")
    port = free_port()
    via = args.via if args.via == "local" else f"ssh ({args.sshd} sshd on 127.0.0.1)"
    what = "the scraper alone" if args.scraper_only else "the app"
    print(
        f"serving scrape via {via} every {args.interval:g} s, {args.seconds:g} s per run, "
        f"measuring {what}"
    )
    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "server.log"
        with _serving(port, log):
            pairs = asyncio.run(
                measure(
                    args.via,
                    args.sshd,
                    args.interval,
                    args.seconds,
                    args.rounds,
                    port,
                    log,
                    args.scraper_only,
                )
            )
    reports = [_report(pair) for pair in pairs]
    for number, (_, _, line) in enumerate(reports, 1):
        print(f"round {number}: {line}")
    if len(reports) > 1:
        added = statistics.median(report[0] for report in reports)
        per_scrape = statistics.median(report[1] for report in reports)
        print(
            f"median of {len(reports)} rounds: added {added:.3f} % of one core, "
            f"{per_scrape:.2f} ms CPU per scrape"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
