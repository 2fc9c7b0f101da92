"""A bounded ring of the sanitized log lines, for the full-screen log view.

Each line keeps the rank it belongs to and whether it is a warning or an error, so the view can
show one rank or all, or only the problems across ranks, without looking at the text again.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator
from itertools import islice
from typing import NamedTuple, TypeVar

from tui.engine.logs.log_line import LogLine
from tui.engine.logs.sanitize import printable
from tui.engine.servers.monitor_traffic import is_monitor_line

DEFAULT_CAPACITY = 200_000
T = TypeVar("T")


class Columns(NamedTuple):
    """Lines of the ring, one list per field, in the same order."""

    seqs: range
    texts: list[str]
    ranks: list[str | None]
    problems: list[bool]
    monitor: list[bool]
    """The line shows a request of the monitor itself (a health poll or a probe, or its
    prefill)."""


def _tail(ring: deque[T], count: int) -> list[T]:
    """The newest ``count`` items, oldest first, walked back from the newest."""
    items = list(islice(reversed(ring), count))
    items.reverse()
    return items


class LogBook:
    """The most recent ``capacity`` lines; older ones are dropped, the count is kept.

    Lines are kept as plain strings in parallel rings rather than one object per line: strings
    are not tracked by the garbage collector, so a full ring costs a collection nothing.
    """

    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        self._texts: deque[str] = deque(maxlen=capacity)
        self._ranks: deque[str | None] = deque(maxlen=capacity)
        self._problems: deque[bool] = deque(maxlen=capacity)
        self._monitor: deque[bool] = deque(maxlen=capacity)
        self.total = 0

    def extend(self, lines: Iterable[LogLine]) -> bool:
        """Keep ``lines``; their text passes ``printable`` once more, the last line of defence
        at the widget boundary (Textual's ``Log`` passes ESC to the terminal as is). True when
        one of them is not the monitor's own traffic (which the log view hides)."""
        shown = False
        for line in lines:
            monitor = is_monitor_line(line.text)
            self._texts.append(printable(line.text))
            self._ranks.append(line.rank)
            self._problems.append(line.problem)
            self._monitor.append(monitor)
            self.total += 1
            shown = shown or not monitor
        return shown

    @property
    def dropped(self) -> int:
        """Lines received but no longer kept."""
        return self.total - len(self._texts)

    @property
    def first(self) -> int:
        """The sequence number of the oldest line kept (``total + 1`` when none is)."""
        return self.total - len(self._texts) + 1

    def text(self, seq: int) -> str:
        """The text of line ``seq`` ("" once dropped); cheap near the newest line."""
        at = seq - self.first
        return self._texts[at] if 0 <= at < len(self._texts) else ""

    def columns(self, after: int) -> Columns:
        """The lines after ``after``, oldest first, as columns (the view filters whole
        columns at once: a call per line costs more than the filter)."""
        wanted = min(len(self._texts), self.total - max(0, after))
        if wanted <= 0:
            return Columns(range(0), [], [], [], [])
        seqs = range(self.total - wanted + 1, self.total + 1)
        if wanted == len(self._texts):
            return Columns(
                seqs, list(self._texts), list(self._ranks), list(self._problems),
                list(self._monitor),
            )  # fmt: skip
        return Columns(
            seqs,
            _tail(self._texts, wanted),
            _tail(self._ranks, wanted),
            _tail(self._problems, wanted),
            _tail(self._monitor, wanted),
        )

    def since(self, seq: int) -> Iterator[LogLine]:
        """Lines with a sequence number above ``seq``, oldest first."""
        wanted = min(len(self._texts), self.total - max(0, seq))
        if wanted <= 0:
            return iter(())
        # Walk back from the newest line: a tail read costs what it returns, not the ring size.
        texts = list(islice(reversed(self._texts), wanted))
        ranks = list(islice(reversed(self._ranks), wanted))
        problems = list(islice(reversed(self._problems), wanted))
        first = self.total - wanted + 1
        return (
            LogLine(ranks[-1 - i], texts[-1 - i], problems[-1 - i], first + i)
            for i in range(wanted)
        )

    def last(self, rank: str | None, count: int) -> tuple[LogLine, ...]:
        """The newest ``count`` lines of ``rank``, oldest first (walked back from the newest)."""
        found: list[LogLine] = []
        seq = self.total
        for text, tag, problem in zip(
            reversed(self._texts), reversed(self._ranks), reversed(self._problems), strict=True
        ):
            if tag == rank:
                found.append(LogLine(tag, text, problem, seq))
                if len(found) == count:
                    break
            seq -= 1
        return tuple(reversed(found))

    def select(self, rank: str | None, problems_only: bool, after: int = 0) -> Iterator[LogLine]:
        """Lines after ``after`` for one rank (None: all ranks), optionally problems only."""
        for line in self.since(after):
            if rank is not None and line.rank != rank:
                continue
            if problems_only and not line.problem:
                continue
            yield line
