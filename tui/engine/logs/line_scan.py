"""Drive the grammar and the model over a batch of sanitized lines, fast.

Long logs are mostly a server at work: SGLang ``Decode batch`` and ``Prefill batch`` lines and
uvicorn access lines. Once the server is serving, those shapes take a fast path that only
notes each line's rank, queues decode lines for the decode tracker and keeps each rank's last
line, without building an object per line; batches of them are read in bulk
(``tui.engine.logs.bulk_read``). Every other line goes through ``LineGrammar.parse`` and
``StartupModel.handle``. All paths give the same events; only the cost differs.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterator
from itertools import islice

from tui.engine.logs.bulk_read import BulkReader
from tui.engine.logs.log_line import LogLine
from tui.engine.logs.plain_bytes import Span
from tui.engine.logs.problem_lines import looks_bad
from tui.engine.logs.sanitize import split_lines, suspect_chars
from tui.engine.servers import registry
from tui.engine.servers.common_patterns import bar_hits, maybe_failure, parse_access, parse_bar
from tui.engine.servers.dialect import FastPath
from tui.engine.servers.hits import Parsed, ProgressHit, RequestHit
from tui.engine.servers.line_grammar import LineGrammar
from tui.engine.servers.monitor_traffic import MONITOR_MARK, is_monitor_path
from tui.engine.servers.sglang import sglang_grammar as sglang
from tui.engine.servers.sglang.sglang_shapes import (
    ACCESS,
    DECODE,
    KEY_END,
    KEY_START,
    OTHER,
    PREFILL,
    SLOW_KNOWN,
    Known,
    fraction_length,
    quiet_message,
    shape_of,
    valid_stamp,
)
from tui.engine.servers.vllm import vllm_grammar as vllm
from tui.engine.startup import log_events as ev
from tui.engine.startup.rank_stages import LogTime
from tui.engine.startup.startup_model import EVENT_BUCKET, StartupModel

CACHE_SIZE = 4096
"""Entries kept in each per-stream cache (shapes, quiet messages) before it starts over."""
ACCESS_MARK = "INFO:     "
"""How uvicorn's access lines begin, after vLLM's process prefix if any."""
_ADDRESS_CHARS = "0123456789.:"
_PLAIN_TAIL = re.compile(r' - "[A-Z]+ \S+ HTTP/[\d.]+" \d{3}(?: [A-Za-z][A-Za-z -]*)?\Z')
"""What may follow the client address of an access line the fast path reads: the request, the
status and its phrase, and nothing else (no second line glued on, nothing like a bar)."""
MAX_PREFIX = 64
"""Characters searched for ``ACCESS_MARK``: a process prefix is shorter."""
_SHAPES, _ACCESS = FastPath.STAMPED_SHAPES, FastPath.ACCESS_LINES
"""The fast paths, read once: an enum member costs a look-up through its class each time."""


FastLoop = Callable[[list[str], float, int, int | None], None]
"""A fast path's loop over ``lines[start:stop]`` at ``now``."""


