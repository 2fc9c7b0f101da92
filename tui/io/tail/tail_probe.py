"""Periodic checks of a followed file through one long-lived shell on the host.

Each check asks for the file's identity, size, first bytes and the bytes before the offset
(see :data:`~tui.io.tail.tail_remote.PROBE_LOOP`). The shell is started once per connection, so a
check costs three short processes on the host (one ``stat``, two ``od``) rather than a login; a
check of a file that nobody wrote since the last one (same device, inode, size and modification
time) costs the ``stat`` alone, and its answer is the last report.
"""

from __future__ import annotations

import asyncio

from tui.io.tail.tail_remote import (
    NO_KEY,
    FileReport,
    ReportError,
    parse_report,
    probe_loop_argv,
    split_header,
)
from tui.io.transport.deadline import within
from tui.io.transport.transport import CommandStream, CommandTimedOut, LinkLost, Transport


class Prober:
    """Asks one file's description on demand; one question at a time."""

    def __init__(self, transport: Transport, path: str, timeout: float) -> None:
        self._transport = transport
        self._path = path
        self._timeout = timeout
        self._stream: CommandStream | None = None
        self._buffer = b""
        self._last: tuple[str, str, FileReport] | None = None
        """The last full answer: the request it answered, the file's quick key then, the report."""

    async def ask(self, head: int, window_start: int, window: int) -> FileReport | None:
        """The file's report, or None when it does not exist (the last report again when the
        checker says the file has not changed since it was made)."""
        if self._stream is None:
            self._stream = await self._transport.open_stream(
                probe_loop_argv(self._path), stdin=True
            )
        request = f"{head} {window_start} {window}"
        last = self._last
        key = last[1] if last is not None and last[0] == request else NO_KEY
        await self._stream.write(f"{request} {key}\n".encode())
        lines = await self._answer()
        if lines == [b"missing"]:
            self._last = None
            return None
        if lines == [b"same"]:
            if last is None or key == NO_KEY:
                await self.close()
                raise ReportError("the file checker said 'same' to a first question")
            return last[2]
        try:
            report = parse_report(lines)
        except ReportError:
            await self.close()
            raise
        self._last = (request, report.key, report)
        return report

    async def _answer(self) -> list[bytes]:
        """The lines of the checker's next answer (``missing``, ``same`` or a description),
        within the time limit."""
        try:
            return await within(self._lines(), self._timeout)
        except asyncio.TimeoutError:
            await self.close()
            why = f"no answer about {self._path} within {self._timeout} s"
            raise CommandTimedOut(why) from None

    async def _lines(self) -> list[bytes]:
        assert self._stream is not None
        while (parts := split_header(self._buffer)) is None:
            data = await self._stream.read()
            if not data:
                raise LinkLost(f"the file checker ended: {self._stream.stderr_text()[:200]}")
            self._buffer += data
        lines, self._buffer = parts
        return lines

    async def close(self) -> None:
        stream, self._stream = self._stream, None
        self._buffer = b""
        self._last = None
        if stream is not None:
            await stream.close()
