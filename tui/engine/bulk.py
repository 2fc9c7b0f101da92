"""Runs of a serving SGLang log absorbed a few passes at a time, not line by line.

Once a server is serving, almost every line is a decode, prefill, access or quiet line whose
meaning its first 40 characters decide (``tui.engine.grammar.shapes``). For such lines the
per-line fast path (``Scanner.scan_fast``) only notes the line's rank, queues decode lines and,
for the first decode line of each rank and the first access line in each ten log seconds,
produces an event. The same can be worked out for a whole batch of lines with operations that
loop in C: slicing every line's stamp and key with ``map``, counting keys with ``Counter``,
finding the first line of a rank in a ten-second bucket with ``compress`` and ``bisect``, and
joining the decode lines. Python code runs once per distinct key, stamp or message, and once
per event.

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

from collections import Counter
from collections.abc import Iterable, Iterator
from itertools import compress, islice
from typing import TYPE_CHECKING, NamedTuple

from tui.engine.bulk_plan import Batch, Bucket, Keys, Plan, make_plan
from tui.engine.grammar.common import parse_access
from tui.engine.grammar.shapes import KEY_START

if TYPE_CHECKING:
    from tui.engine.grammar.hits import RequestHit
    from tui.engine.scan import Scanner

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

    def scan(self, lines: list[str], now: float) -> None:
        """Process ``lines`` (numbered from ``model.lines + 1``) as ``scan_fast`` would."""
        scanner = self.scanner
        scanner.check_run()
        if len(lines) < MIN_LINES or not scanner.fast_allowed():
            scanner.scan_fast(lines, now)
            return
        batch = Batch(lines, scanner.model.lines)
        start = 0
        for _ in range(MAX_PLANS):
            plan = make_plan(scanner, self._keys(), batch, start)
            if plan is None:
                break
            start = self._follow(batch, plan, now)
            if start == len(lines):
                if scanner.fast_allowed():
                    scanner.sync_time(lines, start, now)
                return
            if not scanner.fast_allowed():
                break
            scanner.check_run()
        scanner.scan_fast(lines, now, start)

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
                self.scanner.scan_fast(batch.lines, now, start, slow)
                if self._signature() != signature:
                    return slow
            if slow == end:
                break
            self._slow_line(batch, slow, now)
            start = slow + 1
            if self._signature() != signature:
                return start
        return end

    def _slow_line(self, batch: Batch, index: int, now: float) -> None:
        """A slow line through the full grammar, as the per-line path reads it."""
        scanner, line = self.scanner, batch.lines[index]
        scanner.sync_time(batch.lines, index, now)
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
        whole = start == 0 and stop == len(batch.lines)
        counts = batch.counts if whole else Counter(islice(batch.keys, start, stop))
        self._keep_decode(batch, plan, start, stop, counts)
        requests = sum(counts.get(key, 0) for key in plan.keys.access)
        model.requests += requests - sum(event.request is not None for event in events)
        model.absorb(*self._owners(batch, plan, start, stop, counts), now)
        model.lines = batch.base + stop
        scanner.stamp = buckets[-1][2]
        return True

    def _events(self, batch: Batch, plan: Plan, buckets: list[Bucket]) -> list[_Event] | None:
        """The run's decode and request events in line order; None if an access line that
        makes an event does not parse (the per-line path then reads it in full)."""
        events = [
            event
            for tag, keys in plan.keys.decode.items()
            for event in _decode_events(batch, plan, tag, keys, buckets, self.scanner)
        ]
        requests = _request_events(batch, plan, buckets, self.scanner.model.request_ts)
        if requests is None:
            return None
        return sorted([*events, *requests])

    def _emit(self, batch: Batch, event: _Event, now: float) -> None:
        """The event of a plain line, as the per-line fast path gives it."""
        scanner, line, number = self.scanner, batch.lines[event.row], batch.base + event.row + 1
        if event.request is None:
            scanner.decode_event(event.tag, line, event.at, number, now)
        else:
            when = scanner.event_time(event.tag, line, event.at, number, now)
            scanner.model.request_seen(event.tag, event.request, when)

    def _keep_decode(
        self, batch: Batch, plan: Plan, start: int, stop: int, counts: Counter[str]
    ) -> None:
        wanted = plan.keys.decode_keys
        count = sum(counts.get(key, 0) for key in wanted)
        if count:
            keys = islice(batch.keys, start, stop)
            chosen = compress(islice(batch.lines, start, stop), map(wanted.__contains__, keys))
            self.scanner.model.decode.add_text("\n".join(chosen), count)

    @staticmethod
    def _owners(
        batch: Batch, plan: Plan, start: int, stop: int, counts: Counter[str]
    ) -> tuple[dict[str, str], dict[str, int]]:
        """Each rank's last line and line count in the run."""
        per_tag: dict[str, int] = {}
        for key, count in counts.items():
            tag = plan.keys.known[key][0]
            per_tag[tag] = per_tag.get(tag, 0) + count
        last = {tag: batch.lines[_last(batch, plan.keys.tags[tag], start, stop)] for tag in per_tag}
        return last, per_tag


def _first(keys: list[str], wanted: set[str], start: int, stop: int) -> int | None:
    """The first index from ``start`` to ``stop`` whose key is in ``wanted``."""
    found = map(wanted.__contains__, keys[start:stop])
    return next(compress(range(start, stop), found), None)


def _last(batch: Batch, wanted: set[str], start: int, stop: int) -> int:
    """The last index from ``start`` to ``stop`` whose key is in ``wanted`` (there is one)."""
    total = len(batch.keys)
    backwards = islice(reversed(batch.keys), total - stop, total - start)
    return next(compress(range(stop - 1, start - 1, -1), map(wanted.__contains__, backwards)))


def _decode_events(
    batch: Batch, plan: Plan, tag: str, keys: set[str], buckets: Iterable[Bucket],
    scanner: Scanner,
) -> Iterator[_Event]:  # fmt: skip
    """The first decode line of ``tag`` in each bucket other than the one it last reported."""
    previous = scanner.model.decode_ts.get(tag)
    for start, stop, stamp in buckets:
        bucket = stamp[1:]
        if bucket != previous:
            index = _first(batch.keys, keys, start, stop)
            if index is not None:
                previous = bucket
                yield _Event(index, tag, plan.keys.known[batch.keys[index]][2], None)


def _request_events(
    batch: Batch, plan: Plan, buckets: Iterable[Bucket], previous: str | None
) -> list[_Event] | None:
    """The first access line in each bucket other than the one last reported, parsed."""
    events: list[_Event] = []
    for start, stop, stamp in buckets:
        bucket = stamp[1:]
        index = _first(batch.keys, plan.keys.access, start, stop) if bucket != previous else None
        if index is None:
            continue
        tag, _, at, _, _ = plan.keys.known[batch.keys[index]]
        request = parse_access(batch.lines[index][at:])
        if request is None:
            return None
        previous = bucket
        events.append(_Event(index, tag, at, request))
    return events