class Scanner:
    """Feeds lines to the model; holds the per-stream caches of the fast path."""

    def __init__(self, grammar: LineGrammar, model: StartupModel) -> None:
        self.grammar = grammar
        self.model = model
        self.kept: list[LogLine] | None = None
        """When a list, every complete line is appended to it (for a log view)."""
        self._shapes: dict[str, Known] = {}
        self._fractional: dict[str, Known] = {}
        self.stamp = ""
        """The last line start (``[`` and the time down to ten seconds) found valid."""
        self._quiet: dict[str, bool] = {}
        self._requests: dict[str, RequestHit | None] = {}
        self._access: dict[str, tuple[bool, str | None]] = {}
        """For each prefix in front of a vLLM access line: may it take the fast path, and
        the rank it names (None for no prefix)."""
        self._runs = 0
        self._redraw_rank: str | None = None
        self._bulk = BulkReader(self)
        self._owners: list[str | None] = []
        """The owner of each line of the last fast-path run (for the kept lines)."""
        self._path = _fast_path_of(grammar.engine)
        """The fast path of the log's engine, asked of its dialect once the engine is known."""

    # ------------------------------------------------------------------ batches

    def scan(self, lines: list[str], redrawn: dict[int, list[str]], now: float) -> None:
        """Process complete lines (numbered from ``model.lines + 1``).

        Lines that were redrawn with ``\\r`` (their segments in ``redrawn``) go one by one;
        the runs of ordinary lines between them take the per-line fast path.
        """
        start = 0
        for index in sorted(redrawn):
            if index > start:
                self._fast_path()(lines, now, start, index)
            self._scan_each([lines[index]], {0: redrawn[index]}, now)
            start = index + 1
        if start < len(lines):
            self._fast_path()(lines, now, start, None)

    def _fast_path(self) -> FastLoop:
        return self.scan_vllm if self._path is _ACCESS else self.scan_fast

    def raw_allowed(self) -> bool:
        """True when complete lines may come as bytes (``scan_raw``): no log view keeps them
        and the fast paths apply."""
        return self.kept is None and self.fast_allowed()

    def scan_text(self, data: bytes, now: float) -> None:
        """Complete lines as bytes (``data`` ends with a newline), decoded and sanitized."""
        chars = suspect_chars(data)
        text = data.decode("utf-8", "replace")
        lines, redrawn = split_lines(text, suspect=chars != "", chars=chars)
        lines.pop()
        self.scan(lines, redrawn, now)

    def scan_raw(self, data: bytes, start: int, odd: list[Span], now: float) -> None:
        """The complete lines of ``data`` from ``start`` (0 or just after a newline) as bytes,
        read in bulk (``tui.engine.logs.bulk_read``); all are printable ASCII but the ``odd`` ones,
        which
        take the text path in their turn. What follows the last newline is not read."""
        self._bulk.scan(data, start, odd, now)

    def scan_one(self, line: str, now: float, redrawn: bool) -> None:
        """One complete line (the end of a line carried over from earlier chunks)."""
        if not redrawn:
            self._fast_path()([line], now, 0, None)
            return
        number = self.model.lines + 1
        tag = self.line(line, number, now, redrawn=redrawn)
        self.model.lines = number
        self.model.absorb({tag: line} if tag else {}, {tag: 1} if tag else {}, now)

    def _scan_each(self, lines: list[str], redrawn: dict[int, list[str]], now: float) -> None:
        last: dict[str, str] = {}
        seen: list[str] = []
        for index, line in enumerate(lines):
            number = self.model.lines + 1
            segments = redrawn.get(index)
            if segments is not None:
                self.redraws(segments, number, now)
            runs = self.model.runs_before
            tag = self.line(line, number, now, redrawn=segments is not None)
            self.model.lines = number
            if self.model.runs_before != runs:
                last.clear()
                seen.clear()
            if tag is not None:
                last.pop(tag, None)  # in the order of each rank's latest line
                last[tag] = line
                seen.append(tag)
        self.model.absorb(last, Counter(seen), now)

    def scan_fast(
        self, lines: list[str], now: float, start: int = 0, stop: int | None = None
    ) -> None:
        """The per-line fast path over ``lines[start:stop]``, kept in one function on purpose:
        a call per line costs too much. It is the reference the bulk path must agree with.

        While the server is serving (and no hard failure is still gathering lines), an SGLang
        line whose ten-second stamp was checked and whose key (characters 19 to 39) has a
        ``Shape`` is handled here: decode lines are queued for the decode tracker, the first
        decode and access line of each rank and ten log seconds still produce their (thinned)
        event, and only the owner of each line is noted. Anything else goes through ``line``,
        which gives the same result the slow way.
        """
        self._keeping(self._fast_lines, lines, now, start, stop)

    def _keeping(
        self, loop: FastLoop, lines: list[str], now: float, start: int, stop: int | None
    ) -> None:
        """Run a fast path's ``loop`` with no list to keep lines in (its slow lines would go
        there out of order), then keep every line of the run, in order, with its owner."""
        kept, self.kept = self.kept, None
        try:
            loop(lines, now, start, stop)
        finally:
            self.kept = kept
        if kept is not None:
            kept.extend(self._kept_lines(lines, start, stop))

    def _kept_lines(self, lines: list[str], start: int, stop: int | None) -> Iterator[LogLine]:
        """The log view's lines of a fast-path run, as the slow path keeps them: each with
        the rank the run's ``owners`` named and whether it looks bad."""
        owners = self._owners
        for owner, line in zip(owners, islice(lines, start, stop), strict=True):
            yield LogLine(owner, line, looks_bad(line))

    def _fast_lines(self, lines: list[str], now: float, start: int, stop: int | None) -> None:
        """``scan_fast``'s loop (with no log view to keep lines for)."""
        model = self.model
        self.check_run()
        stop = len(lines) if stop is None else stop
        shape_get = self._shapes.get
        queue = model.decode.pending.append
        decode_ts = model.decode_ts
        owners: list[str | None] = []
        own = owners.append
        base, cut, requests, stamp = model.lines, 0, 0, self.stamp
        bucket = stamp[1:]
        fast = self.fast_allowed()
        for line in islice(lines, start, stop):
            if fast:
                text = line[:19]
                if text != stamp and valid_stamp(text):
                    stamp, bucket = text, text[1:]
                known = shape_get(line[19:40]) or self._shape(line) if text == stamp else SLOW_KNOWN
                tag, kind, at, check, shape = known
                if kind and (not check or shape.confirm(line)):
                    if kind == DECODE:
                        queue(line)
                        if decode_ts.get(tag) != bucket:
                            self.decode_event(tag, line, at, base + len(owners) + 1, now)
                        own(tag)
                        continue
                    if kind == PREFILL or (kind == OTHER and self.quiet(line[at:])):
                        own(tag)
                        continue
                    if kind == ACCESS and ' - "' in line and '" 5' not in line:
                        if MONITOR_MARK in line:  # the monitor's own request: not counted
                            own(tag)
                            continue
                        if bucket == model.request_ts:
                            requests += 1
                        else:
                            self._request(tag, line, at, base + len(owners) + 1, now)
                        own(tag)
                        continue
                self.sync_time(lines, start + len(owners), now)
            runs = model.runs_before
            own(self.line(line, base + len(owners) + 1, now))
            if model.runs_before != runs:
                cut, requests = len(owners) - 1, 0
                decode_ts = model.decode_ts  # the new run's, not the one read above
                self.check_run()
            fast = self.fast_allowed()
        if fast:
            self.sync_time(lines, stop, now)
        self.stamp = stamp
        model.lines = base + len(owners)
        model.requests += requests
        self._owners = owners
        self._absorb(lines, start, owners, cut, now)

    def fast_allowed(self, path: FastPath = _SHAPES) -> bool:
        """The fast ``path`` applies to a log of an engine that takes it while serving, with no
        hard failure still gathering lines (those lines go to the failure tracker one by one)."""
        model = self.model
        failures = model.failures
        return (
            model.serving
            and self._path is path
            and not (failures.open and failures.current(True) is not None)
        )

    def scan_vllm(
        self, lines: list[str], now: float, start: int = 0, stop: int | None = None
    ) -> None:
        """The per-line fast path of a serving log whose engine counts access lines
        (``FastPath.ACCESS_LINES``: vLLM) over ``lines[start:stop]``.

        A busy vLLM server's log is almost all uvicorn access lines, which carry no time. While
        the server is serving (outside a traceback, and with no hard failure gathering lines),
        an access line below status 500 with no failure word, from a process whose rank exists
        and whose name no other rank shares (or with no prefix), only counts as a request; the
        first in each ten log seconds still produces its event. Anything else goes through
        ``line``, which gives the same result the slow way.
        """
        self._keeping(self._vllm_lines, lines, now, start, stop)

    def _vllm_lines(self, lines: list[str], now: float, start: int, stop: int | None) -> None:
        """``scan_vllm``'s loop (with no log view to keep lines for)."""
        model = self.model
        self.check_run()
        stop = len(lines) if stop is None else stop
        access = self._access
        owners: list[str | None] = []
        own = owners.append
        base, cut, requests = model.lines, 0, 0
        fast = self.vllm_fast_allowed()
        for line in islice(lines, start, stop):
            if fast:
                at = line.find(ACCESS_MARK, 0, MAX_PREFIX)
                prefix = line[:at] if at >= 0 else None
                known = None if prefix is None else access.get(prefix) or self._access_known(prefix)
                if known is not None and known[0]:
                    request = self._plain_request(line, at + len(ACCESS_MARK))
                    if request is not None and is_monitor_path(request.path):
                        own(known[1])  # the monitor's own request: not counted
                        continue
                    if request is not None:
                        text = model.last_text
                        if text is not None and text[:EVENT_BUCKET] == model.request_ts:
                            requests += 1
                        else:
                            when = LogTime(base + len(owners) + 1, model.last_ts, text, now)
                            model.request_seen(known[1], request, when)
                        own(known[1])
                        continue
            runs = model.runs_before
            own(self.line(line, base + len(owners) + 1, now))
            if model.runs_before != runs:
                cut, requests = len(owners) - 1, 0
                self.check_run()
            access.clear()  # the line may have changed what a prefix names
            fast = self.vllm_fast_allowed()
        model.lines = base + len(owners)
        model.requests += requests
        self._owners = owners
        self._absorb(lines, start, owners, cut, now)

    def vllm_fast_allowed(self) -> bool:
        """``fast_allowed`` for a vLLM log, outside a traceback (its bare lines are its
        rank's)."""
        return self.fast_allowed(_ACCESS) and not self.grammar.in_traceback

    def _plain_request(self, line: str, start: int) -> RequestHit | None:
        """The request of an access line whose client address starts at ``start``, if the
        line means nothing more (below status 500, no failure word); else None.

        Such lines differ mostly in the client's port: what follows the address is read once
        (``_requests``), and the address need only be digits, dots and colons."""
        cut = line.find(' - "', start)
        if cut <= start or line[start:cut].strip(_ADDRESS_CHARS):
            return None
        tail = line[cut:]
        if tail in self._requests:
            return self._requests[tail]
        request = parse_access(f"{ACCESS_MARK}0{tail}")
        plain = (
            request is not None
            and request.status < 500
            and _PLAIN_TAIL.match(tail) is not None
            and not maybe_failure(tail)
        )
        if len(self._requests) >= CACHE_SIZE:
            self._requests.clear()
        self._requests[tail] = request if plain else None
        return self._requests[tail]

    def _access_known(self, prefix: str) -> tuple[bool, str | None]:
        """Whether access lines behind ``prefix`` may take the fast path, and their rank;
        cached once the rank exists."""
        if not prefix:
            known: tuple[bool, str | None] = (True, None)
        else:
            tag = self.grammar.process_rank(prefix)
            if tag is None or tag not in self.model.ranks:
                return (False, None)
            known = (True, tag)
        if len(self._access) >= CACHE_SIZE:
            self._access.clear()
        self._access[prefix] = known
        return known

    def check_run(self) -> None:
        """Shapes name ranks of the current run: forget them when a new run starts."""
        if self._runs != self.model.runs_before:
            self._runs = self.model.runs_before
            self._shapes.clear()
            self._fractional.clear()
            self._access.clear()

    def known(self, key: str) -> Known | None:
        """The shape of every line whose characters 19 to 39 are ``key``; None when the line
        has a fraction of a second (its key then depends on the line; see ``_shape``)."""
        found = self._shapes.get(key)
        if found is not None:
            return found
        if key[1:2] in (".", ","):
            return None
        return self._remember(self._shapes, key, key)

    def quiet(self, message: str) -> bool:
        """True when an SGLang message means nothing (``quiet_message``), cached."""
        verdict = self._quiet.get(message)
        return self._quiet_message(message) if verdict is None else verdict

    def _shape(self, line: str) -> Known:
        """The shape of ``line``'s key, cached once its rank exists in the current run.

        A fraction of a second is left out of the key (each value would make a new one) and
        such shapes are cached apart, under the fraction's length and the shortened key.
        """
        shift = fraction_length(line)
        if not shift:
            return self._remember(self._shapes, line[KEY_START:KEY_END], line[KEY_START:KEY_END])
        key = line[KEY_START : KEY_START + 1] + line[KEY_START + 1 + shift : KEY_END + shift]
        name = f"{shift}{key}"
        return self._fractional.get(name) or self._remember(self._fractional, name, key, shift)

    def _remember(self, cache: dict[str, Known], name: str, key: str, shift: int = 0) -> Known:
        shape = shape_of(key)
        if shape.kind and shape.tag not in self.model.ranks:
            return SLOW_KNOWN
        if shift:
            shape = shape._replace(at=shape.at + shift)
        if len(cache) >= CACHE_SIZE:
            cache.clear()
        known = cache[name] = (shape.tag, shape.kind, shape.at, shape.check, shape)
        return known

    def _quiet_message(self, message: str) -> bool:
        if len(self._quiet) >= CACHE_SIZE:
            self._quiet.clear()
        verdict = self._quiet[message] = quiet_message(message)
        return verdict

    def sync_time(self, lines: list[str], index: int, now: float) -> None:
        """Give the model the log time of the line before ``lines[index]`` (the slow path notes
        every line's time; the fast paths skip that) before another line looks at it. Doing
        it again for a line the slow path read changes nothing."""
        if index > 0:
            self.sync_line(lines[index - 1], now)

    def sync_line(self, line: str, now: float) -> None:
        """Give the model the log time of ``line`` (see ``sync_time``)."""
        if line[:1] == "[":
            envelope = sglang.ENVELOPE.match(line)
            if envelope is not None:
                self.model.when_text(envelope["ts"], 0, now)

    def _absorb(
        self, lines: list[str], start: int, owners: list[str | None], cut: int, now: float
    ) -> None:
        """Hand each rank its line count and last line (from index ``cut`` of ``owners``, the
        current run; ``owners[i]`` owns ``lines[start + i]``)."""
        counted = Counter(owners[cut:] if cut else owners)
        counts = {owner: count for owner, count in counted.items() if owner is not None}
        missing = set(counts)
        latest: list[tuple[str, str]] = []
        for index in range(len(owners) - 1, cut - 1, -1):
            owner = owners[index]
            if owner is not None and owner in missing:
                latest.append((owner, lines[start + index]))
                missing.discard(owner)
                if not missing:
                    break
        self.model.absorb(dict(reversed(latest)), counts, now)

    def event_time(
        self, tag: str, line: str, at: int, number: int, now: float, ts_text: str | None = None
    ) -> LogTime:
        """Note the time of a fast-path line that produces an event (``ts_text`` is its
        timestamp when the caller knows it: the line has no fraction of a second)."""
        if ts_text is None:
            envelope = sglang.ENVELOPE.match(line)
            ts_text = envelope["ts"] if envelope is not None else None
        return self.model.when_text(ts_text, number, now)

    def decode_event(
        self, tag: str, line: str, at: int, number: int, now: float, ts_text: str | None = None
    ) -> None:
        """The (thinned) decode event of a fast-path decode line."""
        when = self.event_time(tag, line, at, number, now, ts_text)
        self.model.decode_event(tag, sglang.decode_hit(line[at:]), when)

    def _request(self, tag: str, line: str, at: int, number: int, now: float) -> None:
        request = parse_access(line[at:])
        if request is None:
            self.line(line, number, now)
        else:
            self.model.request_seen(tag, request, self.event_time(tag, line, at, number, now))

    # ------------------------------------------------------------------ single lines

    def line(self, line: str, number: int, now: float, redrawn: bool = False) -> str | None:
        """One line through the full grammar; returns the rank its text belongs to."""
        owner: str | None = None
        for parsed in self.grammar.parse(line):
            if (
                redrawn
                and parsed.rank is None
                and any(isinstance(h, ProgressHit) for h in parsed.hits)
            ):
                owner = self._redraw_rank or owner
                continue
            self._report_engine(number)
            owner = self.model.handle(parsed, number, now) or owner
        self._redraw_rank = None
        if self.kept is not None:
            problem = looks_bad(line)
            self.kept.append(LogLine(owner, line, problem))
        return owner

    def redraws(self, segments: list[str], number: int, now: float) -> None:
        """Every state of a redrawn line: each complete ``\\r`` segment may be a bar."""
        for segment in segments:
            prefix = vllm.PREFIX.match(segment)
            if prefix is not None:
                self._redraw_rank = self.grammar.rank_of(prefix)
                segment = segment[prefix.end() :]
            bar = parse_bar(segment)
            if bar is not None:
                parsed = Parsed(self._redraw_rank, None, segment, bar_hits(bar))
                self._redraw_rank = self.model.handle(parsed, number, now)

    def _report_engine(self, number: int) -> None:
        grammar = self.grammar
        if grammar.detected:
            grammar.detected = False
            self.model.engine = grammar.engine
            self._path = _fast_path_of(grammar.engine)
            self.model.events.append(ev.EngineDetected(number, None, None, grammar.engine, None))


def _fast_path_of(engine: str) -> FastPath:
    dialect = registry.find(engine)
    return FastPath.NONE if dialect is None else dialect.fast_path
