"""The local transport: commands run as subprocesses of this machine.

Used when the monitor runs on the GPU host itself and by ``bringup replay --follow``. It offers
the same interface as the SSH transport, so the log tail and the health poller need no special
case. Commands are executed directly from their argument list (no shell).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Sequence

import httpcore

from tui.io.transport.deadline import within
from tui.io.transport.transport import (
    CHUNK_SIZE,
    STDERR_LIMIT,
    CommandResult,
    CommandStream,
    CommandTimedOut,
    LinkLost,
)

_SOCKETS = httpcore.AnyIOBackend()
"""Plain TCP connections, made from this machine."""
STOP_GRACE = 2.0
"""Seconds a stopped command gets between SIGTERM and SIGKILL."""


async def stop_process_group(proc: asyncio.subprocess.Process, grace: float = STOP_GRACE) -> None:
    """Terminate a process started with ``start_new_session=True`` and everything it spawned."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if proc.returncode is not None:
            break
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, sig)
        try:
            await within(proc.wait(), grace)
        except asyncio.TimeoutError:
            continue
    # Whatever the group leader left behind (a detached child) gets the same treatment.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


def _status(returncode: int | None) -> int:
    return -1 if returncode is None or returncode < 0 else returncode


class LocalStream:
    """A local subprocess whose standard output is read in chunks."""

    def __init__(
        self, proc: asyncio.subprocess.Process, registry: set[LocalStream] | None = None
    ) -> None:
        self._proc = proc
        self._registry = registry
        if registry is not None:
            registry.add(self)
        self._stderr = bytearray()
        self._stderr_task = asyncio.create_task(self._collect_stderr())

    async def _collect_stderr(self) -> None:
        assert self._proc.stderr is not None
        while chunk := await self._proc.stderr.read(CHUNK_SIZE):
            room = STDERR_LIMIT - len(self._stderr)
            if room > 0:
                self._stderr += chunk[:room]

    async def read(self, size: int = CHUNK_SIZE) -> bytes:
        assert self._proc.stdout is not None
        return await self._proc.stdout.read(size)

    async def write(self, data: bytes) -> None:
        if self._proc.stdin is None:
            raise LinkLost("the command was started without standard input")
        try:
            self._proc.stdin.write(data)
            await self._proc.stdin.drain()
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise LinkLost(f"the command stopped reading: {exc}") from exc

    def stderr_text(self) -> str:
        return self._stderr.decode("utf-8", "replace")

    async def close(self) -> int | None:
        if self._registry is not None:
            self._registry.discard(self)
        await stop_process_group(self._proc)
        self._stderr_task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._stderr_task
        return _status(self._proc.returncode)


class LocalTransport:
    """Runs commands on this machine; ``forward`` is the identity."""

    def __init__(self) -> None:
        self._streams: set[LocalStream] = set()
        self._closed = asyncio.Event()

    @property
    def label(self) -> str:
        return "local"

    async def run(
        self, argv: Sequence[str], *, stdin: bytes = b"", timeout: float | None = None
    ) -> CommandResult:
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,
            )
        except OSError as exc:
            return CommandResult(127, b"", str(exc).encode())
        try:
            out, err = await within(proc.communicate(stdin), timeout)
        except asyncio.TimeoutError:
            await stop_process_group(proc)
            raise CommandTimedOut(f"{argv[0]} did not finish within {timeout} s") from None
        except asyncio.CancelledError:
            # Whoever waited went away (the app quit, a worker was cancelled): the command
            # must not outlive the wait.
            await asyncio.shield(stop_process_group(proc))
            raise
        return CommandResult(_status(proc.returncode), out, err)

    async def open_stream(self, argv: Sequence[str], *, stdin: bool = False) -> CommandStream:
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.PIPE if stdin else asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,
                limit=CHUNK_SIZE * 4,
            )
        except OSError as exc:
            raise LinkLost(f"cannot start {argv[0]}: {exc}") from exc
        return LocalStream(proc, self._streams)

    async def forward(self, host: str, port: int) -> int:
        return port

    async def connect_tcp(
        self, host: str, port: int, timeout: float | None = None
    ) -> httpcore.AsyncNetworkStream:
        return await _SOCKETS.connect_tcp(host, port, timeout)

    async def close(self) -> None:
        streams = list(self._streams)
        await asyncio.gather(*(s.close() for s in streams))
        self._closed.set()

    async def wait_closed(self) -> str:
        """Wait until :meth:`close` is called (a local link does not drop by itself)."""
        await self._closed.wait()
        return "the local transport was closed"
