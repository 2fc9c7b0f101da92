"""Benchmark results and recorded runs for the pane's and the comparison's screens at 80x24."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from textual.pilot import Pilot

from tests.ui.fakes import FakeLink
from tui.app.bench.bench_messages import BenchFinished, BenchLevelFinished, BenchStarted
from tui.app.bench.compare_screen import CompareScreen
from tui.app.feed.feed_sources import ScriptedSource
from tui.app.monitor.monitor_app import MonitorApp
from tui.app.monitor.view_model import Target
from tui.config import BenchConfig
from tui.engine.bench.level_fields import level_from_fields
from tui.engine.bench.level_figures import LevelFigures
from tui.engine.startup.snapshot import ServerInfo, Snapshot
from tui.engine.startup.vocabulary import Outcome, Verdict
from tui.engine.timing.estimate import RunRecord
from tui.engine.timing.fingerprint import Fingerprint
from tui.io.bench.bench_setup import BenchOptions, BenchSetup
from tui.io.store.run_store import RunStore
from tui.io.transport.host_session import HostSession, LocalConnector

MODEL = "moonshotai/Kimi-K2.5"
Before = Callable[[Pilot[int]], Awaitable[None]]


def trials(**means: float) -> dict[str, dict[str, float]]:
    """Three trials per figure with a 1 % spread."""
    return {name: {"n": 3, "mean": m, "std": m * 0.01, "ci95": m * 0.025}
            for name, m in means.items()}  # fmt: skip


def level(
    concurrency: int, tok_s: float, ttft: float, rate: float | None = None, **extra: object
) -> dict[str, object]:
    """A level's saved fields: closed loop at ``concurrency``, or open loop at ``rate``."""
    fields: dict[str, object] = {
        "max_concurrency": concurrency, "completed": 20, "failed": 0,
        "request_throughput": tok_s / 256, "output_throughput": tok_s, "median_ttft_ms": ttft,
        "median_tpot_ms": 12.5, "median_itl_ms": 31.0, "accept_length": 2.5,
        "server_accept_length": 2.48, "server_accept_basis": "differenced",
        "log_accept_length": 2.51, "log_accept_samples": 12, "total_output_tokens": 5120,
        "client_output_tokens": 5120,
        "trials": trials(output_throughput=tok_s, median_ttft_ms=ttft, median_tpot_ms=12.5),
    }  # fmt: skip
    if rate is not None:
        fields |= {"request_rate": rate, "burstiness": 1.0}
    return fields | extra


def bench_app(data_dir: Path | None = None, verdict: Verdict = Verdict.READY) -> MonitorApp:
    """The monitor of a READY server whose benchmark waits for ``b`` (results come by hand)."""
    snapshot = Snapshot(server=ServerInfo(engine="sglang", model=MODEL))
    options = BenchOptions(BenchConfig(mode="off"), profile="kimi", data_dir=data_dir)
    return MonitorApp(
        link=FakeLink(snapshot, verdict),
        source=ScriptedSource([b"ready\n"]),
        target=Target("kimi", "gpu1"),
        bench=BenchSetup(HostSession(LocalConnector()), 30000, "sglang", options, host="gpu1"),
        clock=lambda: 1000.0,
    )


def pane_results() -> list[tuple[str, LevelFigures]]:
    """Two closed-loop levels, one with three trials, an open-loop level, and the engine's
    tool's row at c=1."""
    one = level_from_fields(level(1, 60.2, 152.0, trials={}))
    official = level_from_fields(
        {
            "max_concurrency": 1,
            "completed": 19,
            "failed": 1,
            "request_throughput": 0.22,
            "output_throughput": 57.9,
            "median_ttft_ms": 150.1,
            "median_tpot_ms": 12.6,
            "median_itl_ms": 12.4,
            "server_accept_length": 2.41,
            "server_accept_basis": "lifetime",
            "source": "official sglang",
        }
    )
    return [
        ("c=1", one), ("c=1", official), ("c=4", level_from_fields(level(4, 230.4, 160.3))),
        ("r=8", level_from_fields(level(0, 1900.0, 171.0, rate=8.0, trials={}))),
    ]  # fmt: skip


def show_results(app: MonitorApp) -> Before:
    async def run_before(pilot: Pilot[int]) -> None:
        await pilot.pause()
        title = "generate · 20/40/80 prompts · ~256 in / 256 out · c=1,4 · then official"
        app.bench.post_message(BenchStarted(title, ("c=1", "c=4", "r=8"), 20))
        for label, figures in pane_results():
            app.bench.post_message(BenchLevelFinished(label, figures))
        app.bench.post_message(BenchFinished("saved with run #3"))
        await pilot.pause(0.1)

    return run_before


def populate_runs(data_dir: Path, runs: int = 4) -> list[int]:
    """``runs`` runs of the profile, each faster than the last, at c=1, c=4 and r=8."""
    ids = []
    with RunStore.open_default(configured=data_dir) as store:
        for n in range(runs):
            fp = Fingerprint("sglang", "0.5.23", MODEL, "lmsys/eagle3", "EAGLE3", tp=8,
                             host="gpu1")  # fmt: skip
            at = 1_700_000_000.0 + n * 3600
            run_id = store.add_run(RunRecord(fp, Outcome.READY, 600.0 - n * 20, (), at, "kimi"))
            speed = 1.0 + 0.1 * n
            for fields in (level(1, 60.0 * speed, 150.0), level(4, 230.0 * speed, 160.0),
                           level(0, 1900.0 * speed, 170.0, rate=8.0)):  # fmt: skip
                store.add_bench(level_from_fields(fields), recorded_at=at + 60, run_id=run_id,
                                profile="kimi", model=MODEL)  # fmt: skip
            ids.append(run_id)
    return ids


def open_compare(app: MonitorApp) -> Before:
    async def run_before(pilot: Pilot[int]) -> None:
        await pilot.pause()
        await pilot.press("c")
        for _ in range(200):
            screen = app.screen
            if isinstance(screen, CompareScreen) and screen.loaded:
                break
            await pilot.pause(0.02)
        await pilot.pause(0.1)

    return run_before


def screen_text(app: MonitorApp) -> list[str]:
    """The screen as lines of text."""
    strips = app.screen._compositor.render_strips()
    return ["".join(segment.text for segment in strip).rstrip() for strip in strips]


def utc() -> None:
    """Run labels are local times: make them the same everywhere."""
    time.tzset()
