"""The app's scrape over the session's own connection (SSH channels from the host's side, no
port forward): it follows a reconnect, opens a new channel where the server closed an idle one,
and a port nothing listens on is a missing scrape, not a lost link. It asks for the server where
its job was placed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.io.helpers import eventually
from tests.net import free_port
from tests.simserver import FAST, Sim, SimFactory
from tests.sshd import TestServer
from tui.io.metrics.metrics_scrape import MetricsMissing, MetricsScraped
from tui.io.metrics.metrics_setup import MetricsSetup
from tui.io.transport.host_session import ApiNotPlaced, HostSession, LocalConnector
from tui.io.transport.link_events import ConnectionEvent, ConnectionLost, Reconnected

VLLM = ["--time-scale", FAST, "--decode-tok-s", "400", "--engine", "vllm", "serve", "m"]
STARTED = "Application startup complete."


@pytest.fixture
def sim(tmp_path: Path) -> Iterator[Sim]:
    """A vLLM simulator serving ``/metrics``."""
    factory = SimFactory(tmp_path)
    started = factory(VLLM)
    started.wait_for(STARTED)
    yield started
    factory.close()


async def _generate(sim: Sim, tokens: int) -> None:
    async with httpx.AsyncClient(base_url=sim.url, timeout=60) as client:
        body = {"prompt": "go", "max_tokens": tokens}
        (await client.post("/v1/completions", json=body)).raise_for_status()


async def test_the_scrape_rides_the_sessions_connection_across_a_reconnect(
    sim: Sim, session: HostSession, ssh_server: TestServer
) -> None:
    events: list[ConnectionEvent] = []
    session.on_event(events.append)
    scraper = MetricsSetup(session, sim.port).scraper()
    async with scraper.pool() as pool:
        first = await scraper.scrape(pool)
        ssh_server.drop_connections()
        await eventually(lambda: any(isinstance(e, Reconnected) for e in events), state=events)
        await _generate(sim, 30)
        after = await scraper.scrape(pool)
    assert isinstance(first, MetricsScraped), first
    assert isinstance(after, MetricsScraped), after
    assert after.figures.interval.generated == 30


async def test_a_channel_the_server_closed_while_idle_is_not_used_again(
    sim: Sim, session: HostSession
) -> None:
    scraper = MetricsSetup(session, sim.port).scraper()
    async with scraper.pool() as pool:
        first = await scraper.scrape(pool)
        idle = pool.connections[0]
        # The simulator, like uvicorn, closes a connection idle for 5 s.
        await eventually(idle.has_expired, timeout=30)
        await _generate(sim, 20)
        second = await scraper.scrape(pool)
        assert pool.connections != [idle]
    assert isinstance(first, MetricsScraped), first
    assert isinstance(second, MetricsScraped), second
    assert second.figures.interval.generated == 20


async def test_a_port_nothing_listens_on_is_a_missing_scrape_not_a_lost_link(
    session: HostSession,
) -> None:
    events: list[ConnectionEvent] = []
    session.on_event(events.append)
    scraper = MetricsSetup(session, free_port()).scraper()
    async with scraper.pool() as pool:
        report = await scraper.scrape(pool)
    assert isinstance(report, MetricsMissing)
    assert report.reason.startswith("/metrics did not answer"), report.reason
    assert not report.absent
    assert (await session.run(["echo", "still"])).stdout == b"still\n"
    assert not [e for e in events if isinstance(e, ConnectionLost)]


async def test_a_local_session_scrapes_with_this_machines_own_sockets(sim: Sim) -> None:
    session = HostSession(LocalConnector())
    await session.start()
    try:
        scraper = MetricsSetup(session, sim.port).scraper()
        async with scraper.pool() as pool:
            await scraper.scrape(pool)
            await _generate(sim, 10)
            report = await scraper.scrape(pool)
    finally:
        await session.close()
    assert isinstance(report, MetricsScraped), report
    assert report.engine == "vllm"
    assert report.figures.interval.generated == 10


async def test_the_scrape_asks_for_the_servers_address_where_its_job_was_placed() -> None:
    session = HostSession(LocalConnector())
    session.hold_api()
    setup = MetricsSetup(session, 30000)
    with pytest.raises(ApiNotPlaced):
        await setup.url()
    session.place_api("node-7")
    assert await setup.url() == "http://node-7:30000"
    session.place_api("fd00::7")
    assert await setup.url() == "http://[fd00::7]:30000"
