"""An idle server's scrapes spaced out in the app, said on the serving line, and woken by the
log: the real app (``build_app``: the tail, the health poll, the scrape through the session)
on the simulator as SGLang with ``/metrics``, in a headless pilot."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import httpx
from textual.pilot import Pilot

from tests.simserver import FAST, Sim, SimFactory
from tui.app.monitor.monitor_build import WatchSettings, build_app
from tui.app.monitor.view_model import Target
from tui.app.serving.serving_panel import at_work
from tui.app.widgets.content_line import ContentLine
from tui.config import BenchConfig, ServingConfig
from tui.engine.startup.snapshot import DecodeSummary, Snapshot
from tui.io.bench.bench_setup import BenchOptions
from tui.io.transport.host_session import HostSession, LocalConnector

LIMIT_S = 120.0
"""How long a condition may take before the test gives up (never a measured duration)."""


async def _until(pilot: Pilot[int], condition: Callable[[], bool], what: str) -> None:
    give_up = time.monotonic() + LIMIT_S
    while not condition():
        if time.monotonic() > give_up:
            raise AssertionError(f"never happened: {what}")
        await pilot.pause(0.05)


async def _generate(sim: Sim, tokens: int) -> None:
    async with httpx.AsyncClient(base_url=sim.url, timeout=LIMIT_S) as client:
        body = {"text": "go", "sampling_params": {"max_new_tokens": tokens}}
        await client.post("/generate", json=body)


async def test_a_decode_line_wakes_the_scrape_of_an_idle_server(start_sim: SimFactory) -> None:
    sim = start_sim(["--time-scale", FAST, "--decode-tok-s", "100", "--enable-metrics"])
    session = HostSession(LocalConnector())
    settings = WatchSettings(
        target=Target("idle", "local"), log_path=str(sim.log), port=sim.port, engine="sglang",
        serving=ServingConfig(interval=0.3, idle_interval=3600.0),  # only a wake scrapes again
        bench=BenchOptions(BenchConfig(mode="off")),  # no benchmark at READY: the server idles
    )  # fmt: skip
    app = build_app(session, settings)
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            panel = app.serving
            await _until(pilot, lambda: panel.state.idle_every == 3600.0, "spaced out")
            scraper = panel.scraper
            assert scraper is not None
            shown = panel.query_one("#serving-figures", ContentLine)
            await _until(
                pilot,
                lambda: shown.drawn is not None and "idle · every 3600 s" in shown.drawn.plain,
                "the serving line says so",
            )
            answered = asyncio.create_task(_generate(sim, 3000))  # 30 s of decode lines
            try:
                await _until(pilot, lambda: panel.state.idle_every is None, "woken")
                assert not answered.done()  # woken by the decode lines, not the access line
                assert not scraper.idle
                assert panel.state.history[-1].running == 1
            finally:
                answered.cancel()
    finally:
        await session.close()


def test_work_is_a_client_request_or_a_decode_line_that_generated() -> None:
    before = (3, 2)
    assert at_work(before, Snapshot(decode=DecodeSummary(3), requests=3))
    assert at_work(before, Snapshot(decode=DecodeSummary(4, (120.0,)), requests=2))
    assert at_work(before, Snapshot(decode=DecodeSummary(4), requests=2))  # no figure to read
    assert not at_work(before, Snapshot(decode=DecodeSummary(4, (0.0,)), requests=2))  # vLLM V0
    assert not at_work(before, Snapshot(decode=DecodeSummary(3, (120.0,)), requests=2))
    assert not at_work(before, Snapshot())  # a new run counts from zero
