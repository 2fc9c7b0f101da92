"""A long-running remote command read in chunks, with memory bounded by flow control.

The output is queued by an asyncssh session callback. When more than ``HIGH_WATER`` bytes wait
unread, the channel is paused; it resumes once the reader has brought the queue below
``LOW_WATER``. Pausing with this gap between the two marks keeps at most about one SSH window
in flight, however slowly the reader consumes (a reader that resumes the channel after every
small read would let the sender be granted a fresh window each time).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque

import asyncssh

from tui.io.transport.deadline import within
from tui.io.transport.transport import CHUNK_SIZE, STDERR_LIMIT, LinkLost

HIGH_WATER = 4 * 1024 * 1024
LOW_WATER = 1024 * 1024
CLOSE_WAIT = 2.0


class _Session(asyncssh.SSHClientSession[bytes]):
    """Queues standard output, keeps the head of standard error, wakes the reader."""

    def __init__(self) -> None:
        self.chan: asyncssh.SSHClientChannel[bytes] | None = None
        self.queue: deque[bytes] = deque()
        self.queued = 0
        self.stderr = bytearray()
        self.ended = False
        self.error: Exception | None = None
        self.paused = False
        self._waiter: asyncio.Future[None] | None = None

    def connection_made(self, chan: asyncssh.SSHClientChannel[bytes]) -> None:
        self.chan = chan

    def data_received(self, data: bytes, datatype: asyncssh.DataType) -> None:
        if datatype == asyncssh.EXTENDED_DATA_STDERR:
            self.stderr += data[: max(0, STDERR_LIMIT - len(self.stderr))]
            return
        self.queue.append(data)
        self.queued += len(data)
        if self.queued >= HIGH_WATER and not self.paused and self.chan is not None:
            self.paused = True
            self.chan.pause_reading()
        self._wake()

    def eof_received(self) -> bool:
        self.ended = True
        self._wake()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.ended = True
        self.error = exc
        self._wake()

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    async def wait(self) -> None:
        self._waiter = asyncio.get_running_loop().create_future()
        await self._waiter

    def take(self, size: int) -> bytes:
        parts = [self.queue.popleft()]
        total = len(parts[0])
        while self.queue and total + len(self.queue[0]) <= size:
            parts.append(self.queue.popleft())
            total += len(parts[-1])
        self.queued -= total
        if self.paused and self.queued <= LOW_WATER and self.chan is not None:
            self.paused = False
            self.chan.resume_reading()
        return parts[0] if len(parts) == 1 else b"".join(parts)


class SshStream:
    """A remote command whose standard output is read in chunks (no PTY, raw bytes)."""

    def __init__(self, chan: asyncssh.SSHClientChannel[bytes], session: _Session) -> None:
        self._chan = chan
        self._session = session
        self._started = False

    async def read(self, size: int = CHUNK_SIZE) -> bytes:
        session = self._session
        while not session.queue and not session.ended:
            await session.wait()
        if session.queue:
            self._started = True
            return session.take(size)
        if session.error is not None:
            raise LinkLost(str(session.error) or type(session.error).__name__)
        return b""

    async def write(self, data: bytes) -> None:
        try:
            self._chan.write(data)
        except (OSError, asyncssh.Error) as exc:
            raise LinkLost(str(exc) or type(exc).__name__) from exc

    async def close_input(self) -> None:
        """Send end-of-file to the command's standard input."""
        with contextlib.suppress(OSError, asyncssh.Error):
            self._chan.write_eof()

    def stderr_text(self) -> str:
        return self._session.stderr.decode("utf-8", "replace")

    async def close(self) -> int | None:
        """Stop the command: SIGTERM once it has produced output, then close the channel.

        Before any output the host may still be running the login shell's start-up files;
        those are left to finish (the command then meets a closed channel and ends).
        """
        with contextlib.suppress(OSError, asyncssh.Error):
            self._chan.write_eof()
            if self._started and self._chan.get_exit_status() is None:
                self._chan.terminate()
        self._chan.close()
        with contextlib.suppress(OSError, asyncssh.Error, asyncio.TimeoutError):
            await within(self._chan.wait_closed(), CLOSE_WAIT)
        return self._chan.get_exit_status()


async def open_ssh_stream(conn: asyncssh.SSHClientConnection, command: str) -> SshStream:
    """Start ``command`` on ``conn`` and return its stream (raises ``LinkLost``)."""
    session = _Session()
    try:
        chan, _ = await conn.create_session(lambda: session, command, encoding=None)
    except (OSError, asyncssh.Error) as exc:
        raise LinkLost(str(exc) or type(exc).__name__) from exc
    return SshStream(chan, session)
