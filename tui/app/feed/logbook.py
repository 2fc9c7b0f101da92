"""A bounded ring of the sanitized log lines, for the full-screen log view.

Each line keeps the rank it belongs to and whether it is a warning or an error, so the view can
show one rank or all, or only the problems across ranks, without looking at the text again.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import islice

DEFAULT_CAPACITY = 200_000

# Last line of defence at the widget boundary: whatever the engine let through, no control byte
# (C0 but tab, DEL, C1) reaches a widget, since Textual's Log passes ESC to the terminal as is.
_CONTROL_CODES = (*range(0x00, 0x09), *range(0x0A, 0x20), *range(0x7F, 0xA0))
_CONTROLS = dict.fromkeys(_CONTROL_CODES, "\ufffd")


_ANY_CONTROL = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """``text`` with every control character but tab replaced by U+FFFD (looked for first:
    a search costs a fifth of a translation, and clean text is the rule)."""
    if _ANY_CONTROL.search(text) is None:
        return text
    return text.translate(_CONTROLS)


@dataclass(frozen=True, slots=True)
class LogLine:
    """One sanitized line; ``seq`` counts every line ever received, from 1."""

    seq: int
    rank: str | None
    text: str
    problem: bool = False


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

    def extend(self, lines: Iterable[tuple[str | None, str, bool]]) -> None:
        for rank, text, problem in lines:
            self._texts.append(printable(text))
            self._ranks.append(rank)
            self._problems.append(problem)
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
            LogLine(first + i, ranks[-1 - i], texts[-1 - i], problems[-1 - i])
            for i in range(wanted)
        )

    def last(self, rank: str, count: int) -> tuple[LogLine, ...]:
        """The newest ``count`` lines of ``rank``, oldest first (walked back from the newest)."""
        found: list[LogLine] = []
        seq = self.total
        for text, tag, problem in zip(
            reversed(self._texts), reversed(self._ranks), reversed(self._problems), strict=True
        ):
            if tag == rank:
                found.append(LogLine(seq, tag, text, problem))
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
