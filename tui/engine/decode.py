"""Decode statistics of one run, in bounded rings.

A long-running server prints a decode line every few seconds for days; only counts and the
most recent ``RING`` samples are kept. SGLang ``Decode batch`` lines are only queued
(``pending``) and read together, a few regex passes at C speed, before anything else reads or
adds figures, so the rings always keep log order.
"""

from __future__ import annotations

from collections import deque

from tui.engine.grammar.hits import DecodeHit, SpecHit
from tui.engine.grammar.sglang import decode_figures
from tui.engine.snapshot import DecodeSummary

RING = 512


class DecodeTracker:
    """Counts decode lines and keeps their latest figures."""

    def __init__(self) -> None:
        self.lines = 0
        self.gen_throughput: deque[float] = deque(maxlen=RING)
        self.accept_len: deque[float] = deque(maxlen=RING)
        self.accept_rate: deque[float] = deque(maxlen=RING)
        self.accept_count = 0
        self.pending: list[str] = []
        """Raw SGLang decode lines, read in bulk by ``flush`` before anything else looks."""
        self.version = 0
        self._key = (0, 0)
        self._summary = DecodeSummary()

    def reset(self) -> None:
        self.lines = 0
        self.pending.clear()
        self.gen_throughput.clear()
        self.accept_len.clear()
        self.accept_rate.clear()
        self.accept_count = 0
        self.version += 1

    def add(self, hit: DecodeHit) -> None:
        self.flush()
        self.lines += 1
        if hit.gen_throughput is not None:
            self.gen_throughput.append(hit.gen_throughput)
        self.add_spec(SpecHit(hit.accept_len, hit.accept_rate))

    def add_spec(self, hit: SpecHit) -> None:
        self.flush()
        if hit.accept_len is not None:
            self.accept_len.append(hit.accept_len)
            self.accept_count += 1
        if hit.accept_rate is not None:
            self.accept_rate.append(hit.accept_rate)
        self.version += 1

    def flush(self) -> None:
        """Read the queued decode lines, all at once."""
        pending = self.pending
        if not pending:
            return
        self.lines += len(pending)
        gens, accepts, rates = decode_figures("\n".join(pending))
        pending.clear()
        self.gen_throughput.extend(gens)
        self.accept_len.extend(accepts)
        self.accept_count += len(accepts)
        self.accept_rate.extend(rates)
        self.version += 1

    def summary(self) -> DecodeSummary:
        """The summary, rebuilt only when something was added since the last call."""
        self.flush()
        key = (self.lines, self.version)
        if key != self._key:
            self._key = key
            self._summary = DecodeSummary(
                self.lines,
                tuple(self.gen_throughput),
                tuple(self.accept_len),
                tuple(self.accept_rate),
                self.accept_count,
            )
        return self._summary
