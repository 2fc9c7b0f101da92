"""Every rank's clock runs: time in stage comes from the injected clock, printing or not.

After READY only TP0 prints decode lines; the other ranks say nothing more, and their panels
must still count the time they have been serving.
"""

from __future__ import annotations

from tests.ui.monitor_factory import READY_HEALTH, feed_until, make_monitor
from tests.ui.startup_log import line
from tui.app.screens.main_screen import PANEL_CLOCK_STEP, rank_cards
from tui.app.widgets.rank_panel import RankPanel
from tui.engine.startup.vocabulary import Stage, Verdict

DECODE = (
    "Decode batch, #running-req: 1, #token: 90, token usage: 0.00, gen throughput (token/s): 50.0, "
)


async def test_a_silent_rank_counts_its_time_serving() -> None:
    app, clock = make_monitor()
    async with app.run_test(size=(160, 48)) as pilot:
        feed_until(app, clock, 8, "ready")
        app.state.set_health(READY_HEALTH)
        assert app.state.view().verdict is Verdict.READY
        ready_at = clock.now
        for second in range(0, 120, 10):
            clock.now = ready_at + second
            app.state.feed(line(170 + second, "TP0", DECODE).encode())
        clock.now = ready_at + 125.0
        view = app.state.view()
        cards = {card.rank.tag: card for card in rank_cards(view)}
        silent = cards["TP3"]
        assert silent.rank.stage.order >= Stage.READY.order
        assert silent.rank.last_seen_at < ready_at + 1
        started = silent.rank.stage_started_at
        assert silent.seconds_in_stage >= int(clock.now - started - PANEL_CLOCK_STEP)
        assert cards["TP0"].seconds_in_stage == silent.seconds_in_stage
        app.state.touch()
        app.flush()
        await pilot.pause()
        panel = next(p for p in app.screen.query(RankPanel) if p.tag == "TP3")
        shown = panel.render_text().splitlines()[0]
        assert shown.startswith("serving")
        assert shown.split()[-1] not in ("00:00", "00:01")


async def test_the_clocks_stop_at_the_last_line_once_the_server_stopped() -> None:
    app, clock = make_monitor()
    async with app.run_test(size=(160, 48)):
        feed_until(app, clock, 8, "ready")
        app.state.set_health(READY_HEALTH)
        app.state.view()
        clock.now += 30.0
        app.state.feed(line(200, None, "SIGTERM received. signum=15. Draining requests").encode())
        stopped_at = clock.now
        clock.now += 300.0
        view = app.state.view()
        assert view.verdict is Verdict.STOPPED
        for card in rank_cards(view):
            assert card.seconds_in_stage <= int(stopped_at - card.rank.stage_started_at)
