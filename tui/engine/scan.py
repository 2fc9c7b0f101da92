"""Drive the grammar and the model over a batch of sanitized lines, fast.

Long logs are mostly a server at work: SGLang ``Decode batch`` and ``Prefill batch`` lines and
uvicorn access lines. Once the server is serving, those three shapes take a fast path that
slices the envelope, appends decode figures to the model's rings and keeps each rank's last
line, without building an object per line. Every other line goes through ``LineGrammar.parse``
and ``StartupModel.handle``. Both paths give the same events; only the cost differs.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import NamedTuple

from tui.engine import events as ev
from tui.engine.grammar import LineGrammar, sglang, vllm
from tui.engine.grammar.common import bar_hits, parse_bar
from tui.engine.grammar.hits import Parsed, ProgressHit
from tui.engine.model import StartupModel

_GEN = "gen throughput (token/s): "
_ACCEPT = "accept len: "
_RATE = "accept rate: "
_PROBLEM = re.compile(r"\b(?:ERROR|CRITICAL|WARNING|Error|Exception|Traceback|[Ff]ailed|Warning)\b")


class LogLine(NamedTuple):
    """A complete line for a log view: its rank (if known), text, and whether it looks bad."""

    rank: str | None
    text: str
    problem: bool


class Scanner:
    """Feeds lines to the model; holds the per-stream caches of the fast path."""

    def __init__(self, grammar: LineGrammar, model: StartupModel) -> None:
        self.grammar = grammar
        self.model = model
        self.kept: list[LogLine] | None = None
        """When a list, every complete line is appended to it (for a log view)."""
        self._tags: dict[str, str | None] = {}
        self._redraw_rank: str | None = None

    # ------------------------------------------------------------------ batches

    def scan(self, lines: list[str], redrawn: dict[int, list[str]], now: float) -> None:
        """Process complete lines (numbered from ``model.lines + 1``)."""
        if redrawn or self.kept is not None:
            self._scan_each(lines, redrawn, now)
        else:
            self._scan_fast(lines, now)

    def scan_one(self, line: str, now: float, redrawn: bool) -> None:
        """One complete line (the end of a line carried over from earlier chunks)."""
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
                last[tag] = line
                seen.append(tag)
        self.model.absorb(last, Counter(seen), now)

    def _scan_fast(self, lines: list[str], now: float) -> None:
        """The hot loop, kept in one function on purpose: a call per line costs too much.

        Only lines of a serving server take the shortcut; anything unexpected (a parse error,
        an access line that may need an event) falls through to ``line``.
        """
        model, tags = self.model, self._tags
        decode = model.decode
        gens, accepts, rates = (
            decode.gen_throughput.append,
            decode.accept_len.append,
            decode.accept_rate.append,
        )
        last: dict[str, str] = {}
        seen: list[str] = []
        number = model.lines
        serving = model.serving
        for line in lines:
            number += 1
            if serving and line[:1] == "[":
                end = line.find("] ", 19)
                tail = line[20:end] if end > 0 else "?"
                if tail[:1] == ".":
                    tail = tail[4:]
                tag = tags.get(tail, "?")
                if tag == "?":
                    tag = self._tag(tail)
                if tag is not None:
                    head = line[end + 2 : end + 8]
                    second = line[1:20]
                    try:
                        if head == "Decode":
                            start = line.find(_GEN, end) + 26
                            stop = line.find(",", start)
                            if start > 26 and stop > 0:
                                gen = float(line[start:stop])
                                begin = line.find(_ACCEPT, end, start) + 12
                                if begin > 12:
                                    stop = line.find(",", begin)
                                    accept = float(line[begin:stop])
                                    rate_at = line.find(_RATE, stop, start) + 13
                                    if rate_at > 13:
                                        rates(float(line[rate_at : line.find(",", rate_at)]))
                                    accepts(accept)
                                gens(gen)
                                decode.lines += 1
                                if model.decode_ts.get(tag) != second:
                                    self._decode_event(tag, line, end - len(tail), number, now)
                                last[tag] = line
                                seen.append(tag)
                                continue
                        elif head == "Prefil" or (
                            head == "INFO: "
                            and second == model.request_ts
                            and '" 5' not in line
                            and ' - "' in line
                        ):
                            if head == "INFO: ":
                                model.requests += 1
                            last[tag] = line
                            seen.append(tag)
                            continue
                    except ValueError:
                        pass
            runs = model.runs_before
            found = self.line(line, number, now)
            if model.runs_before != runs:
                last.clear()
                seen.clear()
            if found is not None:
                last[found] = line
                seen.append(found)
            serving = model.serving
        model.lines = number
        model.absorb(last, Counter(seen), now)

    def _tag(self, tail: str) -> str | None:
        if len(self._tags) > 4096:
            self._tags.clear()
        tag = sglang.tag_of(tail)
        self._tags[tail] = tag
        return tag

    def _decode_event(self, tag: str, line: str, ts_end: int, number: int, now: float) -> None:
        msg = line[line.find("] ", 19) + 2 :]
        when = self.model.when(Parsed(tag, line[1:ts_end], msg, ()), number, now)
        self.model.decode_event(tag, sglang.decode_hit(msg), when)

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
            problem = _PROBLEM.search(line) is not None
            self.kept.append(LogLine(owner, line, problem))
        return owner

    def redraws(self, segments: list[str], number: int, now: float) -> None:
        """Every state of a redrawn line: each complete ``\\r`` segment may be a bar."""
        for segment in segments:
            prefix = vllm.PREFIX.match(segment)
            if prefix is not None:
                self._redraw_rank = vllm.rank_of(prefix["proc"], prefix["pid"])
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
            self.model.events.append(ev.EngineDetected(number, None, None, grammar.engine, None))
