"""A one-line widget draws its own strip only where that is exactly what Textual's text layout
would draw, and leaves every other line to the layout."""

from __future__ import annotations

import pytest
from textual.app import App, ComposeResult
from textual.content import Content
from textual.strip import Strip
from textual.visual import Visual

from tui.app.widgets.content_line import ContentLine, fits

LINES = {
    "plain": Content("03:12 / ~10:00 ETA 05:10-09:30"),
    "styled": Content.assemble(
        ("bringup", "bold $primary"), " · ", ("● connected", "$health-ok"), " · model",
        (" (detail)", "$text-muted"),
    ),
    "wide characters": Content.assemble(("日本語 ", "bold"), "━━━━────", (" 53%", "$rank-ready")),
    "too long": Content("x" * 80),
    "tab": Content("a\tb"),
    "empty": Content(""),
}  # fmt: skip


class LineApp(App[None]):
    CSS = "ContentLine { width: 40; padding: 0 1; color: $text-muted; background: $panel; }"

    def compose(self) -> ComposeResult:
        yield ContentLine(id="line")


def _layout_strip(widget: ContentLine, line: Content) -> Strip:
    strips = Visual.to_strips(widget, line, widget.size.width, 1, widget.visual_style)
    return strips[0] if strips else Strip.blank(widget.size.width)


@pytest.mark.parametrize("name", LINES)
async def test_a_line_is_drawn_as_the_text_layout_draws_it(name: str) -> None:
    line = LINES[name]
    app = LineApp()
    async with app.run_test() as pilot:
        widget = app.query_one(ContentLine)
        widget.show_line(lambda width: line)
        await pilot.pause()
        drawn = widget.render_line(0)
        assert list(drawn) == list(_layout_strip(widget, line))
        assert widget.drawn is not None
        assert widget.drawn.is_same(line)


def test_only_a_line_that_needs_no_layout_fits() -> None:
    assert fits(LINES["styled"], 40)
    assert not fits(LINES["too long"], 40)
    assert not fits(LINES["tab"], 40)
    assert not fits(Content("a\nb"), 40)
