"""Which lines of the log ring the log view shows, kept up to date as lines arrive.

The view never copies text: it keeps the sequence numbers of the lines that pass its filter (one
rank or all, problems only, the monitor's own traffic shown or hidden) and of the lines that
match its search, and reads the text of the few rows on screen from the ring. Catching up costs
what arrived since the last time; lines the ring dropped leave the index from its front.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from typing import NamedTuple

from tui.app.feed.logbook import LineFlags, LogBook


class LogFilter(NamedTuple):
    """What the view shows."""

    rank: str | None = None
    """One rank's lines (None: every rank's)."""
    problems_only: bool = False
    monitor_shown: bool = False
    """The monitor's own health polls and probes are shown too."""

    def passes(self, line: LineFlags) -> bool:
        return (
            (self.rank is None or line.rank == self.rank)
            and (line.problem or not self.problems_only)
            and (self.monitor_shown or not line.monitor)
        )

    def hides_as_monitor(self, line: LineFlags) -> bool:
        """The line is hidden only because it is the monitor's own traffic."""
        if not line.monitor or self.monitor_shown:
            return False
        return (self.rank is None or line.rank == self.rank) and (
            line.problem or not self.problems_only
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
        book, view, needle = self.book, self.filter, self.needle
        added: list[int] = []
        hidden: list[int] = []
        found: list[int] = []
        width = self.width
        for line in book.scan(self._seen):
            if view.passes(line):
                added.append(line.seq)
                width = max(width, len(line.text))
                if needle and needle in line.text.casefold():
                    found.append(line.seq)
            elif view.hides_as_monitor(line):
                hidden.append(line.seq)
        self._seen = book.total
        self.width = width
        self.rows.extend(added)
        self.hidden.extend(hidden)
        self.matches.extend(found)
        first = book.first
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
