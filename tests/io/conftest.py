"""Fixtures for the I/O tests: a session to the real SSH server on 127.0.0.1 (``ssh_server``
in ``tests/conftest.py``), and the process groups a launch test started."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from tests.io.launch_support import kill_group
from tests.sshd import TestServer
from tui.io.transport.host_session import Backoff, HostSession, SshConnector


@pytest.fixture
async def session(ssh_server: TestServer) -> AsyncIterator[HostSession]:
    """A connected session to ``ssh_server`` that reconnects quickly."""
    opened = HostSession(SshConnector(ssh_server.target()), backoff=Backoff(first=0.05, most=0.5))
    await opened.start()
    yield opened
    await opened.close()


@pytest.fixture
def groups() -> Iterator[list[int]]:
    """Process groups a test started; whatever is left of them is killed afterwards."""
    started: list[int] = []
    yield started
    for pgid in started:
        kill_group(pgid)
