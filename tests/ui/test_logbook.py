"""The log ring keeps the newest lines, counts what it dropped and filters by rank and problem."""

from __future__ import annotations

from tui.app.feed.logbook import LogBook
from tui.engine.logs.log_line import LogLine


def _fill(book: LogBook, count: int) -> None:
    book.extend(LogLine(f"TP{i % 2}", f"line {i}", i % 5 == 0) for i in range(count))


def test_keeps_only_the_newest_lines_and_counts_the_rest() -> None:
    book = LogBook(capacity=10)
    _fill(book, 25)
    assert book.total == 25
    assert book.dropped == 15
    assert [line.text for line in book.since(0)] == [f"line {i}" for i in range(15, 25)]


def test_since_returns_only_what_is_new() -> None:
    book = LogBook(capacity=100)
    _fill(book, 30)
    assert [line.seq for line in book.since(27)] == [28, 29, 30]
    assert list(book.since(30)) == []


def test_select_filters_by_rank_and_problem() -> None:
    book = LogBook(capacity=100)
    _fill(book, 20)
    tp1 = list(book.select("TP1", problems_only=False))
    assert {line.rank for line in tp1} == {"TP1"}
    problems = list(book.select(None, problems_only=True))
    assert [line.text for line in problems] == ["line 0", "line 5", "line 10", "line 15"]
