"""Fixtures for the UI tests: a host session to this machine, and cleanup of launched runs."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from tests.io.launch_support import kill_group
from tui.io.transport.host_session import HostSession, LocalConnector


@pytest.fixture
async def session() -> AsyncIterator[HostSession]:
    """A started session to this machine, as ``bringup watch --local`` opens."""
    host = HostSession(LocalConnector())
    await host.start()
    yield host
    await host.close()


@pytest.fixture
def groups(tmp_path: Path) -> Iterator[None]:
    """After the test, kill every process group a launch recorded under ``tmp_path``."""
    yield
    state = tmp_path / ".bringup"
    for pid_file in state.glob("*.pid") if state.is_dir() else []:
        kill_group(int(pid_file.read_text().split()[0]))
