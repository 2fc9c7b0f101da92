"""The log view over a ring it outgrows: it follows the newest line, keeps its place paused,
hides the monitor's own traffic until asked, and its status line says all of that."""

from __future__ import annotations

from collections.abc import Callable

from textual.app import App
from textual.widgets import Static

from tui.app.feed.log_index import LogFilter, LogIndex
from tui.app.feed.logbook import LogBook
from tui.app.screens.log_status import LogStatus
from tui.app.screens.log_view import LogScreen
from tui.engine.logs.log_line import LogLine

HEALTH = 'INFO:     127.0.0.1:5 - "GET /health?from=bringup HTTP/1.1" 200 OK'


def _add(book: LogBook, start: int, count: int, rank: str = "TP0") -> None:
    book.extend(LogLine(rank, f"line {n}", n % 7 == 0) for n in range(start, start + count))


class _Host(App[None]):
    def __init__(self, screen: LogScreen) -> None:
        super().__init__()
        self.log_screen = screen

    def on_mount(self) -> None:
        self.push_screen(self.log_screen)


def _status(screen: LogScreen) -> str:
    return str(screen.query_one("#log-status", Static).render())


def test_the_status_line_says_how_the_view_follows() -> None:
    assert LogStatus().text() == "log · all ranks · following"
    assert LogStatus(lines_per_s=12_400.4).text() == "log · all ranks · following, 12,400 lines/s"
    assert LogStatus(lines_per_s=40).text() == "log · all ranks · following"
    paused = LogStatus(rank="TP3", following=False, new=3210, problems_only=True)
    assert paused.text() == "log · TP3 · warnings and errors only · paused, 3,210 new"
    hidden = LogStatus(hidden=1234).text()
    assert hidden == "log · all ranks · following · 1,234 monitor lines hidden"
    assert LogStatus(monitor_shown=True).text().endswith("monitor traffic shown")
    kept = LogStatus(query="oom", match=2, matches=5, first_kept=800_001).text()
    assert kept.endswith("search 'oom': 2/5 · kept from line 800,001")


def test_the_index_follows_a_ring_it_outgrows() -> None:
    book = LogBook(capacity=100)
    index = LogIndex(book, LogFilter(problems_only=True), needle="LINE 53")
    _add(book, 0, 50)
    assert index.catch_up().added == 8
    _add(book, 50, 500)
    caught = index.catch_up()
    assert caught.trimmed == 8
    assert [book.text(seq) for seq in index.rows][-1] == "line 546"
    assert all(seq >= book.first for seq in index.rows)
    assert [book.text(seq) for seq in index.matches] == ["line 532", "line 539"]


async def test_following_shows_the_newest_line_after_every_burst() -> None:
    book = LogBook(capacity=1_000)
    _add(book, 0, 5_000)
    screen = LogScreen(book)
    async with _Host(screen).run_test(size=(80, 20)) as pilot:
        await pilot.pause()
        assert screen.lines.on_screen()[-1] == "line 4999"
        for burst in range(1, 5):
            _add(book, burst * 5_000, 5_000)
            screen.pull()
            await pilot.pause()
            assert screen.lines.on_screen()[-1] == f"line {burst * 5_000 + 4_999}"
        assert "kept from line 24,001" in _status(screen)


async def test_paused_the_rows_on_screen_stay_while_the_ring_moves() -> None:
    book = LogBook(capacity=1_000)
    _add(book, 0, 600)
    screen = LogScreen(book)
    async with _Host(screen).run_test(size=(80, 20)) as pilot:
        await pilot.pause()
        await pilot.press("f")
        before = screen.lines.on_screen()
        _add(book, 600, 300)  # the ring drops nothing yet
        screen.pull()
        await pilot.pause()
        assert screen.lines.on_screen() == before
        _add(book, 900, 300)  # the ring drops 200 lines the view had above the screen
        screen.pull()
        await pilot.pause()
        assert screen.lines.on_screen() == before
        assert "paused, 600 new" in _status(screen)
        await pilot.press("f")
        await pilot.pause()
        assert screen.lines.on_screen()[-1] == "line 1199"


async def test_scrolling_back_pauses_and_says_so() -> None:
    book = LogBook()
    _add(book, 0, 500)
    screen = LogScreen(book)
    async with _Host(screen).run_test(size=(80, 20)) as pilot:
        await pilot.pause()
        await pilot.press("pageup")
        await pilot.pause()
        assert not screen.following
        assert "paused, 0 new" in _status(screen)


async def test_the_monitor_traffic_is_hidden_until_asked() -> None:
    book = LogBook()
    book.extend([LogLine(None, "user line", False), LogLine(None, HEALTH, False)] * 3)
    screen = LogScreen(book)
    async with _Host(screen).run_test(size=(100, 20)) as pilot:
        await pilot.pause()
        assert screen.lines.texts() == ["user line"] * 3
        assert "3 monitor lines hidden" in _status(screen)
        await pilot.press("m")
        await pilot.pause()
        assert screen.lines.texts() == ["user line", HEALTH] * 3
        assert "monitor traffic shown" in _status(screen)


async def test_search_finds_lines_that_arrive_during_a_burst() -> None:
    book = LogBook()
    _add(book, 0, 1_000)
    screen = LogScreen(book)
    async with _Host(screen).run_test(size=(80, 20)) as pilot:
        await pilot.pause()
        await pilot.press("slash", *"line 12", "enter")
        await pilot.pause()
        found = len(screen.matches)
        assert found == 11  # line 12 and line 120 to line 129
        _add(book, 1_000, 1_000)
        screen.pull()
        await pilot.pause()
        assert len(screen.matches) == found + 100  # line 1200 to line 1299


def test_the_log_view_at_80x24(snap_compare: Callable[..., bool]) -> None:
    book = LogBook(capacity=1_000)
    for n in range(1_200):
        text = HEALTH if n % 3 == 0 else f"[2026-03-01 10:00:{n % 60:02d} TP{n % 8}] line {n}"
        book.extend([LogLine(f"TP{n % 8}", text, n % 50 == 0)])
    assert snap_compare(_Host(LogScreen(book)), terminal_size=(80, 24))


def test_a_probes_prefill_is_monitor_traffic_and_a_users_is_not() -> None:
    book = LogBook()
    probe = (
        "[ts TP0] Prefill batch, #new-seq: 1, #new-token: 1, #cached-token: 0, token usage: 0.00"
    )
    user = (
        "[ts TP0] Prefill batch, #new-seq: 1, #new-token: 812, #cached-token: 0, token usage: 0.01"
    )
    book.extend([LogLine("TP0", probe, False), LogLine("TP0", user, False)])
    index = LogIndex(book, LogFilter())
    assert [book.text(seq) for seq in index.rows] == [user]
    assert len(index.hidden) == 1
