"""The embedded SSH server runs real commands for its own client key only."""

from __future__ import annotations

import asyncio
import os
import socket
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tui.io.transport.embedded_sshd import EmbeddedSshServer
from tui.io.transport.link_events import ConnectFailureKind
from tui.io.transport.ssh import ConnectError, SshTarget, SshTransport, connect


@pytest.fixture
async def server() -> AsyncIterator[EmbeddedSshServer]:
    async with EmbeddedSshServer() as running:
        yield running


@pytest.fixture
async def transport(server: EmbeddedSshServer) -> AsyncIterator[SshTransport]:
    info = server.info
    link = await connect(SshTarget(host=info.alias, config_path=info.ssh_config))
    opened = SshTransport(link)
    yield opened
    await opened.close()


async def test_command_runs_with_separate_streams_and_exit_status(
    transport: SshTransport,
) -> None:
    result = await transport.run(["sh", "-c", "echo out; echo err >&2; exit 7"])
    assert (result.status, result.stdout, result.stderr) == (7, b"out\n", b"err\n")


async def test_standard_input_reaches_the_command(transport: SshTransport) -> None:
    result = await transport.run(["wc", "-c"], stdin=b"x" * 100_000)
    assert result.stdout.strip() == b"100000"


async def test_arguments_are_not_reinterpreted_by_a_shell(transport: SshTransport) -> None:
    hostile = "$(echo pwned); `id` 'quote\" \\ *"
    result = await transport.run(["printf", "%s", hostile])
    assert result.stdout.decode() == hostile


async def test_closing_a_stream_stops_the_command_and_its_children(
    server: EmbeddedSshServer, transport: SshTransport, tmp_path: Path
) -> None:
    pidfile = tmp_path / "child.pid"
    script = f"sleep 300 & echo $! > {pidfile}; echo started; wait"
    stream = await transport.open_stream(["sh", "-c", script])
    assert await stream.read() == b"started\n"
    child = int(pidfile.read_text())
    await stream.close()
    for _ in range(100):
        if not server.processes and not _alive(child):
            break
        await asyncio.sleep(0.05)
    assert not server.processes
    assert not _alive(child)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split(") ")[1].startswith("Z"))


async def test_a_foreign_client_key_is_refused(server: EmbeddedSshServer, tmp_path: Path) -> None:
    import asyncssh

    stranger = tmp_path / "stranger"
    asyncssh.generate_private_key("ssh-ed25519").write_private_key(str(stranger))
    info = server.info
    target = SshTarget(
        host=info.host,
        port=info.port,
        user=info.username,
        known_hosts=info.known_hosts,
        identity_files=(stranger,),
        use_agent=False,
        config_path=tmp_path / "empty_config",
    )
    (tmp_path / "empty_config").write_text("")
    with pytest.raises(ConnectError) as caught:
        await connect(target)
    assert caught.value.kind is ConnectFailureKind.AUTH


async def test_forwarding_reaches_loopback_only(transport: SshTransport) -> None:
    listener = await asyncio.start_server(_answer, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    async with listener:
        local = await transport.forward("127.0.0.1", port)
        reader, writer = await asyncio.open_connection("127.0.0.1", local)
        assert await reader.read() == b"hello\n"
        writer.close()
        refused = await transport.forward("192.0.2.1", port)
        reader, writer = await asyncio.open_connection("127.0.0.1", refused)
        assert await reader.read() == b""
        writer.close()


async def _answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    writer.write(b"hello\n")
    await writer.drain()
    writer.close()


async def test_stop_leaves_no_files_or_processes(tmp_path: Path) -> None:
    server = EmbeddedSshServer()
    info = await server.start()
    link = await connect(SshTarget(host=info.alias, config_path=info.ssh_config))
    transport = SshTransport(link)
    await transport.open_stream(["sleep", "300"])
    await asyncio.sleep(0.2)
    assert len(server.processes) == 1
    await server.stop()
    assert not server.processes
    assert not info.client_key.parent.exists()
    with pytest.raises(ConnectionRefusedError), socket.create_connection((info.host, info.port), 1):
        pass
    await transport.close()
