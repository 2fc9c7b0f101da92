"""Runs of a serving SGLang log absorbed a few passes at a time, not line by line.

Once a server is serving, almost every line is a decode, prefill, access or quiet line whose
meaning its first 40 characters decide (``tui.engine.servers.sglang.sglang_shapes``). For such
lines the
per-line fast path (``Scanner.scan_fast``) only notes the line's rank, queues decode lines and,
for the first decode line of each rank and the first access line in each ten log seconds,
produces an event. The same can be worked out for a whole batch of lines with operations that
loop in C: slicing every line's stamp and key with ``map``, counting keys with ``Counter``,
finding the first line of a rank in a ten-second bucket with ``compress`` and ``bisect``, and
joining the decode lines. Python code runs once per distinct key, stamp or message, and once
per event. Lines stay bytes (printable ASCII, see ``tui.engine.logs.plain_bytes``) until one is
needed as text: an event's line, a rank's last line, the joined decode lines.

A ``Plan`` classifies a batch. The lines the fast path would send through the full grammar
(*slow* lines: unknown shapes or ranks, invalid stamps, messages that may mean something,
server errors) split it into *runs* of plain lines. Each run is absorbed in bulk; each slow line
goes through the grammar exactly as in the fast path; when a slow line changed what the plan
assumed (a new run or rank, the end of serving, an open failure) the rest is planned again.
Whatever a plan cannot settle cheaply (fractions of a second, stamps out of order, many ranks,
an access line that does not parse) goes through ``Scanner.scan_fast``, the reference: both
give the same events, line numbers, log times, per-rank counts and last lines.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, NamedTuple

from tui.engine.logs.bulk_plan import Batch, Bucket, Codes, Keys, Plan, make_plan
from tui.engine.servers.common_patterns import parse_access
from tui.engine.servers.sglang.sglang_shapes import KEY_START

if TYPE_CHECKING:
    from tui.engine.logs.line_scan import Scanner
    from tui.engine.logs.plain_bytes import Span
    from tui.engine.servers.hits import RequestHit

MIN_LINES = 32
"""Shorter batches go line by line: planning costs more than it saves."""
MAX_PLANS = 4
"""Plans per batch; after that many changes of state the rest goes line by line."""


class _Event(NamedTuple):
    row: int
    """The line's index in the batch."""
    tag: str
    at: int
    request: RequestHit | None
    """None for a decode line."""


class BulkReader:
    """Reads batches of complete lines for a ``Scanner``, in bulk where the plan allows."""

    def __init__(self, scanner: Scanner) -> None:
        self.scanner = scanner
        self.keys = Keys((-1, 0, False))

    def scan(self, data: bytes, start: int, odd: list[Span], now: float) -> None:
        """Process the complete lines of ``data`` from ``start`` (numbered from
        ``model.lines + 1``) as ``scan_fast`` would, but for the ``odd`` ones, which take the
        text path in their turn (see ``Scanner.scan_raw``)."""
        lines = data.split(b"\n")
        lines.pop()
        if start:
            del lines[: data.count(b"\n", 0, start)]
        rows = _odd_rows(lines, data, odd)
        scanner = self.scanner
        scanner.check_run()
        if len(lines) < MIN_LINES or not scanner.fast_allowed():
            self._line_by_line(lines, rows, 0, now)
            return
        batch = Batch(lines, rows, scanner.model.lines)
        done = 0
        for _ in range(MAX_PLANS):
            plan = make_plan(scanner, self._keys(), batch, done)
            if plan is None:
                break
            done = self._follow(batch, plan, now)
            if done == len(lines):
                if scanner.fast_allowed():
                    _sync(scanner, batch, done, now)
                return
            if not scanner.fast_allowed():
                break
            scanner.check_run()
        self._line_by_line(lines, rows, done, now)

    def _line_by_line(
        self, lines: list[bytes], odd: dict[int, bytes], start: int, now: float
    ) -> None:
        """Lines from ``start`` on through the per-line fast path, odd ones through the text
        path."""
        scanner = self.scanner
        for row in [*(row for row in odd if row >= start), len(lines)]:
            if start < row:
                scanner.scan_fast(_texts(lines, start, row), now)
            if row == len(lines):
                break
            scanner.scan_text(odd[row], now)
            start = row + 1

    def _keys(self) -> Keys:
        """The classification of keys, started over when the state changed."""
        signature = self._signature()
        if not self.keys.usable(signature):
            self.keys = Keys(signature)
        return self.keys

    def _signature(self) -> tuple[int, int, bool]:
        model = self.scanner.model
        return (model.runs_before, len(model.ranks), self.scanner.fast_allowed())

    def _follow(self, batch: Batch, plan: Plan, now: float) -> int:
        """Runs and slow lines from ``plan.start`` until the end of the batch, or until the
        state the plan assumed changed; returns where it stopped."""
        signature = self._signature()
        start, end = plan.start, len(batch.lines)
        for slow in [*plan.slow, end]:
            if start < slow and not self._absorb(batch, plan, start, slow, now):
                self.scanner.scan_fast(_texts(batch.lines, start, slow), now)
                if self._signature() != signature:
                    return slow
            if slow == end:
                break
            if slow in batch.odd:
                _sync(self.scanner, batch, slow, now)
                self.scanner.scan_text(batch.odd[slow], now)
            else:
                self._slow_line(batch, slow, now)
            start = slow + 1
            if self._signature() != signature:
                return start
        return end

    def _slow_line(self, batch: Batch, index: int, now: float) -> None:
        """A slow line through the full grammar, as the per-line path reads it."""
        scanner, line = self.scanner, batch.lines[index].decode("ascii")
        _sync(scanner, batch, index, now)
        scanner.stamp = line[:KEY_START]
        number = batch.base + index + 1
        owner = scanner.line(line, number, now)
        scanner.model.lines = number
        if owner is not None:
            scanner.model.absorb({owner: line}, {owner: 1}, now)

    # ------------------------------------------------------------------ runs

    def _absorb(self, batch: Batch, plan: Plan, start: int, stop: int, now: float) -> bool:
        """Absorb the plain lines ``start`` to ``stop``; False (and nothing done) when the
        run needs the per-line path."""
        buckets = [
            (max(first, start), min(last, stop), stamp)
            for first, last, stamp in plan.buckets
            if first < stop and last > start
        ]
        events = self._events(batch, plan, buckets)
        if events is None:
            return False
        scanner, model = self.scanner, self.scanner.model
        for event in events:
            self._emit(batch, event, now)
        self._keep_decode(plan, start, stop)
        requests = plan.selector(plan.keys.access).count(1, start, stop)
        model.requests += requests - sum(event.request is not None for event in events)
        model.absorb(*_owners(plan, start, stop), now)
        model.lines = batch.base + stop
        scanner.stamp = buckets[-1][2].decode("ascii")
        return True

    def _events(self, batch: Batch, plan: Plan, buckets: list[Bucket]) -> list[_Event] | None:
        """The run's decode and request events in line order; None if an access line that
        makes an event does not parse (the per-line path then reads it in full)."""
        events = [
            event
            for tag, codes in plan.keys.decode.items()
            for event in _decode_events(plan, tag, codes, buckets, self.scanner)
        ]
        requests = _request_events(batch, plan, buckets, self.scanner.model.request_ts)
        if requests is None:
            return None
        return sorted([*events, *requests])

    def _emit(self, batch: Batch, event: _Event, now: float) -> None:
        """The event of a plain line, as the per-line fast path gives it."""
        scanner, number = self.scanner, batch.base + event.row + 1
        line = batch.lines[event.row].decode("ascii")
        ts_text = line[1 : KEY_START + 1]  # a plain line's stamp has no fraction of a second
        if event.request is None:
            scanner.decode_event(event.tag, line, event.at, number, now, ts_text)
        else:
            when = scanner.event_time(event.tag, line, event.at, number, now, ts_text)
            scanner.model.request_seen(event.tag, event.request, when)

    def _keep_decode(self, plan: Plan, start: int, stop: int) -> None:
        wanted = plan.keys.decode_all
        if plan.selector(wanted).find(1, start, stop) >= 0:
            chosen = plan.chosen(wanted, start, stop)
            self.scanner.model.decode.add_text(b"\n".join(chosen).decode("ascii"), len(chosen))


