"""Fixtures for the I/O tests: a real SSH server on 127.0.0.1 (see :mod:`tests.sshd`)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from tests.sshd import SERVER_ID, TestServer, start_server
from tui.io.session import Backoff, HostSession, SshConnector


@pytest.fixture(scope="session", params=[pytest.param(SERVER_ID, id=SERVER_ID)])
def ssh_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestServer]:
    """One server for the whole session: OpenSSH sshd where installed, else the embedded one."""
    server = start_server(tmp_path_factory.mktemp("sshd"))
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
async def session(ssh_server: TestServer) -> AsyncIterator[HostSession]:
    """A connected session to ``ssh_server`` that reconnects quickly."""
    opened = HostSession(SshConnector(ssh_server.target()), backoff=Backoff(first=0.05, most=0.5))
    await opened.start()
    yield opened
    await opened.close()
