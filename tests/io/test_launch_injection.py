"""Hostile profile values reach the host as literal arguments, never as shell text.

Run through the local transport and through a real SSH server, whose remote shell is the
extra layer of parsing that quoting has to survive.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from tests.io.launch_support import wait_for_state
from tests.sshd import TestServer
from tui.engine.launch.launch_plan import LaunchSpec
from tui.engine.launch.launch_record import RunState
from tui.io.launch.launch_node import Node
from tui.io.launch.launcher import Launcher
from tui.io.transport.local import LocalTransport
from tui.io.transport.ssh import SshTransport, connect
from tui.io.transport.transport import Transport

TransportFactory = Callable[[], contextlib.AbstractAsyncContextManager[Transport]]


def hostile(canary: Path) -> list[str]:
    return [
        f"'; touch {canary}; '",
        f"$(touch {canary})",
        f"`touch {canary}`",
        f"\"quoted\" and 'single' ; touch {canary}",
        f"line one\ntouch {canary}",
        f"a && touch {canary} || touch {canary}",
        "{port} {{model}} %s \\ $HOME ~",
    ]


@pytest.fixture(params=["local", "ssh"])
def transport(request: pytest.FixtureRequest, ssh_server: TestServer) -> TransportFactory:
    @contextlib.asynccontextmanager
    async def opened() -> AsyncIterator[Transport]:
        chosen: Transport
        if request.param == "local":
            chosen = LocalTransport()
        else:
            chosen = SshTransport(await connect(ssh_server.target()))
        try:
            yield chosen
        finally:
            await chosen.close()

    return opened


async def run_to_end(spec: LaunchSpec, transport: Transport) -> str:
    launcher = Launcher(spec, [Node("host", transport)])
    result = await launcher.launch()
    assert result.ok, result
    (status,) = await wait_for_state(launcher, RunState.ENDED)
    log = await asyncio.to_thread(Path(result.started[0].plan.paths.log).read_text)
    assert status.exit_status == 0, log
    return log


async def test_hostile_template_values_are_printed_literally(
    tmp_path: Path, transport: TransportFactory
) -> None:
    canary = tmp_path / "canary"
    async with transport() as opened:
        for index, value in enumerate(hostile(canary)):
            spec = LaunchSpec(
                profile=f"inject{index}",
                command=("printf", "%s\\n", "{model}", "--drafter={drafter}"),
                log_dir=str(tmp_path / "logs"),
                model=value,
                drafter=value,
            )
            log = await run_to_end(spec, opened)
            assert log == f"{value}\n--drafter={value}\n"
    assert not canary.exists()


async def test_hostile_environment_and_folders_stay_literal(
    tmp_path: Path, transport: TransportFactory
) -> None:
    canary = tmp_path / "canary"
    odd = tmp_path / f"dir $(touch {canary}) ; 'q' \"d\""
    (odd / "venv" / "bin").mkdir(parents=True)
    value = f"$(touch {canary}); `touch {canary}`"
    spec = LaunchSpec(
        profile="env",
        command=("sh", "-c", 'printf "%s\\n" "$SECRET" "$PWD" "$VIRTUAL_ENV"'),
        log_dir=str(odd / "logs"),
        env=(("SECRET", value),),
        cwd=str(odd),
        venv=str(odd / "venv"),
    )
    async with transport() as opened:
        log = await run_to_end(spec, opened)
    assert log.splitlines() == [value, str(odd), str(odd / "venv")]
    assert not canary.exists()
