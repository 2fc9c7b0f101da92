"""Scraping the simulator's ``/metrics``: figures that follow what it generated, the alarm of
an accept length that collapsed, a server without ``/metrics``, and the back-off."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
import pytest

from tests.simserver import FAST, READY, SimFactory
from tests.sshd import TestServer
from tui.cli import main
from tui.engine.metrics.alarms import AlarmThresholds
from tui.io.metrics.metrics_scrape import (
    MetricsMissing,
    MetricsScraped,
    MetricsScraper,
    ScrapeOptions,
)
from tui.io.transport.host_session import HostSession

FLAGS = ["--time-scale", FAST, "--decode-tok-s", "400", "--ttft-ms", "5", "--accept-len", "3.0"]
SPEC = ["--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "d/eagle3"]


async def _load(url: str, tokens: int) -> None:
    async with httpx.AsyncClient(base_url=url, timeout=60) as client:
        body = {"text": "go", "sampling_params": {"max_new_tokens": tokens}}
        (await client.post("/generate", json=body)).raise_for_status()


def _scraper(url: str, **options: object) -> MetricsScraper:
    async def source() -> str:
        return url

    return MetricsScraper(source, ScrapeOptions(**options))  # type: ignore[arg-type]


async def test_an_accept_length_that_collapses_raises_the_alarm_at_the_next_scrape(
    start_sim: SimFactory,
) -> None:
    sim = start_sim([*FLAGS, *SPEC, "--enable-metrics", "--scenario", "accept-collapse",
                     "--collapse-after", "3.0"])  # fmt: skip
    sim.wait_for(READY)
    thresholds = AlarmThresholds(accept_baseline_s=0.5)
    scraper = _scraper(sim.url, thresholds=thresholds)
    async with scraper.pool() as pool:
        first = await scraper.scrape(pool)
        await _load(sim.url, 300)
        steady = await scraper.scrape(pool)
        await _load(sim.url, 100)
        steady2 = await scraper.scrape(pool)
        await asyncio.sleep(3.0)
        await _load(sim.url, 100)
        collapsed = await scraper.scrape(pool)
    assert isinstance(first, MetricsScraped)
    assert first.engine == "sglang"
    assert isinstance(steady, MetricsScraped)
    assert isinstance(steady2, MetricsScraped)
    assert steady.figures.interval.accept_length == pytest.approx(3.0, rel=0.1)
    assert steady.started == steady2.started == (), (steady.started, steady2.started)
    assert isinstance(collapsed, MetricsScraped)
    assert collapsed.figures.interval.accept_length == pytest.approx(1.0)
    assert {alarm.kind for alarm in collapsed.started} == {"accept-floor", "accept-drop"}


async def test_a_server_without_metrics_says_so_and_is_asked_rarely(start_sim: SimFactory) -> None:
    sim = start_sim(FLAGS)
    sim.wait_for(READY)
    scraper = _scraper(sim.url, interval=0.5, max_interval=20.0)
    async with scraper.pool() as pool:
        report = await scraper.scrape(pool)
    assert isinstance(report, MetricsMissing)
    assert report.absent
    assert "404" in report.reason
    assert scraper.interval == 20.0


async def test_a_slow_answer_doubles_the_interval_and_a_quick_one_restores_it(
    start_sim: SimFactory,
) -> None:
    sim = start_sim([*FLAGS, "--engine", "vllm", "serve", "m"])
    sim.wait_for("Application startup complete.")
    delay = [0.3]

    async def slow_source() -> str:
        await asyncio.sleep(delay[0])
        return sim.url

    scraper = MetricsScraper(slow_source, ScrapeOptions(interval=0.2, max_interval=0.7))
    async with scraper.pool() as pool:
        first = await scraper.scrape(pool)
        assert scraper.interval == pytest.approx(0.4)
        await scraper.scrape(pool)
        assert scraper.interval == pytest.approx(0.7)
        delay[0] = 0.0
        await scraper.scrape(pool)
    assert isinstance(first, MetricsScraped)
    assert first.engine == "vllm"
    assert scraper.interval == pytest.approx(0.2)


async def test_a_server_that_does_not_answer_is_missing_not_an_error() -> None:
    async def nowhere() -> str:
        return "http://127.0.0.1:9"

    scraper = MetricsScraper(nowhere, ScrapeOptions(interval=1.0))
    async with scraper.pool() as pool:
        report = await scraper.scrape(pool)
    assert isinstance(report, MetricsMissing)
    assert not report.absent
    assert report.reason.startswith("/metrics did not answer")
    assert scraper.interval == 2.0


async def test_the_scrape_goes_through_the_ssh_forward(
    start_sim: SimFactory, session: HostSession
) -> None:
    sim = start_sim([*FLAGS, "--engine", "vllm", "serve", "m"])
    sim.wait_for("Application startup complete.")
    port = int(sim.url.rsplit(":", 1)[1])

    async def forwarded() -> str:
        return await session.forward(port)

    scraper = MetricsScraper(forwarded, ScrapeOptions())
    async with scraper.pool() as pool:
        await scraper.scrape(pool)
        async with httpx.AsyncClient(base_url=sim.url, timeout=60) as load:
            body = {"prompt": "go", "max_tokens": 50}
            (await load.post("/v1/completions", json=body)).raise_for_status()
        report = await scraper.scrape(pool)
    assert isinstance(report, MetricsScraped)
    assert report.figures.interval.generated == 50


def test_bringup_stats_reads_a_profiles_server_through_ssh(
    start_sim: SimFactory,
    ssh_server: TestServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    sim = start_sim([*FLAGS, "--engine", "vllm", "serve", "m"])
    sim.wait_for("Application startup complete.")
    config = tmp_path / "config.toml"
    config.write_text(
        f'[profiles.p]\nhost = "{ssh_server.alias}"\nssh_config = "{ssh_server.ssh_config}"\n'
        f'known_hosts = "{ssh_server.known_hosts}"\nengine = "vllm"\nport = {sim.port}\n'
        '[profiles.p.serving]\ninterval = "0.5s"\n'
    )
    code = main(["stats", "p", "--config", str(config), "--json", "--count", "2"])
    reports = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert code == 0
    assert [report["engine"] for report in reports] == ["vllm", "vllm"]
    assert reports[1]["next_scrape_s"] == 0.5
    assert reports[1]["last_10s"]["running"] == 0


def test_bringup_stats_prints_a_line_per_scrape_and_says_when_there_are_no_metrics(
    start_sim: SimFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    sim = start_sim(FLAGS)
    sim.wait_for(READY)
    assert main(["stats", "--url", sim.url, "--count", "1"]) == 0
    line = capsys.readouterr().out
    assert "no metrics: /metrics answered 404: the server exports no metrics" in line
    with pytest.raises(SystemExit) as refused:
        main(["stats", "--url", sim.url, "--interval", "0.01s"])
    assert refused.value.code == 2
    assert "--interval: must be at least 0.1 s" in capsys.readouterr().err
