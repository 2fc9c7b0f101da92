"""Decode statistics of one run: counts, and the latest figures
(``tui.engine.startup.decode_tail``).

A long-running server prints a decode line every few seconds for days; only counts and the most
recent ``RING`` figures of each kind are kept. SGLang ``Decode batch`` lines are queued
(``pending``) and kept as raw text, in log order, before anything else adds figures; their
figures are read only when a summary is looked at.
"""

from __future__ import annotations

from functools import partial

from tui.engine.servers.hits import DecodeHit, SpecHit
from tui.engine.startup.decode_tail import ACCEPT, GEN, RATE, RING, Block, FigureTail, read_figures
from tui.engine.startup.snapshot import DecodeSummary

__all__ = ["RING", "DecodeTracker"]


class DecodeTracker:
    """Counts decode lines and keeps their latest figures."""

    def __init__(self) -> None:
        self.lines = 0
        self.accept_count = 0
        """Accept-length slots seen in this run (see ``DecodeSummary.accept_count``)."""
        self.pending: list[str] = []
        """Raw SGLang decode lines, kept as one block by ``flush`` before anything else looks."""
        self.version = 0
        self._tail = FigureTail()
        self._key = (0, 0)
        self._summary = DecodeSummary()

    def reset(self) -> None:
        self.lines = 0
        self.accept_count = 0
        self.pending.clear()
        self._tail.clear()
        self.version += 1

    def add(self, hit: DecodeHit) -> None:
        self.flush()
        self.lines += 1
        if hit.gen_throughput is not None:
            self._tail.add_value(GEN, hit.gen_throughput)
        self.add_spec(SpecHit(hit.accept_len, hit.accept_rate))

    def add_spec(self, hit: SpecHit) -> None:
        self.flush()
        if hit.accept_len is not None:
            self._tail.add_value(ACCEPT, hit.accept_len)
            self.accept_count += 1
        if hit.accept_rate is not None:
            self._tail.add_value(RATE, hit.accept_rate)
        self.version += 1

    def add_text(self, text: str, lines: int) -> None:
        """``lines`` SGLang decode lines joined by newlines (after any queued ones)."""
        self.flush()
        self._keep(text, lines)

    def flush(self) -> None:
        """Keep the queued decode lines as one block."""
        pending = self.pending
        if pending:
            self._keep("\n".join(pending), len(pending))
            pending.clear()

    def summary(self) -> DecodeSummary:
        """The summary, rebuilt only when something was added since the last call."""
        self.flush()
        key = (self.lines, self.version)
        if key != self._key:
            self._key = key
            read = partial(read_figures, *self._tail.view())
            self._summary = DecodeSummary(self.lines, accept_count=self.accept_count, read=read)
        return self._summary

    def _keep(self, text: str, lines: int) -> None:
        block = Block(text, lines)
        self.lines += lines
        self.accept_count += block.count(ACCEPT)
        self._tail.add_block(block)
        self.version += 1
