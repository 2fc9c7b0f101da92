"""One stream of a followed file: bytes passed on, the file checked, a rotation drained.

A :class:`Pump` reads the ``tail`` stream opened by :class:`~tui.io.tail.log_tail.LogTail` and asks
the
file's description every ``probe_interval`` seconds through a
:class:`~tui.io.tail.tail_probe.Prober` (``quiet_probe_factor`` times less often once the log
has been quiet for a few checks).
Each :meth:`Pump.step` returns the items that became known (usually one chunk); the pump is
``finished`` when the stream must be reopened: it ended, the content was rewritten, or a new
file took the name (then the old one is first read until it has been quiet for a moment).
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from typing import Any

from tui.engine.logs.sanitize import printable
from tui.engine.servers.monitor_traffic import monitor_only
from tui.io.tail.tail_probe import Prober
from tui.io.tail.tail_recovery import (
    Previous,
    destroyed,
    find_previous,
    lost_previous,
    old_target,
    relinked,
    relinked_marker,
)
from tui.io.tail.tail_remote import FileReport, Notice, NoticeScanner, ReportError
from tui.io.tail.tail_state import FileState, TailOptions
from tui.io.transport.link_events import Gap, MarkerKind, StreamMarker, TailItem
from tui.io.transport.transport import CommandStream, CommandTimedOut, Transport


@dataclass(frozen=True, slots=True)
class Asked:
    """The fingerprint a check was sent with; its answer is compared with this."""

    epoch: int
    offset: int
    head: bytes
    window: bytes


@dataclass
class CheckOutcome:
    """What a check's answer means: items to show, and whether to stop this stream."""

    items: list[TailItem] = field(default_factory=list)
    restart: bool = False
    replaced_by: FileReport | None = None


@dataclass
class _Drain:
    """Reading what is left of a file that lost its name."""

    replaced_by: FileReport
    previous: Previous | None
    deadline: float
    relinked: bool = False
    """The log's name is a symbolic link that now leads to another file."""


