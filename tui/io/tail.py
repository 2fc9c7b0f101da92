"""A resumable, rotation-aware tail of one log file, over any transport.

The file is read by ``tail -c +OFFSET -f`` on the host (no PTY, 64 KiB chunks, bytes passed on
untouched; lines are split by the engine). The tail remembers the byte offset and a fingerprint
of the file it reads (device and inode, its first bytes, the bytes just before the offset), so:

- after a reconnect it resumes at the offset when the fingerprint still matches, and starts
  from byte 0 of the new file when it does not, saying why;
- truncation, copy-truncate, rename-and-recreate, delete-and-recreate and "truncated, then
  regrown past the old offset" each produce a :class:`~tui.io.events.Marker`; bytes a rotation
  moved elsewhere are read back from the renamed file or the copy, and bytes that are gone are
  counted in a :class:`~tui.io.events.Gap`;
- a file that does not exist yet is waited for.

A check every ``probe_interval`` seconds on the same connection catches what ``tail`` itself
cannot see (content rewritten past the old offset, a new file under the name).
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from tui.io.events import Gap, Marker, MarkerKind, TailItem
from tui.io.tail_probe import Prober
from tui.io.tail_recovery import Previous, find_previous, lost_previous
from tui.io.tail_remote import (
    FileReport,
    Notice,
    NoticeScanner,
    ReportError,
    follow_argv,
    nonce_path,
    parse_report,
    split_header,
)
from tui.io.tail_state import FileState, TailOptions, printable
from tui.io.transport import CommandStream, CommandTimedOut, Transport

__all__ = ["LogTail", "TailOptions"]


@dataclass
class _Opened:
    stream: CommandStream
    report: FileReport | None
    rest: bytes


@dataclass(frozen=True, slots=True)
class _Asked:
    """The fingerprint a check was sent with; its answer is judged against this."""

    epoch: int
    offset: int
    head: bytes
    window: bytes


@dataclass
class _Verdict:
    """What a check's answer means: items to show, and whether to stop this stream."""

    items: list[TailItem] = field(default_factory=list)
    restart: bool = False
    replaced_by: FileReport | None = None


