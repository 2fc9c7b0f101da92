"""The app's behaviour through Textual's pilot: messages in, widgets and keys out."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from textual.command import CommandList
from textual.pilot import Pilot
from textual.widgets import Static

from tests.ui.fakes import FakeClock, FakeLink, ranks, server
from tests.ui.pilot_wait import until
from tui.app.feed.feed_sources import ScriptedSource
from tui.app.feed.stream_items import ChunkReceived
from tui.app.monitor import themes
from tui.app.monitor.monitor_app import MonitorApp
from tui.app.monitor.monitor_messages import HealthPolled
from tui.app.monitor.view_model import HealthReading, Target
from tui.app.screens.help_screen import HelpScreen
from tui.app.screens.log_view import LogScreen
from tui.app.widgets.failure_panel import FailurePanel
from tui.app.widgets.health_badge import HealthBadge, VerdictBadge
from tui.app.widgets.rank_panel import RankPanel
from tui.engine.judge.health import HealthState
from tui.engine.startup.snapshot import Failure, Snapshot
from tui.engine.startup.vocabulary import FailureKind, Stage, Verdict


def _app(link: FakeLink, **options: object) -> MonitorApp:
    return MonitorApp(
        link=link,
        source=ScriptedSource([]),
        target=Target("kimi", "gpu-host"),
        clock=FakeClock(),
        **options,  # type: ignore[arg-type]
    )


async def _settle(app: MonitorApp, pilot: Pilot[int]) -> None:
    await pilot.pause()
    app.ingest.drain()
    app.state.touch()
    app.flush()
    await pilot.pause()


async def test_before_any_data_the_verdict_is_connecting() -> None:
    app = _app(FakeLink())
    async with app.run_test(size=(100, 30)) as pilot:
        await _settle(app, pilot)
        assert app.query_one(VerdictBadge).verdict is Verdict.CONNECTING
        assert "Waiting" in str(app.screen.query_one(".waiting", Static).render())


async def test_chunks_reach_the_engine_and_the_log_ring() -> None:
    link = FakeLink()
    app = _app(link)
    async with app.run_test(size=(100, 30)) as pilot:
        await app.ingest.put(ChunkReceived(b"[ts TP0] one\n[ts TP1] two\n"))
        await _settle(app, pilot)
        assert link.fed == [b"[ts TP0] one\n[ts TP1] two\n"]
        assert app.state.log.total == 2
        assert app.query_one(VerdictBadge).verdict is Verdict.STARTING


async def test_one_panel_per_rank_with_stage_and_progress() -> None:
    link = FakeLink(Snapshot(server=server(), ranks=ranks(8), started_at=900.0))
    app = _app(link)
    async with app.run_test(size=(160, 48)) as pilot:
        await app.ingest.put(ChunkReceived(b"x\n"))
        await _settle(app, pilot)
        panels = list(app.query(RankPanel))
        assert [panel.tag for panel in panels] == [f"TP{i}" for i in range(8)]
        text = panels[0].render_text()
        assert "weight loading" in text
        assert "9/20 shards" in text


async def test_a_failure_is_shown_highlighted_and_copied() -> None:
    excerpt = "Traceback...\ntorch.OutOfMemoryError: CUDA out of memory"
    failure = Failure(FailureKind.OOM, "TP3", 120, excerpt, Stage.CUDA_GRAPH)
    states = tuple(replace(r, failed=r.tag == "TP3") for r in ranks(8))
    link = FakeLink(Snapshot(server=server(), ranks=states, failure=failure, started_at=900.0))
    link.verdict_value = Verdict.FAILED
    app = _app(link)
    async with app.run_test(size=(160, 48)) as pilot:
        await app.ingest.put(ChunkReceived(b"x\n"))
        await _settle(app, pilot)
        panel = app.query_one(FailurePanel)
        assert panel.has_class("-shown")
        assert "CUDA out of memory" in str(panel.query_one("#failure-excerpt", Static).render())
        failing = [p.tag for p in app.query(RankPanel) if p.has_class("-failing")]
        assert failing == ["TP3"]
        await pilot.press("y")
        assert "TP3" in app.clipboard
        assert "CUDA out of memory" in app.clipboard


async def test_health_readings_reach_the_badge() -> None:
    app = _app(FakeLink())
    async with app.run_test(size=(100, 30)) as pilot:
        reading = HealthReading(HealthState.STARTING, 503, 12.0, "/health")
        app.post_message(HealthPolled(reading))
        await _settle(app, pilot)
        assert app.query_one(HealthBadge).reading == reading
        assert "503" in str(app.query_one(HealthBadge).render())


async def test_log_view_follows_pauses_and_filters() -> None:
    app = _app(FakeLink())
    async with app.run_test(size=(100, 30)) as pilot:
        await app.ingest.put(ChunkReceived(b"[ts TP0] fine\n[ts TP1] an error here\n"))
        await _settle(app, pilot)
        await pilot.press("l")
        await _settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, LogScreen)
        assert screen.lines.texts() == ["[ts TP0] fine", "[ts TP1] an error here"]
        await pilot.press("f")
        await app.ingest.put(ChunkReceived(b"[ts TP0] later\n"))
        await _settle(app, pilot)
        assert screen.pending == 1
        assert "paused, 1 new" in _status(screen)
        await pilot.press("f")
        await _settle(app, pilot)
        assert screen.lines.on_screen()[-1] == "[ts TP0] later"
        assert "following" in _status(screen)
        await pilot.press("e")
        await _settle(app, pilot)
        assert screen.lines.texts() == ["[ts TP1] an error here"]
        await pilot.press("escape")
        assert not isinstance(app.screen, LogScreen)


def _status(screen: LogScreen) -> str:
    return str(screen.query_one("#log-status", Static).render())


async def test_search_finds_matching_lines() -> None:
    app = _app(FakeLink())
    async with app.run_test(size=(100, 30)) as pilot:
        lines = b"".join(b"[ts TP0] line %d\n" % i for i in range(200))
        await app.ingest.put(ChunkReceived(lines + b"[ts TP0] needle\n"))
        await _settle(app, pilot)
        await pilot.press("slash")
        await _settle(app, pilot)
        await pilot.press(*"needle", "enter")
        await _settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, LogScreen)
        assert screen.matches == [200]
        assert not screen.following


async def test_keys_can_be_remapped_by_binding_id() -> None:
    app = _app(FakeLink(), keymap={"log": "o"})
    async with app.run_test(size=(100, 30)) as pilot:
        await _settle(app, pilot)
        await pilot.press("o")
        await until(pilot, lambda: isinstance(app.screen, LogScreen))


async def test_help_lists_the_keys() -> None:
    app = _app(FakeLink(), keymap={"log": "o"})
    async with app.run_test(size=(100, 40)) as pilot:
        await _settle(app, pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        text = app.screen.text.plain
        assert "Log" in text
        assert "o " in text
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)


async def test_digits_focus_ranks() -> None:
    link = FakeLink(Snapshot(server=server(), ranks=ranks(8), started_at=900.0))
    app = _app(link)
    async with app.run_test(size=(160, 48)) as pilot:
        await app.ingest.put(ChunkReceived(b"x\n"))
        await _settle(app, pilot)
        await pilot.press("3")
        assert isinstance(app.focused, RankPanel)
        assert app.focused.tag == "TP2"
        await pilot.press("l")
        assert isinstance(app.screen, LogScreen)
        assert app.screen.rank == "TP2"


async def test_an_unknown_theme_falls_back_with_one_notification() -> None:
    app = _app(FakeLink(), theme="no-such-theme")
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        await _settle(app, pilot)
        assert app.theme == "bringup-dark"
        messages = [n.message for n in app._notifications]
        assert sum("no-such-theme" in m for m in messages) == 1


async def test_ctrl_c_and_q_quit() -> None:
    for key in ("q", "ctrl+c"):
        app = _app(FakeLink())
        async with app.run_test(size=(80, 24)) as pilot:
            await _settle(app, pilot)
            await pilot.press(key)
            await pilot.pause()
        assert app.return_code in (0, None)
        assert not app.is_running


async def test_the_command_palette_focuses_a_rank_by_name() -> None:
    link = FakeLink(Snapshot(server=server(), ranks=ranks(8), started_at=900.0))
    app = _app(link)
    async with app.run_test(size=(160, 48)) as pilot:
        await app.ingest.put(ChunkReceived(b"x\n"))
        await _settle(app, pilot)
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"Focus rank TP5")
        await until(pilot, lambda: _palette_ready(app))
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.focused, RankPanel))
        assert isinstance(app.focused, RankPanel)
        assert app.focused.tag == "TP5"


def _palette_ready(app: MonitorApp) -> bool:
    lists = app.screen.query(CommandList)
    return bool(lists) and lists.first().option_count > 0


async def test_a_broken_theme_file_is_reported_once_and_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "good.toml").write_text('name = "bringup-dark"\n[colors]\nprimary = "#336699"\n')
    (tmp_path / "bad.toml").write_text('name = "x"\n[colors]\nprimary = "no-such-colour"\n')
    monkeypatch.setattr(themes, "themes_dir", lambda: tmp_path)
    app = _app(FakeLink())
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        await _settle(app, pilot)
        messages = [n.message for n in app._notifications]
        assert sum("bad.toml" in m and "colors.primary" in m for m in messages) == 1
        assert app.theme == "bringup-dark"


async def test_a_repaint_before_the_log_view_has_mounted_leaves_it_to_mount() -> None:
    app = _app(FakeLink())
    async with app.run_test(size=(100, 30)) as pilot:
        await app.ingest.put(ChunkReceived(b"[ts TP0] one\n"))
        await _settle(app, pilot)
        app.action_open_log()
        app.state.touch()
        app.flush()  # the view is on the stack, its widgets not mounted yet
        await _settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, LogScreen)
        assert screen.lines.texts() == ["[ts TP0] one"]
