"""A small SSH server on 127.0.0.1 for ``bringup demo`` and for tests on machines without sshd.

It generates a throwaway host key and client key in a private temporary directory, accepts
only that client key, and runs each requested command for real with ``/bin/sh -c`` in a
subprocess of its own process group: standard input, output and error are piped, the exit
status is returned, signals sent by the client are passed on, and closing the channel stops the
command. Port forwarding is allowed to 127.0.0.1 only. The client side verifies the host key
against the ``known_hosts`` file it writes, exactly as for any other host.

Usage::

    async with EmbeddedSshServer() as server:
        info = server.info            # host, port, keys, known_hosts, ssh_config, alias
        ...
"""

from __future__ import annotations

import asyncio
import contextlib
import getpass
import os
import shutil
import signal
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

import asyncssh

from tui.io.transport.local import stop_process_group

LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost"})
ALIAS = "bringup-demo"
_CHUNK = 64 * 1024


@dataclass(frozen=True, slots=True)
class EmbeddedServerInfo:
    """Where the server listens and the files a client needs to reach it."""

    host: str
    port: int
    username: str
    client_key: Path
    known_hosts: Path
    ssh_config: Path
    alias: str = ALIAS


@dataclass(frozen=True, slots=True)
class Challenge:
    """A keyboard-interactive question the server asks instead of accepting the client key
    (what a one-time-code login looks like to the client)."""

    prompt: str
    answer: str
    instructions: str = ""


class _Server(asyncssh.SSHServer):
    """Key-only authentication (or one keyboard-interactive challenge); forwarding to loopback
    only."""

    def __init__(self, owner: EmbeddedSshServer) -> None:
        self._owner = owner
        self._challenge = owner.challenge

    def connection_made(self, conn: asyncssh.SSHServerConnection) -> None:
        self._owner.connections.add(conn)

    def connection_lost(self, exc: Exception | None) -> None:
        self._owner.connections.difference_update(
            c for c in list(self._owner.connections) if c.is_closed()
        )

    def begin_auth(self, username: str) -> bool:
        return True

    def password_auth_supported(self) -> bool:
        return False

    def kbdint_auth_supported(self) -> bool:
        return self._challenge is not None

    def get_kbdint_challenge(
        self, username: str, lang: str, submethods: str
    ) -> tuple[str, str, str, list[tuple[str, bool]]]:
        assert self._challenge is not None
        return "", self._challenge.instructions, "", [(self._challenge.prompt, False)]

    def validate_kbdint_response(self, username: str, responses: Sequence[str]) -> bool:
        return self._challenge is not None and list(responses) == [self._challenge.answer]

    def connection_requested(
        self, dest_host: str, dest_port: int, orig_host: str, orig_port: int
    ) -> bool:
        if dest_host not in LOOPBACK_NAMES:
            raise asyncssh.ChannelOpenError(
                asyncssh.OPEN_ADMINISTRATIVELY_PROHIBITED, "only 127.0.0.1 may be reached"
            )
        return True


async def _pump_out(source: asyncio.StreamReader, sink: asyncssh.SSHWriter[bytes]) -> None:
    with contextlib.suppress(OSError, asyncssh.Error):
        while chunk := await source.read(_CHUNK):
            sink.write(chunk)
            await sink.drain()


async def _pump_in(source: asyncssh.SSHReader[bytes], sink: asyncio.StreamWriter, pid: int) -> None:
    with contextlib.suppress(OSError, asyncssh.Error):
        while True:
            try:
                data = await source.read(_CHUNK)
            except asyncssh.SignalReceived as received:
                _signal_group(pid, received.signal)
                continue
            if not data:
                break
            sink.write(data)
            await sink.drain()
    with contextlib.suppress(OSError):
        sink.close()


def _signal_group(pid: int, name: str) -> None:
    number = getattr(signal, f"SIG{name}", None)
    if isinstance(number, signal.Signals):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, number)


async def _run_command(process: asyncssh.SSHServerProcess[bytes], owner: EmbeddedSshServer) -> None:
    command = process.command
    if not command:
        process.stderr.write(b"interactive shells are not offered; run a command\n")
        process.exit(1)
        return
    proc = await asyncio.create_subprocess_exec(
        "/bin/sh",
        "-c",
        command,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
        limit=_CHUNK * 4,
    )
    owner.processes.add(proc)
    try:
        await _serve_command(process, proc)
    finally:
        owner.processes.discard(proc)