def _owners(plan: Plan, start: int, stop: int) -> tuple[dict[str, str], dict[str, int]]:
    """Each rank's last line and line count in the run."""
    last: dict[str, str] = {}
    counts: dict[str, int] = {}
    tagged = plan.tagged
    for index, tag in enumerate(plan.keys.tags, 1):
        count = tagged.count(index, start, stop)
        if count:
            counts[tag] = count
            last[tag] = plan.lines[tagged.rfind(index, start, stop)].decode("ascii")
    return last, counts


def _texts(lines: list[bytes], start: int = 0, stop: int | None = None) -> list[str]:
    """``lines[start:stop]`` as text (printable ASCII: decoding is exact)."""
    chosen = lines[start:stop]
    return b"\n".join(chosen).decode("ascii").split("\n") if chosen else []


def _sync(scanner: Scanner, batch: Batch, index: int, now: float) -> None:
    """``Scanner.sync_time`` for a batch of bytes: the time of the line before ``index`` (an
    odd line gave the model its time when it was read)."""
    if index > 0 and index - 1 not in batch.odd:
        scanner.sync_line(batch.lines[index - 1].decode("ascii"), now)


def _odd_rows(lines: list[bytes], data: bytes, odd: list[Span]) -> dict[int, bytes]:
    """Each odd line by its index in ``lines``, in order. ``list.index`` finds it: a line
    equal to an odd line is odd itself, so the next line equal to it is the next odd line
    (a comparison of lines of different lengths stops at their lengths)."""
    rows: dict[int, bytes] = {}
    row = 0
    for first, after in odd:
        row = lines.index(data[first : after - 1], row)
        rows[row] = data[first:after]
        row += 1
    return rows


def _decode_events(
    plan: Plan, tag: str, codes: Codes, buckets: list[Bucket], scanner: Scanner
) -> Iterator[_Event]:
    """The first decode line of ``tag`` in each bucket other than the one it last reported."""
    previous = scanner.model.decode_ts.get(tag)
    selector = plan.selector(codes)
    for start, stop, stamp in buckets:
        bucket = stamp[1:].decode("ascii")
        if bucket != previous:
            index = selector.find(1, start, stop)
            if index >= 0:
                previous = bucket
                yield _Event(index, tag, plan.keys.groups[plan.codes[index]][2], None)


def _request_events(
    batch: Batch, plan: Plan, buckets: list[Bucket], previous: str | None
) -> list[_Event] | None:
    """The first access line in each bucket other than the one last reported, parsed."""
    events: list[_Event] = []
    selector = plan.selector(plan.keys.access)
    for start, stop, stamp in buckets:
        bucket = stamp[1:].decode("ascii")
        index = selector.find(1, start, stop) if bucket != previous else -1
        if index < 0:
            continue
        tag, _, at, _, _ = plan.keys.groups[plan.codes[index]]
        request = parse_access(batch.lines[index][at:].decode("ascii"))
        if request is None:
            return None
        previous = bucket
        events.append(_Event(index, tag, at, request))
    return events