class Pump:
    """Drives one ``tail`` stream; call :meth:`step` until :attr:`finished`, then :meth:`close`."""

    def __init__(
        self,
        path: str,
        options: TailOptions,
        state: FileState,
        spelling: tuple[str, bytes],
        transport: Transport,
        stream: CommandStream,
    ) -> None:
        self.path, self.options, self.state = path, options, state
        self.transport, self.stream = transport, stream
        self.scanner = NoticeScanner(*spelling)
        self.prober = Prober(transport, path, options.command_timeout)
        self.finished = self.ended = False
        self._loop = asyncio.get_running_loop()
        self._reader: asyncio.Task[bytes] | None = None
        self._probe: asyncio.Task[tuple[Asked, FileReport | None]] | None = None
        self._probe_at = self._loop.time() + options.probe_interval
        self._quiet = 0
        """Checks in a row that found nothing, with no byte arriving in between."""
        self._drain: _Drain | None = None
        self._deleted = False
        self._shrunk = 0

    async def accept(self, data: bytes) -> list[TailItem]:
        """Items for stream bytes (file bytes and ``tail``'s notices, in order)."""
        items: list[TailItem] = []
        for part in self.scanner.feed(data) if data else [self.scanner.flush()]:
            items += await self._accept_part(part)
        return items

    async def _accept_part(self, part: bytes | Notice) -> list[TailItem]:
        if isinstance(part, bytes):
            return [self.state.advance(part)] if part else []
        if not part.truncated:
            text = part.text.decode("utf-8", "replace").strip()
            return [StreamMarker(MarkerKind.NOTICE, printable(text))]
        items = await lost_previous(self.transport, self.path, self.state, self.options, None)
        self.state.reset(self.state.identity)
        return items

    async def step(self) -> list[TailItem]:
        """Wait for the next bytes or check result; return what became known."""
        if self._drain is not None:
            return await self._drain_step(self._drain)
        self._reader = self._reader or asyncio.create_task(self.stream.read())
        tasks: set[asyncio.Task[Any]] = {self._reader}
        if self._probe is not None:
            tasks.add(self._probe)
        timeout = None if self._probe else max(0.0, self._probe_at - self._loop.time())
        done, _ = await asyncio.wait(tasks, timeout=timeout, return_when="FIRST_COMPLETED")
        if self._reader in done:
            # Bytes go out before anything else is looked at: once the offset has moved past
            # them, a failure in the same step must not keep them from the reader.
            data, self._reader = self._reader.result(), None
            self.finished = self.ended = not data
            if not monitor_only(data):  # the monitor's own lines leave the log quiet
                if self._quiet >= self.options.quiet_checks:  # the usual pace from the next check
                    self._probe_at = min(self._probe_at, self._loop.time() + self._probe_pause(0))
                self._quiet = 0
            return await self.accept(data)
        if self._probe is not None and self._probe in done:
            return await self._checked(*self._probe.result())
        if self._probe is None and self._loop.time() >= self._probe_at:
            self._probe = asyncio.create_task(self._ask())
        return []

    async def _checked(self, asked: Asked, report: FileReport | None) -> list[TailItem]:
        outcome = self.interpret(asked, report)
        quiet = not (outcome.items or outcome.restart or outcome.replaced_by)
        self._quiet = self._quiet + 1 if quiet else 0
        self._probe, self._probe_at = None, self._loop.time() + self._probe_pause()
        new = outcome.replaced_by
        if new is not None:
            deadline = self._loop.time() + self.options.drain_max
            if relinked(self.state, new):
                previous = await old_target(self.transport, self.state, self.options)
                self._drain = _Drain(new, previous, deadline, relinked=True)
            else:
                previous = await find_previous(self.transport, self.path, self.state, self.options)
                self._drain = _Drain(new, previous, deadline)
        self.finished = outcome.restart
        return outcome.items

    def _probe_pause(self, quiet: int | None = None) -> float:
        """Seconds to the next check: ``probe_interval``, or the quiet pace on a quiet log."""
        if (self._quiet if quiet is None else quiet) >= self.options.quiet_checks:
            return self.options.probe_interval * self.options.quiet_probe_factor
        return self.options.probe_interval

    async def _ask(self) -> tuple[Asked, FileReport | None]:
        state = self.state
        start, window = state.window_request()
        asked = Asked(state.epoch, state.offset, bytes(state.head), bytes(state.recent))
        try:
            return asked, await self.prober.ask(len(asked.head), start, window)
        except (CommandTimedOut, ReportError):
            return Asked(-1, 0, b"", b""), None

    def interpret(self, asked: Asked, report: FileReport | None) -> CheckOutcome:
        """Compare a check's answer with the fingerprint it was asked with."""
        state = self.state
        if asked.epoch != state.epoch:
            return CheckOutcome()
        if report is None:
            return self._removed()
        self._deleted = False
        if report.identity != state.identity:
            return CheckOutcome(replaced_by=report)
        state.target = report.target
        if report.size < asked.offset:
            return self._shrank()
        self._shrunk = 0
        if report.head != asked.head or report.window != asked.window:
            repeat = asked.offset - state.verified
            detail = (
                f"{printable(self.path)} was rewritten in place; reading it again from the "
                f"start (up to {repeat} bytes received just before may repeat)"
            )
            gaps = destroyed(state, printable(self.path), unseen=False, upto=asked.offset)
            state.reset(state.identity)
            marker = StreamMarker(MarkerKind.REWRITTEN, detail)
            return CheckOutcome([*gaps, marker], restart=True)
        state.verify(asked.offset, report.size)
        return CheckOutcome()

    def _removed(self) -> CheckOutcome:
        if self._deleted:
            return CheckOutcome()
        self._deleted = True
        detail = f"{printable(self.path)} was removed; reading what the open file still holds"
        return CheckOutcome([StreamMarker(MarkerKind.DELETED, detail)])

    def _shrank(self) -> CheckOutcome:
        """The file is shorter than our offset: ``tail`` reports it soon, else we start over."""
        self._shrunk += 1
        if self._shrunk < 3:
            return CheckOutcome()
        shown = printable(self.path)
        detail = f"{shown} was truncated at byte {self.state.offset}"
        gaps = destroyed(self.state, shown, unseen=False)
        self.state.reset(self.state.identity)
        return CheckOutcome([*gaps, StreamMarker(MarkerKind.TRUNCATED, detail)], restart=True)

    async def _drain_step(self, drain: _Drain) -> list[TailItem]:
        left = drain.deadline - self._loop.time()
        if left > 0:
            self._reader = self._reader or asyncio.create_task(self.stream.read())
            done, _ = await asyncio.wait({self._reader}, timeout=min(self.options.drain_idle, left))
            if done:
                data, self._reader = self._reader.result(), None
                if data:
                    return await self.accept(data)
            elif drain.previous is not None and self.state.offset < drain.previous.size:
                return []
        self.finished = True
        if drain.relinked:
            items = [
                *self._unread(drain.previous),
                relinked_marker(self.path, self.state.target, drain.replaced_by.target),
            ]
        else:
            items = self._switched(drain.previous)
        self.state.reset(drain.replaced_by.identity)
        return items

    def _unread(self, previous: Previous | None) -> list[TailItem]:
        if previous is None or previous.size <= self.state.offset:
            return []
        lost = previous.size - self.state.offset
        return [Gap(lost, f"{lost} bytes were still unread when following moved on")]

    def _switched(self, previous: Previous | None) -> list[TailItem]:
        shown = printable(self.path)
        items: list[TailItem] = [*self._unread(previous)]
        if previous is not None and previous.renamed:
            name = printable(previous.name)
            detail = f"{shown} was renamed to {name}; following the new {shown}"
            return [*items, StreamMarker(MarkerKind.ROTATED, detail)]
        return [*items, StreamMarker(MarkerKind.REPLACED, f"{shown} was replaced by a new file")]

    async def close(self) -> None:
        for task in (self._reader, self._probe):
            if task is not None and not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        await self.prober.close()
        await self.stream.close()
