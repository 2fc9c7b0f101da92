"""The bulk path reads a serving log exactly as the per-line fast path and the full grammar do."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.engine.engine_helpers import SERVING_START, read_after, sglang_lines
from tui.engine.logs import bulk_read as bulk
from tui.engine.startup.log_events import DecodeStats, Event
from tui.engine.startup.snapshot import Snapshot

READY = SERVING_START + sglang_lines("Load weight begin. avail mem=70.00 GB", rank="TP1")

UNPARSED = '] INFO:     127.0.0.1:5 - "NOT A REQUEST'
"""Counted as a request by the fast paths unless it is the first of its ten seconds (the full
grammar does not count it): the fast paths do not parse every access line."""

# What a busy server prints, with the lines that must leave the bulk path in between.
PLAIN = [
    "TP0] Decode batch, #running-req: 3, accept len: 2.{n}, accept rate: 0.7, "
    "gen throughput (token/s): 4{n}.5, #queue-req: 0, ",
    "TP1] Decode batch, #running-req: 1, gen throughput (token/s): 1{n}.0, #queue-req: 0, ",
    "DP1 TP1 EP1] Decode batch, #running-req: 2, accept len: 3.{n}, ",
    "TP0] Prefill batch, #new-seq: 1, #new-token: 5{n}, #cached-token: 0",
    "DP1 TP1 EP1] Prefill batch, #new-seq: {n}",
    '] INFO:     127.0.0.1:4{n} - "POST /generate HTTP/1.1" 200 OK',
    '] INFO:     10.0.0.{n}:80 - "GET /health HTTP/1.1" 200 OK',
    "] Using default chat sampling params from model generation config",
    "TP0] Cache flushed successfully!",
]
ODD = [
    '] INFO:     127.0.0.1:5 - "GET /health HTTP/1.1" 503 Service Unavailable',
    "] INFO:     127.0.0.1:5 - garbage {n}",
    UNPARSED,
    "TP7] Prefill batch, #new-seq: {n}",
    "DP1 TP1 EP1] Decoder {n} is not a decode line",
    "TP0] foo] Decode batch, gen throughput (token/s): 5.0",
    "TP0] Using a] b",
    "TP0] SystemExit: {n}",
    "TP1] Scheduler hit an exception: Traceback (most recent call last):",
    "] server_args=ServerArgs(model_path='/m', tp_size=2)",
    "] The server is fired up and ready to roll!",
    "KV Cache] Prefill batch",
    '] INFO:     127.0.0.1:6{n} - "GET /health?from=bringup HTTP/1.1" 200 OK',
    '] INFO:     127.0.0.1:6{n} - "POST /generate?from=bringup HTTP/1.1" 200 OK',
]
BARE = ["RuntimeError: boom {n}", "plain noise {n}", "", '  File "x.py", line {n}']

Pick = tuple[int, int, int, int]
"""(kind: 0 plain, 1 odd, 2 bare, 3 fractional plain; template; seconds step; figure)."""


def _line(pick: Pick, second: int) -> str:
    kind, index, _, figure = pick
    stamp = f"[2026-01-01 00:{second // 60 % 60:02d}:{second % 60:02d}"
    if kind == 2:
        return BARE[index % len(BARE)].format(n=figure)
    template = (ODD if kind == 1 else PLAIN)[index % (len(ODD) if kind == 1 else len(PLAIN))]
    fraction = f".{figure:03d}" if kind == 3 else ""
    space = "" if template.startswith("]") else " "
    return f"{stamp}{fraction}{space}{template.format(n=figure)}"


def _log(picks: list[Pick]) -> bytes:
    """The lines after ``READY`` (fed on its own first, so that every batch is served)."""
    second, lines = 0, []
    for pick in picks:
        step = pick[2]
        second = max(0, second - 11) if step == 9 else second + step
        lines.append(_line(pick, second))
    return "".join(f"{line}\n" for line in lines).encode()


def _read(data: bytes, size: int, keep_lines: bool = False) -> tuple[list[Event], Snapshot]:
    return read_after(READY, data, size, keep_lines)


@contextmanager
def _bulk_from(lines: int) -> Iterator[None]:
    """Batches of at least ``lines`` lines take the bulk path (a huge number: none does)."""
    with mock.patch.object(bulk, "MIN_LINES", lines):
        yield


LINE_BY_LINE = 10**9


def _picks(kinds: list[int], steps: list[int]) -> st.SearchStrategy[list[Pick]]:
    pick = st.tuples(
        st.sampled_from(kinds), st.integers(0, 20), st.sampled_from(steps), st.integers(0, 99)
    )
    return st.lists(pick, min_size=30, max_size=300)


MIXED = _picks([0] * 12 + [1, 2, 3], [0, 0, 0, 1, 1, 2, 3, 10, 9])
"""Any line, stamps that may go back in time."""
SERVING = _picks([0] * 40 + [1], [0, 0, 0, 0, 1, 1, 2, 10])
"""Mostly plain lines in time order, and a few that need the full grammar."""


def _agree(data: bytes, size: int) -> None:
    with _bulk_from(1):
        bulk_events, bulk_snapshot = _read(data, size)
    with _bulk_from(LINE_BY_LINE):
        fast_events, fast_snapshot = _read(data, size)
    assert bulk_events == fast_events
    assert bulk_snapshot == fast_snapshot
    if UNPARSED.encode() not in data:
        assert (bulk_events, bulk_snapshot) == _read(data, size, keep_lines=True)


@settings(max_examples=40, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(MIXED, st.sampled_from([512, 4096, 65536]))
def test_bulk_reading_agrees_with_line_by_line_reading(picks: list[Pick], size: int) -> None:
    _agree(_log(picks), size)


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(SERVING, st.sampled_from([4096, 65536]))
def test_slow_lines_amid_serving_lines_agree(picks: list[Pick], size: int) -> None:
    _agree(_log(picks), size)


@settings(max_examples=30, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.lists(st.tuples(st.integers(0, 8), st.integers(0, 3), st.integers(0, 99)),
                min_size=40, max_size=300))  # fmt: skip
def test_plain_serving_lines_agree_whatever_the_chunks(picks: list[tuple[int, int, int]]) -> None:
    data = _log([(0, index, step, figure) for index, step, figure in picks])
    whole = _read(data, 65536)
    assert _read(data, 700) == whole
    with _bulk_from(LINE_BY_LINE):
        assert _read(data, 65536) == whole


def test_a_long_serving_log_keeps_its_thinned_events_and_counts() -> None:
    picks = [(0, i % len(PLAIN), 1 if i % 7 == 0 else 0, i % 100) for i in range(3000)]
    data = _log(picks)
    absorbed: list[int] = []
    real_absorb = bulk.BulkReader._absorb

    def counting(self: bulk.BulkReader, *args: Any) -> bool:
        done = real_absorb(self, *args)
        start, stop = args[2], args[3]
        absorbed.append(stop - start if done else 0)
        return done

    with mock.patch.object(bulk.BulkReader, "_absorb", counting):
        events, snapshot = _read(data, 65536)
    assert sum(absorbed) > 2000, "most serving lines took the bulk path"
    with _bulk_from(LINE_BY_LINE):
        assert (events, snapshot) == _read(data, 65536)
    assert snapshot.lines == data.count(b"\n") + READY.count("\n")
    assert snapshot.decode.lines > 1000
    assert snapshot.requests > 600


def _around(odd: int, figure: int = 5) -> bytes:
    """Forty plain lines, one of ``ODD``, forty more plain lines, in one second."""
    plain = [(0, i % len(PLAIN), 0, i) for i in range(40)]
    return _log([*plain, (1, odd, 0, figure), *plain])


def test_each_kind_of_slow_line_amid_a_batch_agrees() -> None:
    for odd in range(len(ODD)):
        _agree(_around(odd), 65536)


CHANGES = [
    "[2026-01-01 00:00:00 TP7] Prefill batch",
    "[2026-01-01 00:00:00] server_args=ServerArgs(model_path='/m')",
    "[2026-01-01 00:00:00 TP1] Scheduler hit an exception: Traceback (most recent call last):",
]


def test_a_new_rank_a_new_run_and_a_failure_change_the_plan() -> None:
    for change in CHANGES:
        _agree(_around(0).replace(b"\n", f"\n{change}\n".encode(), 1), 65536)


def test_a_relaunch_in_mid_batch_reports_the_new_runs_first_decode_line() -> None:
    plain: list[Pick] = [(0, 0, 0, 0)] * 24
    relaunch: list[Pick] = [(1, 9, 0, 0), (2, 0, 0, 0), (0, 8, 0, 0), (1, 10, 0, 0), (0, 1, 0, 0)]
    data = _log([*plain, *relaunch, (0, 0, 0, 0)])
    _agree(data, 4096)
    events, _ = _read(data, 4096)
    assert [event.line for event in events if isinstance(event, DecodeStats)][-2:] == [35, 36]
