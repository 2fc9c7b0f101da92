"""The health poll over the session's own connection (SSH channels from the host's side, no port
forward), as the scrape goes: a start-up read from refused to ready, a port nothing listens on
read as refused and not as a lost link, and one channel for poll after poll while the server
keeps it open (the server sees one client port)."""

from __future__ import annotations

import re

from tests.net import free_port
from tests.simserver import FAST, SimFactory
from tui.engine.judge.health import HealthState
from tui.io.health.health_poll import HealthChanged, HealthOptions, HealthPoller
from tui.io.transport.host_session import HostSession
from tui.io.transport.link_events import ConnectionEvent, ConnectionLost
from tui.io.transport.session_network import SessionNetwork

QUICK = HealthOptions(interval=0.05, serving_interval=0.05)
VLLM = ["--time-scale", FAST, "--engine", "vllm", "serve", "m"]
VLLM_STARTED = "Application startup complete."


CLIENT_PORT = re.compile(r"127\.0\.0\.1:(\d+) - \"\w+ /[^\"]*from=bringup")
"""The client's port in the server's access line of one of the monitor's requests."""


def _poller(session: HostSession, port: int, options: HealthOptions = QUICK) -> HealthPoller:
    return HealthPoller(lambda: session.linked_api_url(port), options, SessionNetwork(session))


async def test_a_start_over_the_sessions_channels_goes_from_refused_to_ready(
    session: HostSession, start_sim: SimFactory
) -> None:
    port = free_port()
    poller = _poller(session, port)
    seen: list[HealthChanged] = []
    changes = poller.changes()
    try:
        async for change in changes:
            seen.append(change)
            if len(seen) == 1:
                sim = start_sim(["--time-scale", FAST], port=port)
            if change.ready or len(seen) > 50:
                break
    finally:
        await changes.aclose()
    assert (seen[0].state, seen[0].detail) == (HealthState.REFUSED, "ConnectError")
    assert seen[-1].state is HealthState.READY, seen
    assert seen[-1].status == 200
    assert seen[-1].generation_ms is not None
    text = sim.text()
    assert '"GET /health?from=bringup HTTP/1.1" 200' in text
    assert '"POST /generate?from=bringup HTTP/1.1" 200' in text


async def test_a_port_nothing_listens_on_over_ssh_is_refused_not_a_lost_link(
    session: HostSession,
) -> None:
    events: list[ConnectionEvent] = []
    session.on_event(events.append)
    poller = _poller(session, free_port())
    async with poller.pool() as pool:
        result = await poller.poll(pool)
    assert (result.state, result.status, result.detail) == (
        HealthState.REFUSED,
        None,
        "ConnectError",
    )
    assert (await session.run(["echo", "still"])).stdout == b"still\n"
    assert not [e for e in events if isinstance(e, ConnectionLost)]


async def test_polls_share_one_channel_while_the_server_keeps_it_open(
    session: HostSession, start_sim: SimFactory
) -> None:
    sim = start_sim(VLLM)
    sim.wait_for(VLLM_STARTED)
    # An engine not named is asked each engine's way in turn: SGLang's /generate answers 404,
    # then vLLM's /v1/models and /v1/completions are asked, all on the one connection. The
    # simulator, like uvicorn, closes a connection idle for 5 s; these polls follow each other
    # at once.
    poller = _poller(session, sim.port, HealthOptions(engine="auto"))
    async with poller.pool() as pool:
        results = [await poller.poll(pool) for _ in range(5)]
    assert [r.state for r in results] == [HealthState.READY] * 5, results
    text = sim.text()
    assert len(set(CLIENT_PORT.findall(text))) == 1  # one connection: the server saw one port
    assert text.count("GET /health?from=bringup") == 5
    assert '"POST /generate?from=bringup HTTP/1.1" 404' in text
    assert '"POST /v1/completions?from=bringup HTTP/1.1" 200' in text
