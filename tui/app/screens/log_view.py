"""The full-screen log: one rank or all, following the tail, with search and a problems filter.

The lines are a virtual view over the app's ring (``LogLines``): it follows at any length and
any rate, and a burst costs the rows on screen per repaint, not the lines that arrived.
"""

from __future__ import annotations

import time
from collections import deque
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.message import Message
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Footer, Input, Static

from tui.app.feed.log_index import LogFilter
from tui.app.feed.logbook import LogBook
from tui.app.screens.log_status import BURST_LINES_PER_S, LogStatus
from tui.app.widgets.log_lines import LogLines

RATE_SECONDS = 1.0
"""The window over which the status line measures the rate lines arrive at."""


class LogScreen(Screen[None]):
    """Lines reach the view only through ``pull``, which the app's flush timer calls."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Back", id="log-back"),
        Binding("l", "close", "Back", id="log-close", show=False),
        Binding("f", "follow", "Follow", id="follow"),
        Binding("e", "errors", "Errors only", id="errors"),
        Binding("slash", "search", "Search", id="search"),
        Binding("n", "next_match", "Next match", id="next-match"),
        Binding("a", "all_ranks", "All ranks", id="all-ranks"),
        Binding("m", "monitor_traffic", "Monitor traffic", id="monitor-traffic"),
    ]

    DEFAULT_CSS = """
    LogScreen {
        & > #log-status { height: 1; background: $panel; padding: 0 1; }
        & > LogLines { height: 1fr; }
        & > Input { dock: bottom; display: none; margin-bottom: 1; }
        & > Input.-shown { display: block; }
    }
    """

    def __init__(self, book: LogBook, rank: str | None = None, problems_only: bool = False) -> None:
        super().__init__()
        self.book = book
        self.view = LogFilter(rank, problems_only)
        self.query_text = ""
        self.match_index = -1
        self._paused_after = 0
        """The newest line when the view paused: rows after it are new."""
        self._arrivals: deque[tuple[float, int]] = deque()
        self._rate_timer: Timer | None = None
        self._status = ""

    @property
    def rank(self) -> str | None:
        return self.view.rank

    @property
    def problems_only(self) -> bool:
        return self.view.problems_only

    @property
    def following(self) -> bool:
        return self.lines.following

    @property
    def pending(self) -> int:
        """Lines shown by the filter that arrived since the view paused."""
        return 0 if self.following else self.lines.index.count_after(self._paused_after)

    @property
    def matches(self) -> list[int]:
        """The rows that match the search."""
        index = self.lines.index
        return [index.row_of(seq) for seq in index.matches]

    @property
    def lines(self) -> LogLines:
        return self.query_one(LogLines)

    def compose(self) -> ComposeResult:
        yield Static(Content(""), id="log-status")
        yield LogLines(self.book, self.view, id="log")
        yield Input(placeholder="search the log (enter to find, escape to close)", id="search")
        yield Footer()

    class Opened(Message):
        """The log view was opened (its status counts lines per second: the app ticks every
        second while it is open)."""

    composed = False
    """Its widgets are mounted: until then a flush has nothing to pull into (the view is built
    from the whole ring when it mounts)."""

    def on_mount(self) -> None:
        self.composed = True
        self.lines.focus()
        self.lines.to_end()
        self._update_status()
        self.post_message(self.Opened())

    def reload(self) -> None:
        """Rebuild the view from the ring (after a filter, rank or search change)."""
        self.lines.refill(self.view, self.query_text)
        self.match_index = -1
        self._update_status()

    def pull(self) -> None:
        """Take the lines that arrived since the last flush."""
        now = time.monotonic()
        arrivals = self._arrivals
        arrivals.append((now, self.book.total))
        while len(arrivals) > 2 and arrivals[1][0] <= now - RATE_SECONDS:
            arrivals.popleft()
        self.lines.catch_up()
        self._update_status()

    def lines_per_s(self) -> float:
        """The rate lines reached the ring over about the last second (0 once it is quiet)."""
        arrivals = self._arrivals
        if len(arrivals) < 2:
            return 0.0
        (start, first), (end, last) = arrivals[0], arrivals[-1]
        if time.monotonic() - end > RATE_SECONDS or end <= start:
            return 0.0
        return (last - first) / max(end - start, RATE_SECONDS / 10)

    def _update_status(self) -> None:
        index = self.lines.index
        rate = self.lines_per_s()
        status = LogStatus(
            rank=self.rank,
            problems_only=self.problems_only,
            following=self.following,
            new=self.pending,
            lines_per_s=rate,
            query=self.query_text,
            match=self.match_index + 1 if index.matches else 0,
            matches=len(index.matches),
            hidden=len(index.hidden),
            monitor_shown=self.view.monitor_shown,
            first_kept=self.book.first if self.book.dropped else 1,
        ).text()
        if rate >= BURST_LINES_PER_S and self._rate_timer is None:
            self._rate_timer = self.set_timer(RATE_SECONDS * 1.1, self._rate_due)
        if status != self._status:
            self._status = status
            self.query_one("#log-status", Static).update(Content(status), layout=False)

    def _rate_due(self) -> None:
        """After a burst the status line drops its rate once the arrivals have stopped."""
        self._rate_timer = None
        self._update_status()

    def action_close(self) -> None:
        search = self.query_one(Input)
        if search.has_class("-shown"):
            search.remove_class("-shown")
            self.lines.focus()
            return
        self.dismiss()

    def action_follow(self) -> None:
        self._set_following(not self.following)

    def _set_following(self, following: bool) -> None:
        lines = self.lines
        lines.following = following
        if following:
            lines.catch_up()
            lines.to_end()
        else:
            self._paused_after = self.book.total
        self._update_status()

    def on_log_lines_scrolled_back(self, _: LogLines.ScrolledBack) -> None:
        self._set_following(False)

    def action_errors(self) -> None:
        self.view = self.view._replace(problems_only=not self.view.problems_only)
        self.reload()

    def action_all_ranks(self) -> None:
        self.view = self.view._replace(rank=None)
        self.reload()

    def action_monitor_traffic(self) -> None:
        self.view = self.view._replace(monitor_shown=not self.view.monitor_shown)
        self.reload()

    def action_search(self) -> None:
        search = self.query_one(Input)
        search.add_class("-shown")
        search.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.query_text = event.value
        event.input.remove_class("-shown")
        self.lines.focus()
        self.reload()
        if self.following and self.lines.index.matches:
            self._set_following(False)
        self.action_next_match()

    def action_next_match(self) -> None:
        found = self.lines.index.matches
        if not found:
            self._update_status()
            return
        self.match_index = (self.match_index + 1) % len(found)
        self.lines.show_row(self.lines.index.row_of(found[self.match_index]))
        self._update_status()
