"""``LogEngine``: bytes in, events and snapshots out. The one path for replay, tail and UI.

Chunks may end anywhere: the partial last line is carried to the next chunk (its completed
``\\r`` redraws are read at once, so a tqdm bar that never ends its line still shows progress),
and the result is the same whatever the chunk boundaries. Memory stays bounded however long the
log: the carry is capped, ranks keep their last line only, decode figures live in rings.

    eng = LogEngine(engine="auto", clock=time.monotonic, node=0)
    upd = eng.feed(chunk)      # Update(events, snapshot)
    upd = eng.finish()         # end of stream: the partial last line counts
    eng.mark_new_run("file replaced")
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from tui.engine.logs.encoding import StreamDecoder
from tui.engine.logs.line_scan import Scanner
from tui.engine.logs.log_line import LogLine
from tui.engine.logs.plain_bytes import odd_spans
from tui.engine.logs.sanitize import MAX_LINE_CHARS, cap_line, clean_segment, overlay
from tui.engine.servers.line_grammar import LineGrammar
from tui.engine.startup.log_events import Event
from tui.engine.startup.snapshot import Snapshot
from tui.engine.startup.startup_model import StartupModel

MAX_CARRY_BYTES = 4 * MAX_LINE_CHARS + 4
"""Bytes of an unfinished line kept in memory; beyond this the rest of the line is counted."""


@dataclass(frozen=True, slots=True)
class Update:
    """What one ``feed`` produced: the meaningful events and the snapshot after them.

    ``lines`` holds the complete lines of the chunk, sanitized and attributed, only when the
    engine was created with ``keep_lines=True`` (a log view needs them; replay does not).
    """

    events: tuple[Event, ...]
    snapshot: Snapshot
    lines: tuple[LogLine, ...] = ()


class LogEngine:
    """Incremental reader of one server log stream."""

    def __init__(
        self,
        engine: str = "auto",
        clock: Callable[[], float] = time.monotonic,
        node: int = 0,
        keep_lines: bool = False,
    ) -> None:
        self._clock = clock
        self._grammar = LineGrammar(engine)
        self._model = StartupModel(self._grammar.engine, clock, node)
        self._scanner = Scanner(self._grammar, self._model)
        self._keep_lines = keep_lines
        self._partial = b""
        self._folded: str | None = None
        self._cut = 0
        self._decoder = StreamDecoder()

    @property
    def snapshot(self) -> Snapshot:
        return self._model.snapshot()

    @property
    def engine(self) -> str:
        """``sglang``, ``vllm`` or ``unknown`` (until a line decides)."""
        return self._grammar.engine

    def feed(self, data: bytes) -> Update:
        """Read a chunk; complete lines are parsed, the rest waits for the next chunk."""
        now = self._clock()
        kept = self._start_batch()
        if not self._decoder.passing:
            data = self._decoder.convert(data)
        end = data.rfind(b"\n")
        if end < 0:
            self._extend_partial(data, now)
            return self._update(kept)
        start = 0
        if self._partial or self._folded is not None or self._cut:
            start = data.find(b"\n") + 1
            self._extend_partial(data[: start - 1], now)
            self._finish_partial(now)
        if start <= end:
            spans = odd_spans(data, start, end + 1) if self._scanner.raw_allowed() else None
            if spans is None:
                self._scanner.scan_text(data[start : end + 1], now)
            else:
                self._scanner.scan_raw(data, start, spans, now)
        self._extend_partial(data[end + 1 :], now)
        return self._update(kept)

    def finish(self) -> Update:
        """End of stream: the partial last line is a line, and open failures are final."""
        now = self._clock()
        kept = self._start_batch()
        if not self._decoder.passing:
            self._extend_partial(self._decoder.convert(b"", final=True), now)
        if self._partial or self._folded is not None or self._cut:
            self._finish_partial(now)
        self._model.settle()
        return self._update(kept)

    def mark_new_run(self, reason: str) -> Update:
        """The stream was replaced or truncated: forget the partial line and start a new run."""
        kept = self._start_batch()
        self._partial, self._folded, self._cut = b"", None, 0
        self._decoder = StreamDecoder()  # a new file may be written otherwise
        self._model.new_run(self._model.lines + 1, reason)
        return self._update(kept)

    # ------------------------------------------------------------------ internals

    def _start_batch(self) -> list[LogLine] | None:
        kept: list[LogLine] | None = [] if self._keep_lines else None
        self._scanner.kept = kept
        return kept

    def _update(self, kept: list[LogLine] | None) -> Update:
        events = tuple(self._model.events)
        self._model.events.clear()
        return Update(events, self._model.snapshot(), tuple(kept) if kept else ())

    def _extend_partial(self, data: bytes, now: float) -> None:
        """Add bytes of the unfinished line; read every redraw it completes."""
        if self._cut:
            stop = data.find(b"\r")
            self._cut += len(data) if stop < 0 else stop
            if stop < 0:
                return
            data = data[stop:]
            self._close_cut()
        raw = self._partial + data
        if b"\r" in data:
            segments = raw.split(b"\r")
            for segment in segments[:-1]:
                self._fold(segment, now)
            raw = segments[-1]
        if len(raw) > MAX_CARRY_BYTES:
            self._cut = len(raw) - MAX_CARRY_BYTES
            raw = raw[:MAX_CARRY_BYTES]
        self._partial = raw

    def _close_cut(self) -> None:
        """The over-long segment ended: keep its head with a note of how much was dropped."""
        head = self._partial.decode("utf-8", "replace")[: MAX_LINE_CHARS - 64]
        dropped = len(self._partial) + self._cut - len(head.encode())
        self._partial = f"{head} [… {dropped} bytes cut]".encode()
        self._cut = 0

    def _fold(self, segment: bytes, now: float) -> None:
        text = clean_segment(segment.decode("utf-8", "replace"))
        self._folded = text if self._folded is None else overlay([self._folded, text])
        self._scanner.redraws([text], self._model.lines + 1, now)

    def _finish_partial(self, now: float) -> None:
        if self._cut:
            self._close_cut()
        redrawn = self._folded is not None
        last = clean_segment(self._partial.decode("utf-8", "replace"))
        if redrawn:
            self._scanner.redraws([last], self._model.lines + 1, now)
        text = cap_line(overlay([self._folded, last]) if self._folded is not None else last)
        self._partial, self._folded = b"", None
        self._scanner.scan_one(text, now, redrawn)
