"""A dead link is noticed after ServerAliveInterval x ServerAliveCountMax of silence."""

from __future__ import annotations

import pytest

from tests.io.helpers import eventually
from tests.sshd import TestServer, children_of, frozen
from tui.io.transport.dead_link import dead_link_bound, keepalive_kwargs
from tui.io.transport.host_session import Backoff, HostSession, SshConnector
from tui.io.transport.link_events import ConnectionEvent, ConnectionLost, Reconnected


def asyncssh_closes_after(keepalive_interval: float, keepalive_count_max: float) -> float:
    """When asyncssh gives a silent link up: each check counts one more unanswered keep-alive
    and closes the link once the count passes ``keepalive_count_max``."""
    elapsed, count = 0.0, 0
    while True:
        elapsed += keepalive_interval
        count += 1
        if count > keepalive_count_max:
            return elapsed


@pytest.mark.parametrize("count_max", [1, 2, 3, 5])
def test_the_link_is_given_up_at_interval_times_count_max(count_max: int) -> None:
    kwargs = keepalive_kwargs(10.0, count_max)
    closes = asyncssh_closes_after(kwargs["keepalive_interval"], kwargs["keepalive_count_max"])
    assert closes == dead_link_bound(10.0, count_max) == 10.0 * count_max


def test_keepalives_off_have_no_bound() -> None:
    assert dead_link_bound(0, 3) is None
    assert keepalive_kwargs(0, 3)["keepalive_interval"] == 0


def descendants(pids: list[int]) -> list[int]:
    found: list[int] = []
    for pid in pids:
        found += [pid, *descendants(children_of(pid))]
    return found


async def test_a_frozen_server_is_noticed_and_reconnected(ssh_server: TestServer) -> None:
    if ssh_server.kind != "openssh":
        pytest.skip("freezes the per-connection sshd process")
    target = ssh_server.target(keepalive_interval=0.2, keepalive_count_max=2)
    session = HostSession(SshConnector(target), backoff=Backoff(first=0.05, most=0.5))
    events: list[ConnectionEvent] = []
    session.on_event(events.append)
    await session.start()
    try:
        with frozen(descendants(ssh_server.connection_pids())):
            await eventually(lambda: any(isinstance(e, ConnectionLost) for e in events), 20)
            await eventually(lambda: any(isinstance(e, Reconnected) for e in events), 20)
        (lost,) = [e for e in events if isinstance(e, ConnectionLost)]
        assert "keepalive" in lost.reason
        assert (await session.run(["echo", "back"])).stdout == b"back\n"
    finally:
        await session.close()
