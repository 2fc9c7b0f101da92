"""Lines of text drawn through Textual's line API, each laid out for the width it has when drawn.

Textual draws a widget's ``render`` through its text layout (wrapping, overflow, alignment) at
every repaint, which costs more than the rest of a one-line repaint. A line that is already cut
to its width needs none of that: ``draw_line`` builds its strip directly, with the segments the
layout would make, and leaves a line that does not fit to the layout. ``ContentLine`` is a widget
of one such line; a widget of several keeps a ``LineSlot`` per line and repaints only the lines
that changed.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import ClassVar

from rich.segment import Segment
from rich.style import Style as RichStyle
from textual.content import Content
from textual.selection import Selection
from textual.strip import Strip
from textual.style import Style
from textual.visual import Visual
from textual.widget import Widget

LineMaker = Callable[[int], Content]


def blank(width: int) -> Content:
    return Content("")


class LineSlot:
    """One line of a widget: what makes it for a width, what it depends on, what is drawn."""

    def __init__(self) -> None:
        self.make: LineMaker = blank
        self.key: object = None
        """Everything the line depends on besides the width (None: not known)."""
        self.drawn: Content | None = None
        """The line on screen (None before the first draw)."""
        self._fresh: tuple[int, Content] | None = None
        """The line ``set`` just made, drawn as is when the width has not changed since."""

    def set(self, make: LineMaker, key: object, width: int) -> bool:
        """Take ``make``'s line; True when the line it makes for ``width`` is not the drawn one."""
        if key is not None and key == self.key and self.drawn is not None:
            return False
        self.make, self.key = make, key
        fresh = make(width)
        self._fresh = (width, fresh)
        return self.drawn is None or not fresh.is_same(self.drawn)

    def line(self, width: int) -> Content:
        """The line to draw at ``width``; it becomes the drawn one."""
        fresh, self._fresh = self._fresh, None
        self.drawn = fresh[1] if fresh is not None and fresh[0] == width else self.make(width)
        return self.drawn


class ContentLine(Widget):
    """One line made by ``make`` for the width it is drawn at; repainted only when it changes."""

    DEFAULT_CSS = "ContentLine { height: 1; width: 1fr; }"
    MIN_WIDTH: ClassVar[int] = 1
    """The least width a line is laid out for (a narrower pane cuts it)."""

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.slot = LineSlot()
        self._drawn_width: int | None = None

    @property
    def drawn(self) -> Content | None:
        return self.slot.drawn

    @property
    def line_width(self) -> int:
        return max(self.MIN_WIDTH, self.content_size.width)

    def show_line(self, make: LineMaker, key: object = None) -> None:
        """Draw ``make``'s lines from now on; repaint only if its line differs from the drawn
        (``key``: everything the line depends on besides the width, when known)."""
        width = self._drawn_width or self.line_width  # a resize repaints the line anyway
        if self.slot.set(make, key, width):
            self.refresh()

    def render(self) -> Content:
        return self.slot.drawn or Content("")

    def render_line(self, y: int) -> Strip:
        width = self._drawn_width = self.line_width
        line = self.slot.line(width) if y == 0 else Content("")
        return draw_line(self, line, y, self.visual_style)


def draw_line(widget: Widget, line: Content, y: int, style: Style) -> Strip:
    """Row ``y`` of ``widget``'s content showing ``line`` on ``style``, as Textual's text layout
    draws a widget of that one line (with the part of a text selection on that row)."""
    width = widget.size.width
    if (selection := widget.text_selection) is not None:
        line = _selected(widget, line, selection, y)
    if fits(line, width):
        return line_strip(line, style, widget._get_style, y)
    strips = Visual.to_strips(widget, line, width, 1, style, apply_selection=False)
    return strips[0] if strips else Strip.blank(width, style.rich_style)


def _selected(widget: Widget, line: Content, selection: Selection, y: int) -> Content:
    span = selection.get_span(y)
    if span is None:
        return line
    start, end = span
    styles = widget.screen.get_component_styles("screen--selection")
    return line.stylize(Style.from_styles(styles), start, len(line.plain) if end == -1 else end)


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


def line_strip(
    line: Content, style: Style, parse: Callable[[str | Style], Style], y: int = 0
) -> Strip:
    """The strip Textual's text layout makes of a line that ``fits``, drawn on ``style`` with the
    line's own styles read by ``parse`` (each segment keeps its offset, for text selection)."""
    segments: list[Segment] = []
    x = 0
    for text, text_style in line.render(style, end="", parse_style=parse):
        segments.append(Segment(text, _segment_style(style, text_style, x, y)))
        x += len(text)
    return Strip(segments, line.cell_length)


@lru_cache(maxsize=1024)
def _segment_style(style: Style, text_style: Style, x: int, y: int) -> RichStyle:
    """Lines repainted every second draw the same few styles at the same offsets."""
    return (style + text_style).rich_style_with_offset(x, y)
