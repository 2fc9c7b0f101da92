"""A bounded ring of the sanitized log lines, for the full-screen log view.

Each line keeps the rank it belongs to and whether it is a warning or an error, so the view can
show one rank or all, or only the problems across ranks, without looking at the text again.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator
from itertools import islice

from tui.engine.logs.log_line import LogLine
from tui.engine.logs.sanitize import printable

DEFAULT_CAPACITY = 200_000


class LogBook:
    """The most recent ``capacity`` lines; older ones are dropped, the count is kept.

    Lines are kept as plain strings in parallel rings rather than one object per line: strings
    are not tracked by the garbage collector, so a full ring costs a collection nothing.
    """

    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        self._texts: deque[str] = deque(maxlen=capacity)
        self._ranks: deque[str | None] = deque(maxlen=capacity)
        self._problems: deque[bool] = deque(maxlen=capacity)
        self.total = 0

    def extend(self, lines: Iterable[LogLine]) -> None:
        """Keep ``lines``; their text passes ``printable`` once more, the last line of defence
        at the widget boundary (Textual's ``Log`` passes ESC to the terminal as is)."""
        for line in lines:
            self._texts.append(printable(line.text))
            self._ranks.append(line.rank)
            self._problems.append(line.problem)
            self.total += 1

    @property
    def dropped(self) -> int:
        """Lines received but no longer kept."""
        return self.total - len(self._texts)

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

    def select(self, rank: str | None, problems_only: bool, after: int = 0) -> Iterator[LogLine]:
        """Lines after ``after`` for one rank (None: all ranks), optionally problems only."""
        for line in self.since(after):
            if rank is not None and line.rank != rank:
                continue
            if problems_only and not line.problem:
                continue
            yield line
