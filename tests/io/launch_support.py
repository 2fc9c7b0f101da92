"""Helpers for the launcher tests: real processes on this machine, inspected through /proc."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Mapping, Sequence
from pathlib import Path

from tests.sshd import proc_stats
from tui.engine.launch.launch_plan import LaunchSpec
from tui.engine.launch.launch_record import RunState, RunStatus
from tui.io.launch.launch_node import Node
from tui.io.launch.launcher import Launcher
from tui.io.transport.local import LocalTransport
from tui.io.transport.transport import CommandResult


class EnvRunner:
    """The local transport with some environment variables changed (another "host")."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self._local = LocalTransport()
        self._env = [f"{key}={value}" for key, value in env.items()]

    async def run(
        self, argv: Sequence[str], *, stdin: bytes = b"", timeout: float | None = None
    ) -> CommandResult:
        return await self._local.run(["env", *self._env, *argv], stdin=stdin, timeout=timeout)


def live_group_members(pgid: int) -> list[int]:
    """Pids of processes in group ``pgid`` that are not zombies."""
    return [
        pid
        for pid, fields in proc_stats()
        if int(fields[2]) == pgid and fields[0] not in ("Z", "X")
    ]


def kill_group(pgid: int) -> None:
    """Clean-up after a test: SIGKILL a group the test itself launched."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def local_launcher(log_dir: Path, command: Sequence[str], **changes: object) -> Launcher:
    """A launcher for a one-node profile ``t`` on this machine, logging under ``log_dir``."""
    values: dict[str, object] = {
        "profile": "t",
        "command": tuple(command),
        "log_dir": str(log_dir),
        "port": None,
        "grace_period": 15.0,
    }
    values.update(changes)
    spec = LaunchSpec(**values)  # type: ignore[arg-type]
    return Launcher(spec, [Node("localhost", LocalTransport())])


async def wait_for_state(
    launcher: Launcher, state: RunState, timeout: float = 60.0
) -> tuple[RunStatus, ...]:
    """Poll the launcher's status until every node is in ``state``."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        statuses = await launcher.status()
        if all(s.state is state for s in statuses) or loop.time() > deadline:
            return statuses
        await asyncio.sleep(0.1)
