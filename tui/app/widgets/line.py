"""A widget one line high whose text is laid out for the width it has when drawn.

Textual draws a widget's ``render`` through its text layout (wrapping, overflow, alignment,
selection) at every repaint, which costs more than the rest of a one-line repaint. A line that is
already cut to its width needs none of that: ``ContentLine`` builds its one strip itself, with the
same segments the layout would make, and leaves Textual's layout to a line that does not fit or
one with a text selection.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import ClassVar

from rich.segment import Segment
from rich.style import Style as RichStyle
from textual.content import Content
from textual.strip import Strip
from textual.style import Style
from textual.widget import Widget

LineMaker = Callable[[int], Content]


def blank(width: int) -> Content:
    return Content("")


class ContentLine(Widget):
    """One line made by ``make`` for the width it is drawn at; repainted only when it changes."""

    DEFAULT_CSS = "ContentLine { height: 1; width: 1fr; }"
    MIN_WIDTH: ClassVar[int] = 1
    """The least width a line is laid out for (a narrower pane cuts it)."""

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.make: LineMaker = blank
        self.drawn: Content | None = None
        """The line on screen (None before the first draw)."""
        self._fresh: tuple[int, Content] | None = None
        """The line ``show_line`` just made, drawn as is when the width has not changed since."""
        self._drawn_width: int | None = None

    @property
    def line_width(self) -> int:
        return max(self.MIN_WIDTH, self.content_size.width)

    def show_line(self, make: LineMaker) -> None:
        """Draw ``make``'s lines from now on; repaint only if its line differs from the drawn."""
        self.make = make
        width = self._drawn_width or self.line_width  # a resize repaints the line anyway
        fresh = make(width)
        self._fresh = (width, fresh)
        if self.drawn is None or not fresh.is_same(self.drawn):
            self.refresh()

    def _line(self) -> Content:
        width = self._drawn_width = self.line_width
        fresh, self._fresh = self._fresh, None
        self.drawn = fresh[1] if fresh is not None and fresh[0] == width else self.make(width)
        return self.drawn

    def render(self) -> Content:
        return self._line()

    def render_line(self, y: int) -> Strip:
        if y == 0 and self.text_selection is None:
            line = self._line()
            if fits(line, self.size.width):
                return line_strip(line, self.visual_style, self._get_style)
        return super().render_line(y)


def fits(line: Content, width: int) -> bool:
    """The line is one left-aligned line that the text layout would draw as it is: no tab to
    expand, no line break, nothing to wrap or cut."""
    plain = line.plain
    return (
        line.cell_length <= width
        and len(plain) <= width
        and "\t" not in plain
        and "\n" not in plain
    )


def line_strip(line: Content, style: Style, parse: Callable[[str | Style], Style]) -> Strip:
    """The strip Textual's text layout makes of a line that ``fits``, drawn on ``style`` with the
    line's own styles read by ``parse`` (each segment keeps its offset, for text selection)."""
    segments: list[Segment] = []
    x = 0
    for text, text_style in line.render(style, end="", parse_style=parse):
        segments.append(Segment(text, _segment_style(style, text_style, x)))
        x += len(text)
    return Strip(segments, line.cell_length)


@lru_cache(maxsize=1024)
def _segment_style(style: Style, text_style: Style, x: int) -> RichStyle:
    """Lines repainted every second draw the same few styles at the same offsets."""
    return (style + text_style).rich_style_with_offset(x, 0)