async def _finish(
    proc: asyncio.subprocess.Process, process: asyncssh.SSHServerProcess[bytes]
) -> None:
    assert proc.stdout is not None
    assert proc.stderr is not None
    await asyncio.gather(
        _pump_out(proc.stdout, process.stdout), _pump_out(proc.stderr, process.stderr)
    )
    await proc.wait()


async def _serve_command(
    process: asyncssh.SSHServerProcess[bytes], proc: asyncio.subprocess.Process
) -> None:
    assert proc.stdin is not None
    assert proc.stdout is not None
    assert proc.stderr is not None
    pumps = asyncio.ensure_future(_finish(proc, process))
    feeder = asyncio.create_task(_pump_in(process.stdin, proc.stdin, proc.pid))
    closed = asyncio.create_task(process.wait_closed())
    await asyncio.wait({pumps, closed}, return_when=asyncio.FIRST_COMPLETED)
    if not pumps.done():
        await stop_process_group(proc)
    with contextlib.suppress(OSError, asyncssh.Error):
        await pumps
    feeder.cancel()
    closed.cancel()
    code = proc.returncode if proc.returncode is not None else -1
    if not process.channel.is_closing():
        process.exit(code if code >= 0 else 128 - code)


class EmbeddedSshServer:
    """An asyncssh server on 127.0.0.1 with throwaway keys; use as an async context manager."""

    def __init__(
        self, host: str = "127.0.0.1", port: int = 0, challenge: Challenge | None = None
    ) -> None:
        self._host = host
        self._port = port
        self.challenge = challenge
        self._dir: Path | None = None
        self._acceptor: asyncssh.SSHAcceptor | None = None
        self._info: EmbeddedServerInfo | None = None
        self.connections: set[asyncssh.SSHServerConnection] = set()
        self.processes: set[asyncio.subprocess.Process] = set()

    @property
    def info(self) -> EmbeddedServerInfo:
        if self._info is None:
            raise RuntimeError("the embedded SSH server is not running")
        return self._info

    async def start(self) -> EmbeddedServerInfo:
        self._dir = Path(tempfile.mkdtemp(prefix="bringup-sshd-"))
        host_key = asyncssh.generate_private_key("ssh-ed25519")
        client_key = asyncssh.generate_private_key("ssh-ed25519")
        client_path = self._dir / "client_ed25519"
        client_key.write_private_key(str(client_path))
        client_path.chmod(0o600)
        self._acceptor = await asyncssh.listen(
            self._host,
            self._port,
            server_host_keys=[host_key],
            authorized_client_keys=None
            if self.challenge is not None
            else asyncssh.import_authorized_keys(client_key.export_public_key().decode()),
            server_factory=lambda: _Server(self),
            process_factory=lambda process: _run_command(process, self),
            encoding=None,
            allow_scp=False,
            agent_forwarding=False,
            x11_forwarding=False,
        )
        port = self._acceptor.get_port()
        self._info = self._write_client_files(host_key, client_path, port)
        return self._info

    def _write_client_files(
        self, host_key: asyncssh.SSHKey, client_path: Path, port: int
    ) -> EmbeddedServerInfo:
        assert self._dir is not None
        known_hosts = self._dir / "known_hosts"
        public = host_key.export_public_key().decode().strip()
        known_hosts.write_text(f"[{self._host}]:{port} {public}\n")
        user = getpass.getuser()
        config = self._dir / "ssh_config"
        config.write_text(
            f"Host {ALIAS}\n"
            f"    HostName {self._host}\n"
            f"    Port {port}\n"
            f"    User {user}\n"
            f'    IdentityFile "{client_path}"\n'
            f'    UserKnownHostsFile "{known_hosts}"\n'
            "    IdentityAgent none\n"
        )
        return EmbeddedServerInfo(self._host, port, user, client_path, known_hosts, config)

    def drop_connections(self) -> int:
        """Abort every client connection at once (what a dropped network link looks like)."""
        dropped = list(self.connections)
        for conn in dropped:
            conn.abort()
        self.connections.clear()
        return len(dropped)

    async def stop(self) -> None:
        if self._acceptor is not None:
            self._acceptor.close()
            self.drop_connections()
            await self._acceptor.wait_closed()
            self._acceptor = None
        await asyncio.gather(*(stop_process_group(p) for p in list(self.processes)))
        self.processes.clear()
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None
        self._info = None

    async def __aenter__(self) -> EmbeddedSshServer:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()
