"""The interface every host connection offers, remote (SSH) or local.

A transport runs commands given as argument lists (never as shell strings), streams a
long-running command's standard output in chunks, opens a local port that reaches a port on
the host or a TCP connection from the host's side, and closes. The log tail, the health poller
and the launcher are written against this protocol only, so the same code drives an SSH host,
the local machine and the embedded demo server.

Failures of the link itself (the connection dropped, a channel could not be opened) raise
:class:`LinkLost`; a command that fails on the host is not an exception but a non-zero
:attr:`CommandResult.status`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import httpcore

CHUNK_SIZE = 64 * 1024
"""Bytes asked for per read of a streamed command's output."""

STDERR_LIMIT = 64 * 1024
"""At most this many bytes of a streamed command's standard error are kept."""


class TransportError(Exception):
    """Base class of the errors a transport raises."""


class LinkLost(TransportError):
    """The connection to the host is gone (or a channel on it could not be opened)."""


class CommandTimedOut(TransportError):
    """A command did not finish within its time limit (it has been stopped)."""


@dataclass(frozen=True, slots=True)
class CommandResult:
    """What a finished command returned. ``status`` is -1 when it was ended by a signal."""

    status: int
    stdout: bytes
    stderr: bytes

    @property
    def ok(self) -> bool:
        return self.status == 0


class CommandStream(Protocol):
    """A running command whose standard output is read in chunks."""

    async def read(self, size: int = CHUNK_SIZE) -> bytes:
        """Return the next bytes of output (at most ``size``), or ``b""`` once it ended."""
        ...

    async def write(self, data: bytes) -> None:
        """Send bytes to the command's standard input (opened with ``stdin=True``)."""
        ...

    def stderr_text(self) -> str:
        """Standard error received so far (bounded, decoded with replacement)."""
        ...

    async def close(self) -> int | None:
        """Stop the command if still running; return its exit status when known."""
        ...


class Transport(Protocol):
    """One connection to one host."""

    @property
    def label(self) -> str:
        """A short name of the host for messages (``user@host:port`` or ``local``)."""
        ...

    async def run(
        self, argv: Sequence[str], *, stdin: bytes = b"", timeout: float | None = None
    ) -> CommandResult:
        """Run a command to completion and collect its output."""
        ...

    async def open_stream(self, argv: Sequence[str], *, stdin: bool = False) -> CommandStream:
        """Start a command and return a handle to read its output as it is produced.

        With ``stdin=True`` the command's standard input stays open for
        :meth:`CommandStream.write`; otherwise it reads end-of-file at once.
        """
        ...

    async def forward(self, host: str, port: int) -> int:
        """Return a local TCP port on 127.0.0.1 that reaches ``host:port`` as seen by the host."""
        ...

    async def connect_tcp(
        self, host: str, port: int, timeout: float | None = None
    ) -> httpcore.AsyncNetworkStream:
        """Open a TCP connection to ``host:port`` as seen by the host (``httpcore.ConnectError``
        when nothing listens there, :class:`LinkLost` when the link is gone)."""
        ...

    async def close(self) -> None:
        """Close the connection and everything running on it."""
        ...