class LogTail:
    """Follows one file; call :meth:`follow` again with a new transport after a reconnect."""

    def __init__(
        self, path: str, start_offset: int = 0, options: TailOptions | None = None
    ) -> None:
        self.path = path
        self.options = options or TailOptions()
        self.state = FileState(start_offset, self.options.head_bytes, self.options.window_bytes)
        self._shown, self._pattern = nonce_path(path, random.getrandbits(32))
        self._followed = False
        self._waiting = False
        self._deleted = False
        self._shrunk = 0
        self._ended = False

    async def follow(self, transport: Transport) -> AsyncIterator[TailItem]:
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
                yield Marker(MarkerKind.APPEARED, f"{printable(self.path)} appeared")
            verdict = await self._check(transport, opened.report, resuming)
            resuming = False
            for item in verdict.items:
                yield item
            if verdict.restart:
                await opened.stream.close()
                continue
            async for item in self._pump(transport, opened):
                yield item
            if self._ended:
                self._ended = False
                await asyncio.sleep(self.options.wait_interval)

    def _missing(self) -> list[Marker]:
        if self._waiting:
            return []
        self._waiting = True
        return [Marker(MarkerKind.WAITING, f"waiting for {printable(self.path)} to appear")]

    async def _open(self, transport: Transport) -> _Opened:
        while True:
            state = self.state
            start, window = state.window_request()
            argv = follow_argv(
                self.path, state.head_request(), start, window, state.offset, self._shown
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

    async def _check(self, transport: Transport, report: FileReport, resuming: bool) -> _Verdict:
        """Compare the file just opened with the one followed; start over when they differ."""
        state = self.state
        if state.identity is None:
            state.adopt(report)
            if report.size >= state.offset:
                return _Verdict()
            detail = f"{printable(self.path)} is shorter than the start offset {state.offset}"
            state.reset(report.identity)
            return _Verdict([Marker(MarkerKind.TRUNCATED, detail)], restart=True)
        if report.identity != state.identity or report.size < state.offset:
            items = await lost_previous(transport, self.path, state, self.options, report)
            state.reset(report.identity)
            return _Verdict(items, restart=True)
        if report.head != bytes(state.head) or report.window != bytes(state.recent):
            detail = f"{printable(self.path)} was rewritten while the link was down"
            state.reset(report.identity)
            return _Verdict([Marker(MarkerKind.REWRITTEN, detail)], restart=True)
        if resuming:
            return _Verdict([Marker(MarkerKind.RESUMED, f"resumed at byte {state.offset}")])
        return _Verdict()

    async def _pump(self, transport: Transport, opened: _Opened) -> AsyncIterator[TailItem]:
        """Pass the stream on and check the file periodically, until something ends it."""
        scanner = NoticeScanner(self._pattern)
        prober = Prober(transport, self.path, self.options.command_timeout)
        loop = asyncio.get_running_loop()
        reader: asyncio.Task[bytes] | None = None
        probe: asyncio.Task[tuple[_Asked, FileReport | None]] | None = None
        probe_at = loop.time() + self.options.probe_interval
        try:
            for part in scanner.feed(opened.rest):
                async for item in self._accept(transport, part):
                    yield item
            while True:
                reader = reader or asyncio.create_task(opened.stream.read())
                tasks: set[asyncio.Task[Any]] = {reader} if probe is None else {reader, probe}
                timeout = None if probe else max(0.0, probe_at - loop.time())
                done, _ = await asyncio.wait(tasks, timeout=timeout, return_when="FIRST_COMPLETED")
                if reader in done:
                    data, reader = reader.result(), None
                    for part in scanner.feed(data) if data else [scanner.flush()]:
                        async for item in self._accept(transport, part):
                            yield item
                    if not data:
                        self._ended = True
                        return
                if probe is not None and probe in done:
                    verdict = self._judge(*probe.result())
                    probe, probe_at = None, loop.time() + self.options.probe_interval
                    for item in verdict.items:
                        yield item
                    if verdict.replaced_by is not None:
                        async for item in self._drain(transport, opened, scanner, reader):
                            yield item
                        reader = None
                        self.state.reset(verdict.replaced_by.identity)
                        return
                    if verdict.restart:
                        return
                elif probe is None and loop.time() >= probe_at:
                    probe = asyncio.create_task(self._probe(prober))
        finally:
            await _cancel(reader, probe)
            await prober.close()
            await opened.stream.close()

    async def _accept(self, transport: Transport, part: bytes | Notice) -> AsyncIterator[TailItem]:
        if isinstance(part, bytes):
            if part:
                yield self.state.advance(part)
            return
        if not part.truncated:
            text = part.text.decode("utf-8", "replace").strip()
            yield Marker(MarkerKind.NOTICE, printable(text))
            return
        for item in await lost_previous(transport, self.path, self.state, self.options, None):
            yield item
        self.state.reset(self.state.identity)

    async def _probe(self, prober: Prober) -> tuple[_Asked, FileReport | None]:
        state = self.state
        start, window = state.window_request()
        asked = _Asked(state.epoch, state.offset, bytes(state.head), bytes(state.recent))
        try:
            return asked, await prober.ask(len(asked.head), start, window)
        except (CommandTimedOut, ReportError):
            return _Asked(-1, 0, b"", b""), None

    def _judge(self, asked: _Asked, report: FileReport | None) -> _Verdict:
        state = self.state
        if asked.epoch != state.epoch:
            return _Verdict()
        if report is None:
            return self._removed()
        self._deleted = False
        if report.identity != state.identity:
            return _Verdict(replaced_by=report)
        if report.size < asked.offset:
            return self._shrank()
        self._shrunk = 0
        if report.head != asked.head or report.window != asked.window:
            repeat = asked.offset - state.verified
            detail = (
                f"{printable(self.path)} was rewritten in place; reading it again from the "
                f"start (up to {repeat} bytes received just before may repeat)"
            )
            state.reset(state.identity)
            return _Verdict([Marker(MarkerKind.REWRITTEN, detail)], restart=True)
        state.verify(asked.offset, report.size)
        return _Verdict()

    def _removed(self) -> _Verdict:
        if self._deleted:
            return _Verdict()
        self._deleted = True
        detail = f"{printable(self.path)} was removed; reading what the open file still holds"
        return _Verdict([Marker(MarkerKind.DELETED, detail)])

    def _shrank(self) -> _Verdict:
        """The file is shorter than our offset: ``tail`` reports it soon, else we start over."""
        self._shrunk += 1
        if self._shrunk < 3:
            return _Verdict()
        self._shrunk = 0
        detail = f"{printable(self.path)} was truncated at byte {self.state.offset}"
        self.state.reset(self.state.identity)
        return _Verdict([Marker(MarkerKind.TRUNCATED, detail)], restart=True)

    async def _drain(
        self,
        transport: Transport,
        opened: _Opened,
        scanner: NoticeScanner,
        reader: asyncio.Task[bytes] | None,
    ) -> AsyncIterator[TailItem]:
        """Read what is left of the old file, then say where it went."""
        previous = await find_previous(transport, self.path, self.state, self.options)
        target = previous.size if previous is not None else None
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.options.drain_max
        while (left := deadline - loop.time()) > 0:
            reader = reader or asyncio.create_task(opened.stream.read())
            done, _ = await asyncio.wait({reader}, timeout=min(self.options.drain_idle, left))
            if not done:
                if target is None or self.state.offset >= target:
                    break
                continue
            data, reader = reader.result(), None
            if not data:
                break
            for part in scanner.feed(data):
                async for item in self._accept(transport, part):
                    yield item
        await _cancel(reader, None)
        for item in self._switched(previous):
            yield item

    def _switched(self, previous: Previous | None) -> list[TailItem]:
        shown = printable(self.path)
        items: list[TailItem] = []
        if previous is not None and previous.size > self.state.offset:
            lost = previous.size - self.state.offset
            items.append(Gap(lost, f"{lost} bytes were still unread when following moved on"))
        if previous is not None and previous.renamed:
            name = printable(previous.name)
            detail = f"{shown} was renamed to {name}; following the new {shown}"
            return [*items, Marker(MarkerKind.ROTATED, detail)]
        return [*items, Marker(MarkerKind.REPLACED, f"{shown} was replaced by a new file")]


async def _cancel(*tasks: asyncio.Task[Any] | None) -> None:
    for task in tasks:
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
