"""An idle server's ``/metrics`` scraped less often: the simulator left idle, then given a real
generation; the scrape loop woken from its long wait; a slow server's doubling kept."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from tests.simserver import FAST, READY, Sim, SimFactory
from tui.io.metrics.metrics_scrape import (
    MetricsMissing,
    MetricsScraped,
    MetricsScraper,
    ScrapeOptions,
)

SGLANG = ["--time-scale", FAST, "--decode-tok-s", "400", "--ttft-ms", "5", "--enable-metrics"]
OPTIONS = ScrapeOptions(interval=1.0, idle_interval=30.0, max_interval=60.0)
"""Scraped by hand, so no interval is waited; 1 s leaves a loaded machine time to answer
before the scrape counts as slow."""


def _idle_sim(start_sim: SimFactory) -> Sim:
    sim = start_sim(SGLANG)
    sim.wait_for(READY)
    return sim


def _scraper(sim: Sim, options: ScrapeOptions = OPTIONS) -> MetricsScraper:
    async def source() -> str:
        return sim.url

    return MetricsScraper(source, options)


async def _generate(sim: Sim, tokens: int) -> None:
    async with httpx.AsyncClient(base_url=sim.url, timeout=60) as client:
        body = {"text": "go", "sampling_params": {"max_new_tokens": tokens}}
        (await client.post("/generate", json=body)).raise_for_status()


def _scraped(report: MetricsScraped | MetricsMissing) -> MetricsScraped:
    assert isinstance(report, MetricsScraped), report
    return report


async def test_three_idle_scrapes_space_the_next_out_and_a_generation_brings_it_back(
    start_sim: SimFactory,
) -> None:
    sim = _idle_sim(start_sim)
    scraper = _scraper(sim)
    async with scraper.pool() as pool, httpx.AsyncClient(base_url=sim.url) as health:
        first = _scraped(await scraper.scrape(pool))
        idle = []
        for _ in range(3):
            # SGLang's /health generates a token that its metrics do not count
            assert (await health.get("/health")).status_code == 200
            idle.append(_scraped(await scraper.scrape(pool)))
        await _generate(sim, 50)
        busy = _scraped(await scraper.scrape(pool))
        after = _scraped(await scraper.scrape(pool))
    assert (first.interval, first.idle) == (1.0, False)  # nothing to compare with yet
    assert [(r.interval, r.idle) for r in idle] == [(1.0, False), (1.0, False), (30.0, True)]
    assert busy.figures.interval.generated == 50
    assert (busy.interval, busy.idle) == (1.0, False)
    assert (after.interval, after.idle, scraper.idle_count) == (1.0, False, 1)


async def test_wake_scrapes_at_once_and_at_the_interval_again(start_sim: SimFactory) -> None:
    sim = _idle_sim(start_sim)
    scraper = _scraper(sim, ScrapeOptions(interval=0.2, idle_interval=600.0, max_interval=1.0))
    reports = scraper.scrapes()
    try:
        seen = [_scraped(await anext(reports)) for _ in range(4)]
        assert seen[-1].idle
        assert seen[-1].interval == 600.0
        scraper.wake()
        assert not scraper.idle
        woken = _scraped(await asyncio.wait_for(anext(reports), 60.0))  # not the 600 s
    finally:
        await reports.aclose()
    assert not any(report.idle for report in seen[:3])
    assert not woken.idle
    assert woken.interval < 600.0
    assert woken.at > seen[-1].at


async def test_a_slow_idle_server_waits_the_longer_of_the_two(start_sim: SimFactory) -> None:
    sim = _idle_sim(start_sim)

    async def slow_source() -> str:
        await asyncio.sleep(0.5)  # more than half of each doubled interval
        return sim.url

    options = ScrapeOptions(interval=0.2, idle_interval=0.5, max_interval=0.7)
    scraper = MetricsScraper(slow_source, options)
    async with scraper.pool() as pool:
        intervals = [_scraped(await scraper.scrape(pool)).interval for _ in range(4)]
    assert scraper.idle
    assert intervals == pytest.approx([0.4, 0.7, 0.7, 0.7])


async def test_a_failed_scrape_ends_the_idle_spacing(start_sim: SimFactory) -> None:
    sim = _idle_sim(start_sim)
    where = [sim.url]

    async def source() -> str:
        return where[0]

    scraper = MetricsScraper(source, OPTIONS)
    async with scraper.pool() as pool:
        spaced = [await scraper.scrape(pool) for _ in range(4)][-1]
        where[0] = "http://127.0.0.1:9"
        missed = await scraper.scrape(pool)
    assert _scraped(spaced).idle
    assert isinstance(missed, MetricsMissing)
    assert not scraper.idle
    assert scraper.interval == 2.0  # the failure's doubling, not the idle spacing
