"""The full-screen log: one rank or all, following the tail, with search and a problems filter."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Footer, Input, Log, Static

from tui.app.feed.logbook import LogBook

MAX_LINES = 20_000


class LogScreen(Screen[None]):
    """Lines reach the ``Log`` widget only through ``pull``, which the app's flush timer calls."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Back", id="log-back"),
        Binding("l", "close", "Back", id="log-close", show=False),
        Binding("f", "follow", "Follow", id="follow"),
        Binding("e", "errors", "Errors only", id="errors"),
        Binding("slash", "search", "Search", id="search"),
        Binding("n", "next_match", "Next match", id="next-match"),
        Binding("a", "all_ranks", "All ranks", id="all-ranks"),
    ]

    DEFAULT_CSS = """
    LogScreen {
        & > #log-status { height: 1; background: $panel; padding: 0 1; }
        & > Log { height: 1fr; }
        & > Input { dock: bottom; display: none; margin-bottom: 1; }
        & > Input.-shown { display: block; }
    }
    """

    def __init__(self, book: LogBook, rank: str | None = None, problems_only: bool = False) -> None:
        super().__init__()
        self.book = book
        self.rank = rank
        self.problems_only = problems_only
        self.following = True
        self.pending = 0
        self.query_text = ""
        self.matches: list[int] = []
        self.match_index = -1
        self._shown = 0
        self._counted = 0

    def compose(self) -> ComposeResult:
        yield Static(Content(""), id="log-status")
        yield Log(max_lines=MAX_LINES, auto_scroll=True, id="log")
        yield Input(placeholder="search the log (enter to find, escape to close)", id="search")
        yield Footer()

    def on_mount(self) -> None:
        self.reload()

    def reload(self) -> None:
        """Rewrite the widget from the ring (after a filter or rank change)."""
        log = self.query_one(Log)
        log.clear()
        lines = list(self.book.select(self.rank, self.problems_only))[-MAX_LINES:]
        log.write_lines([line.text for line in lines], scroll_end=self.following)
        self._shown = self._counted = self.book.total
        self.pending = 0
        self._update_status()

    def pull(self) -> None:
        """Take the lines that arrived since the last flush."""
        if self.book.total == self._counted:
            return
        if not self.following:
            fresh = self.book.select(self.rank, self.problems_only, after=self._counted)
            self.pending += sum(1 for _ in fresh)
            self._counted = self.book.total
            self._update_status()
            return
        fresh_lines = self.book.select(self.rank, self.problems_only, after=self._shown)
        texts = [line.text for line in fresh_lines][-MAX_LINES:]
        self._shown = self._counted = self.book.total
        if texts:
            self.query_one(Log).write_lines(texts)
        self._update_status()

    def _update_status(self) -> None:
        who = self.rank or "all ranks"
        parts = [f"log · {who}"]
        if self.problems_only:
            parts.append("warnings and errors only")
        parts.append("following" if self.following else f"paused · {self.pending} new lines")
        if self.query_text:
            found = len(self.matches)
            at = self.match_index + 1 if self.matches else 0
            parts.append(f"search {self.query_text!r}: {at}/{found}")
        if self.book.dropped:
            parts.append(f"{self.book.dropped} oldest lines dropped")
        self.query_one("#log-status", Static).update(Content(" · ".join(parts)), layout=False)

    def action_close(self) -> None:
        search = self.query_one(Input)
        if search.has_class("-shown"):
            search.remove_class("-shown")
            self.query_one(Log).focus()
            return
        self.dismiss()

    def action_follow(self) -> None:
        self.following = not self.following
        log = self.query_one(Log)
        log.auto_scroll = self.following
        if self.following:
            if self.pending > MAX_LINES:
                self.reload()
            else:
                self.pull_after_pause()
            log.scroll_end(animate=False)
        self._update_status()

    def pull_after_pause(self) -> None:
        self._counted = self._shown
        self.pending = 0
        self.pull()

    def action_errors(self) -> None:
        self.problems_only = not self.problems_only
        self.reload()

    def action_all_ranks(self) -> None:
        self.rank = None
        self.reload()

    def action_search(self) -> None:
        search = self.query_one(Input)
        search.add_class("-shown")
        search.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.query_text = event.value
        needle = event.value.casefold()
        lines = self.query_one(Log).lines
        self.matches = [i for i, text in enumerate(lines) if needle and needle in text.casefold()]
        self.match_index = -1
        event.input.remove_class("-shown")
        self.query_one(Log).focus()
        if self.following and self.matches:
            self.action_follow()
        self.action_next_match()

    def action_next_match(self) -> None:
        if not self.matches:
            self._update_status()
            return
        self.match_index = (self.match_index + 1) % len(self.matches)
        line = self.matches[self.match_index]
        self.query_one(Log).scroll_to(y=max(0, line - 2), animate=False)
        self._update_status()
