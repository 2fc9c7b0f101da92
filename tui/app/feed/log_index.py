"""Which lines of the log ring the log view shows, kept up to date as lines arrive.

The view never copies text: it keeps the sequence numbers of the lines that pass its filter (one
rank or all, problems only, the monitor's own traffic shown or hidden) and of the lines that
match its search, and reads the text of the few rows on screen from the ring. Catching up costs
what arrived since the last time; lines the ring dropped leave the index from its front.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from itertools import compress
from operator import and_, not_
from typing import NamedTuple

from tui.app.feed.logbook import Columns, LogBook


class LogFilter(NamedTuple):
    """What the view shows."""

    rank: str | None = None
    """One rank's lines (None: every rank's)."""
    problems_only: bool = False
    monitor_shown: bool = False
    """The monitor's own health polls and probes are shown too."""

    def masks(self, lines: Columns) -> tuple[list[bool], list[bool]]:
        """For each line: is it shown, and is it hidden only as the monitor's own traffic."""
        wanted: list[bool] | None = None
        if self.rank is not None:
            rank = self.rank
            wanted = [tag == rank for tag in lines.ranks]
        if self.problems_only:
            problems = lines.problems
            wanted = problems if wanted is None else list(map(and_, wanted, problems))
        monitor = lines.monitor
        if self.monitor_shown:
            return (wanted or [True] * len(monitor)), [False] * len(monitor)
        if wanted is None:
            return list(map(not_, monitor)), monitor
        return [w and not m for w, m in zip(wanted, monitor, strict=True)], list(
            map(and_, wanted, monitor)
        )


class Caught(NamedTuple):
    """What one catch-up did: lines added to the view, rows it lost from its front."""

    added: int
    trimmed: int


class LogIndex:
    """The rows of the log view: sequence numbers of the ring's lines that pass ``filter``."""

    def __init__(self, book: LogBook, view: LogFilter, needle: str = "") -> None:
        self.book = book
        self.filter = view
        self.needle = needle.casefold()
        self.rows: array[int] = array("q")
        self.matches: array[int] = array("q")
        """Rows' sequence numbers whose text holds the search needle."""
        self.hidden: array[int] = array("q")
        """Lines hidden as the monitor's own traffic (only they are counted)."""
        self.width = 0
        """The longest text among the rows, in characters."""
        self._seen = book.first - 1
        self.catch_up()

    def catch_up(self) -> Caught:
        """Take the lines that arrived since the last call; drop the ones the ring dropped."""
        lines = self.book.columns(self._seen)
        self._seen = self.book.total
        shown, hidden = self.filter.masks(lines)
        added = list(compress(lines.seqs, shown))
        if added:
            texts = list(compress(lines.texts, shown))
            self.width = max(self.width, max(map(len, texts)))
            self.rows.extend(added)
            if self.needle:
                needle = self.needle
                found = [needle in text.casefold() for text in texts]
                self.matches.extend(compress(added, found))
        self.hidden.extend(compress(lines.seqs, hidden))
        first = self.book.first
        trimmed = _trim(self.rows, first)
        _trim(self.hidden, first)
        _trim(self.matches, first)
        return Caught(len(added), trimmed)

    def row_of(self, seq: int) -> int:
        """The row that shows line ``seq`` (or the first row after it)."""
        return bisect_left(self.rows, seq)

    def count_after(self, seq: int) -> int:
        """Rows whose line came after line ``seq``."""
        return len(self.rows) - bisect_left(self.rows, seq + 1)


def _trim(seqs: array[int], first: int) -> int:
    """Drop the numbers below ``first`` (the ring no longer keeps those lines)."""
    if not seqs or seqs[0] >= first:
        return 0
    cut = bisect_left(seqs, first)
    del seqs[:cut]
    return cut
