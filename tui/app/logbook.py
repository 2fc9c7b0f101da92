"""A bounded ring of the sanitized log lines, for the full-screen log view.

Each line keeps the rank it belongs to and whether it is a warning or an error, so the view can
show one rank or all, or only the problems across ranks, without looking at the text again.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import islice

DEFAULT_CAPACITY = 200_000

# Last line of defence at the widget boundary: whatever the engine let through, no control byte
# (C0 but tab, DEL, C1) reaches a widget, since Textual's Log passes ESC to the terminal as is.
_CONTROL_CODES = (*range(0x00, 0x09), *range(0x0A, 0x20), *range(0x7F, 0xA0))
_CONTROLS = dict.fromkeys(_CONTROL_CODES, "\ufffd")


def printable(text: str) -> str:
    """``text`` with every control character but tab replaced by U+FFFD."""
    return text.translate(_CONTROLS)


@dataclass(frozen=True, slots=True)
class LogLine:
    """One sanitized line; ``seq`` counts every line ever received, from 1."""

    seq: int
    rank: str | None
    text: str
    problem: bool = False


class LogBook:
    """The most recent ``capacity`` lines; older ones are dropped, the count is kept."""

    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        self._lines: deque[LogLine] = deque(maxlen=capacity)
        self.total = 0

    def extend(self, lines: Iterable[tuple[str | None, str, bool]]) -> None:
        for rank, text, problem in lines:
            self.total += 1
            self._lines.append(LogLine(self.total, rank, printable(text), problem))

    @property
    def dropped(self) -> int:
        """Lines received but no longer kept."""
        return self.total - len(self._lines)

    def since(self, seq: int) -> Iterator[LogLine]:
        """Lines with a sequence number above ``seq``, oldest first."""
        wanted = min(len(self._lines), self.total - max(0, seq))
        if wanted <= 0:
            return iter(())
        # Walk back from the newest line: a tail read costs what it returns, not the ring size.
        newest_first = list(islice(reversed(self._lines), wanted))
        return reversed(newest_first)

    def select(
        self, rank: str | None, problems_only: bool, after: int = 0
    ) -> Iterator[LogLine]:
        """Lines after ``after`` for one rank (None: all ranks), optionally problems only."""
        for line in self.since(after):
            if rank is not None and line.rank != rank:
                continue
            if problems_only and not line.problem:
                continue
            yield line
