"""A resumable, rotation-aware tail of one log file, over any transport.

The file is read by ``tail -c +OFFSET -f`` on the host (no PTY, 64 KiB chunks, bytes passed on
untouched; lines are split by the engine). The tail remembers the byte offset and a fingerprint
of the file it reads (device and inode, its first bytes, the bytes just before the offset), so:

- after a reconnect it resumes at the offset when the fingerprint still matches, and starts
  from byte 0 of the new file when it does not, saying why;
- truncation, copy-truncate, rename-and-recreate, delete-and-recreate and "truncated, then
  regrown past the old offset" each produce a
  :class:`~tui.io.transport.link_events.StreamMarker`; bytes a rotation moved elsewhere are read
  back from the renamed file or the copy, and bytes that are gone are reported as a
  :class:`~tui.io.transport.link_events.Gap` (of unknown size when nobody saw how many: content
  destroyed while the link was down or while ``tail`` was stuck);
- a log symlink switched to another file is named as such, the old target read to its end;
- a file that does not exist yet is waited for.

A check every ``probe_interval`` seconds on the same connection catches what ``tail`` itself
cannot see (content rewritten past the old offset, a new file under the name).
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field

from tui.engine.logs.sanitize import printable
from tui.io.tail.tail_pump import Pump
from tui.io.tail.tail_recovery import destroyed, left_behind, lost_previous, relinked
from tui.io.tail.tail_remote import (
    FileReport,
    ReportError,
    follow_argv,
    nonce_path,
    parse_report,
    split_header,
)
from tui.io.tail.tail_state import FileState, TailOptions
from tui.io.transport.link_events import MarkerKind, StreamMarker, TailItem
from tui.io.transport.transport import CommandStream, Transport

__all__ = ["LogTail", "TailOptions"]


@dataclass
class _Opened:
    stream: CommandStream
    report: FileReport | None
    rest: bytes


@dataclass
class _Checked:
    """What comparing the opened file with the followed one decided."""

    items: list[TailItem] = field(default_factory=list)
    restart: bool = False


class LogTail:
    """Follows one file; call :meth:`follow` again with a new transport after a reconnect."""

    def __init__(
        self, path: str, start_offset: int = 0, options: TailOptions | None = None
    ) -> None:
        self.path = path
        self.options = options or TailOptions()
        self.state = FileState(start_offset, self.options.head_bytes, self.options.window_bytes)
        self._spelling = nonce_path(path, random.getrandbits(32))
        self._followed = False
        self._waiting = False

    @property
    def spelling(self) -> str:
        """The spelling of ``path`` the host's ``tail`` is given (unique to this tail)."""
        return self._spelling[0]

    async def follow(self, transport: Transport) -> AsyncGenerator[TailItem, None]:
        """Yield items for as long as the transport works (``LinkLost`` is raised through)."""
        resuming = self._followed
        self._followed = True
        while True:
            opened = await self._open(transport)
            if opened.report is None:
                await opened.stream.close()
                for marker in self._missing():
                    yield marker
                await asyncio.sleep(self.options.wait_interval)
                continue
            if self._waiting:
                self._waiting = False
                yield StreamMarker(MarkerKind.APPEARED, f"{printable(self.path)} appeared")
            checked = await self._check(transport, opened.report, resuming)
            resuming = False
            for item in checked.items:
                yield item
            if checked.restart:
                await opened.stream.close()
                continue
            async with contextlib.aclosing(self._stream(transport, opened)) as items:
                async for item in items:
                    yield item

    async def _stream(
        self, transport: Transport, opened: _Opened
    ) -> AsyncGenerator[TailItem, None]:
        """Pass one opened stream on until it must be reopened."""
        pump = Pump(self.path, self.options, self.state, self._spelling, transport, opened.stream)
        try:
            for item in await pump.accept(opened.rest) if opened.rest else []:
                yield item
            while not pump.finished:
                for item in await pump.step():
                    yield item
        finally:
            await pump.close()
        if pump.ended:
            await asyncio.sleep(self.options.wait_interval)

    def _missing(self) -> list[StreamMarker]:
        if self._waiting:
            return []
        self._waiting = True
        return [StreamMarker(MarkerKind.WAITING, f"waiting for {printable(self.path)} to appear")]

    async def _open(self, transport: Transport) -> _Opened:
        while True:
            state = self.state
            start, window = state.window_request()
            argv = follow_argv(
                self.path, state.head_request(), start, window, state.offset, self._spelling[0]
            )
            stream = await transport.open_stream(argv)
            try:
                return await self._read_header(stream)
            except ReportError:
                await stream.close()
                await asyncio.sleep(self.options.wait_interval)

    async def _read_header(self, stream: CommandStream) -> _Opened:
        buffer = b""
        while (parts := split_header(buffer)) is None:
            data = await stream.read()
            if not data:
                raise ReportError(f"the tail ended early: {stream.stderr_text()[:200]}")
            buffer += data
        lines, rest = parts
        report = None if lines == [b"missing"] else parse_report(lines)
        return _Opened(stream, report, rest)

    async def _check(self, transport: Transport, report: FileReport, resuming: bool) -> _Checked:
        """Compare the file just opened with the one followed; start over when they differ."""
        state = self.state
        if state.identity is None:
            state.adopt(report)
            if report.size >= state.offset:
                return _Checked()
            detail = f"{printable(self.path)} is shorter than the start offset {state.offset}"
            state.reset(report.identity)
            return _Checked([StreamMarker(MarkerKind.TRUNCATED, detail)], restart=True)
        if report.identity != state.identity and relinked(state, report):
            items = await left_behind(transport, self.path, state, self.options, report)
            state.reset(report.identity)
            return _Checked(items, restart=True)
        if report.identity == state.identity:
            state.target = report.target
        if report.identity != state.identity or report.size < state.offset:
            items = await lost_previous(
                transport, self.path, state, self.options, report, unseen=resuming
            )
            state.reset(report.identity)
            return _Checked(items, restart=True)
        if report.head != bytes(state.head) or report.window != bytes(state.recent):
            shown = printable(self.path)
            gaps = destroyed(state, shown, unseen=resuming)
            state.reset(report.identity)
            marker = StreamMarker(
                MarkerKind.REWRITTEN, f"{shown} was rewritten while the link was down"
            )
            return _Checked([*gaps, marker], restart=True)
        if resuming:
            return _Checked([StreamMarker(MarkerKind.RESUMED, f"resumed at byte {state.offset}")])
        return _Checked()
