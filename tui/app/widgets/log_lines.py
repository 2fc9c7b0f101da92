"""The log view's lines: a virtual view that draws only the rows on screen, read from the ring.

However long the log and however fast it grows, a repaint costs the rows on screen: the widget
holds a ``LogIndex`` (sequence numbers of the lines it shows) and reads each visible row's text
from the ring as it is drawn. While following, every catch-up moves the view to the newest row;
paused, it keeps the rows on screen where they are, even as the ring drops lines from its front.
"""

from __future__ import annotations

from rich.segment import Segment
from textual.events import Resize
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from tui.app.feed.log_index import LogFilter, LogIndex
from tui.app.feed.logbook import LogBook


class LogLines(ScrollView, can_focus=True):
    """Rows of the log ring that pass a filter; follows the newest row while ``following``."""

    DEFAULT_CSS = "LogLines { background: $surface; color: $foreground; }"

    class ScrolledBack(Message):
        """The user scrolled up while the view followed the tail."""

    def __init__(self, book: LogBook, view: LogFilter, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.book = book
        self.index = LogIndex(book, view)
        self.following = True
        self._moving = False

    @property
    def rows(self) -> int:
        return len(self.index.rows)

    def refill(self, view: LogFilter, needle: str = "") -> None:
        """Show the ring through another filter or search (rebuilds the index)."""
        self.index = LogIndex(self.book, view, needle)
        self._resize()
        if self.following:
            self._to_end()
        self.refresh()

    def catch_up(self) -> int:
        """Take the lines that arrived; returns how many the view added."""
        caught = self.index.catch_up()
        if not caught.added and not caught.trimmed:
            return 0
        top = self.scroll_y
        self._resize()
        if self.following:
            self._to_end()
        elif caught.trimmed:  # the rows on screen moved up the index: keep them on screen
            self._move(max(0.0, top - caught.trimmed))
        self.refresh()
        return caught.added

    def show_row(self, row: int) -> None:
        """Scroll so that ``row`` is near the top."""
        self._move(float(max(0, row - 2)))

    def to_end(self) -> None:
        self._to_end()
        self.refresh()

    @property
    def top_row(self) -> int:
        return int(self.scroll_y)

    def texts(self) -> list[str]:
        """The text of every row, oldest first."""
        return [self.book.text(seq) for seq in self.index.rows]

    def on_screen(self) -> list[str]:
        """The text of the rows on screen."""
        top = self.top_row
        return [self.book.text(seq) for seq in self.index.rows[top : top + self.size.height]]

    def _resize(self) -> None:
        self.virtual_size = Size(self.index.width, self.rows)

    def _to_end(self) -> None:
        self._moving = True
        try:
            self.scroll_end(animate=False, immediate=True, x_axis=False)
        finally:
            self._moving = False

    def _move(self, y: float) -> None:
        self._moving = True
        try:
            self.scroll_to(y=y, animate=False, immediate=True)
        finally:
            self._moving = False

    def on_mount(self) -> None:
        self._resize()

    def on_resize(self, _: Resize) -> None:
        if self.following:  # the first layout, or a larger terminal: the newest row stays shown
            self.call_after_refresh(self.to_end)

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if (
            self.following
            and not self._moving
            and new_value < old_value
            and new_value < self.max_scroll_y
        ):
            self.post_message(self.ScrolledBack())

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width = self.size.width
        style = self.rich_style
        row = scroll_y + y
        rows = self.index.rows
        if row >= len(rows):
            return Strip.blank(width, style)
        text = self.book.text(rows[row])
        if "\t" in text:
            text = text.expandtabs()
        strip = Strip([Segment(text, style)])
        return strip.crop_extend(scroll_x, scroll_x + width, style).apply_offsets(scroll_x, row)
