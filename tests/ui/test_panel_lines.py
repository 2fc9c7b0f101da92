"""Panel lines from the view model: the last message without its envelope, and TP0's bars
shown as approximate on ranks that print none."""

from __future__ import annotations

from tests.ui.monitor_factory import feed_until, make_monitor
from tui.app.screens.main_screen import approximate_progress, rank_cards
from tui.app.widgets.rank_panel import RankPanel


async def test_other_ranks_show_tp0_progress_as_approximate() -> None:
    app, clock = make_monitor()
    async with app.run_test(size=(200, 60)) as pilot:
        await pilot.pause()
        feed_until(app, clock, 8, "weights")
        app.state.touch()
        app.flush()
        await pilot.pause()
        view = app.last_view
        assert view is not None
        cards = {card.rank.tag: card for card in rank_cards(view)}
        tp0 = cards["TP0"]
        assert tp0.rank.progress is not None
        assert tp0.approx is None
        assert cards["TP1"].approx == tp0.rank.progress
        panels = {panel.tag: panel for panel in app.screen.query(RankPanel)}
        tp1 = panels["TP1"].render_text()
        assert "≈" in tp1
        assert "≈" not in panels["TP0"].render_text()
        assert "Load weight begin" in tp1
        assert "TP1]" not in tp1


def test_no_approximation_outside_the_bar_stages() -> None:
    app, clock = make_monitor()
    feed_until(app, clock, 8, "kv")
    ranks = app.state.link.snapshot.ranks
    assert all(approximate_progress(rank, ranks) is None for rank in ranks)
