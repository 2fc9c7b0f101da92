"""Lines that need cleaning are found in raw bytes, and a serving log read as bytes reads the
same as one decoded and cleaned first."""

from __future__ import annotations

from unittest import mock

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.engine.engine_helpers import SERVING_START, read_after
from tui.engine.logs import bulk_read as bulk
from tui.engine.logs import plain_bytes
from tui.engine.logs.line_scan import Scanner
from tui.engine.logs.plain_bytes import Span, odd_spans
from tui.engine.logs.sanitize import MAX_LINE_CHARS
from tui.engine.servers.common_patterns import _clock_seconds, _day_seconds, full_timestamp

PLAIN_BYTES = {9, *range(0x20, 0x7F)}


def _naive_spans(data: bytes) -> list[Span]:
    spans, start = [], 0
    for line in data.split(b"\n")[:-1]:
        stop = start + len(line) + 1
        if any(byte not in PLAIN_BYTES for byte in line):
            spans.append((start, stop))
        start = stop
    return spans


PIECES = st.sampled_from(
    [b"a", b" ", b"\t", b"\r", b"\x1b[31m", b"\x00", b"\x7f", b"\xc2\x85", b"\xff", b"\xe2\x96\x88",
     "é".encode(), b"[", b"]"]
)  # fmt: skip
LINES = st.lists(st.lists(PIECES, max_size=12).map(b"".join), min_size=1, max_size=40)


@given(LINES)
def test_odd_lines_are_the_lines_with_a_byte_outside_printable_ascii(lines: list[bytes]) -> None:
    data = b"".join(line + b"\n" for line in lines)
    with mock.patch.object(plain_bytes, "BYTES_PER_ODD_LINE", 1):
        assert odd_spans(data) == _naive_spans(data)


@given(st.lists(st.binary(max_size=30), min_size=1, max_size=40))
def test_any_bytes_give_the_odd_lines_even_with_many_distinct_odd_bytes(
    lines: list[bytes],
) -> None:
    data = b"".join(line.replace(b"\n", b"") + b"\n" for line in lines)
    with mock.patch.object(plain_bytes, "BYTES_PER_ODD_LINE", 1):
        assert odd_spans(data) == _naive_spans(data)


def test_common_odd_lines_or_a_long_line_send_the_whole_chunk_to_the_text_path() -> None:
    plain = b"[2026-01-01 00:00:00 TP0] Prefill batch, #new-seq: 1\n"
    assert odd_spans(plain * 100) == []
    assert odd_spans(plain * 100 + b"\xff\n") == [(len(plain) * 100, len(plain) * 100 + 2)]
    assert odd_spans((b"\x1b[0m" + plain) * 100) is None
    assert odd_spans(plain + b"x" * (MAX_LINE_CHARS + 1) + b"\n") is None


# ------------------------------------------------------------------ the engine reads the same

READY = SERVING_START
"""Ends with a decode line after the ready line: the server is serving."""

PLAIN = [
    b"[2026-01-01 00:00:1%d TP0] Decode batch, #running-req: 3, accept len: 2.%d, "
    b"gen throughput (token/s): 4%d.5, #queue-req: 0, ",
    b"[2026-01-01 00:00:1%d TP0] Prefill batch, #new-seq: 1, #new-token: 5%d%d",
    b'[2026-01-01 00:00:1%d] INFO:     127.0.0.1:4%d - "POST /generate HTTP/1.1" 20%d OK',
]
HOSTILE = [
    b"[2026-01-01 00:00:1%d TP0] Decode batch, \x1b[31m#running-req: %d\x1b[0m, accept len: 3.%d, ",
    b"[2026-01-01 00:00:1%d TP0] Prefill batch, #new-seq: %d\x00%d",
    b'[2026-01-01 00:00:1%d] INFO:     127.0.0.1:4%d - "GET /\xc2\x85 HTTP/1.1" 20%d OK',
    b"[2026-01-01 00:00:1%d] Using default chat sampling params \xff\xfe %d%d",
    b"\rFetching %d files: 50%%|\xe2\x96\x88 | %d/%d\r",
    b"[2026-01-01 00:00:1%d TP0] Decode batch, gen throughput (token/s): \xe2\x80\x8b%d.%d, ",
]


def _rows(picks: list[tuple[int, int]]) -> bytes:
    """Mostly plain lines, one in six or so hostile."""
    rows = [
        (HOSTILE[pick - 34] if pick >= 34 else PLAIN[pick % len(PLAIN)]) % (figure, figure, figure)
        for pick, figure in picks
    ]
    return b"".join(row + b"\n" for row in rows)


def _agree(data: bytes, size: int) -> int:
    """Read ``data`` as bytes where possible and as text only; both must agree. Returns how
    many lines took the bytes path."""
    taken: list[int] = []
    real = Scanner.scan_raw

    def counted(scanner: Scanner, data: bytes, start: int, odd: list[Span], now: float) -> None:
        taken.append(data.count(b"\n", start) - len(odd))
        real(scanner, data, start, odd, now)

    with mock.patch.object(bulk, "MIN_LINES", 1), mock.patch.object(Scanner, "scan_raw", counted):
        read_as_bytes = read_after(READY, data, size)
    assert read_as_bytes == read_after(READY, data, size, keep_lines=True)
    return sum(taken)


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 34 + len(HOSTILE) - 1), st.integers(0, 9)),
             min_size=40, max_size=200),
    st.sampled_from([700, 4096, 65536]),
)  # fmt: skip
def test_hostile_lines_amid_serving_lines_read_as_after_cleaning(
    picks: list[tuple[int, int]], size: int
) -> None:
    """Lines with escapes, controls, UTF-8, invalid UTF-8 or redraws amid plain serving lines:
    the bytes path gives exactly what the text path (used whenever a log view keeps the lines)
    gives."""
    _agree(_rows(picks), size)


def test_one_hostile_line_in_twelve_leaves_the_rest_to_the_bytes_path() -> None:
    picks = [(34 + index // 12 % len(HOSTILE) if index % 12 == 11 else index % 3, index % 10)
             for index in range(600)]  # fmt: skip
    assert _agree(_rows(picks), 65536) >= 500


def test_a_line_of_absurd_length_amid_serving_lines_reads_as_after_cleaning() -> None:
    plain = _rows([(index % 3, index % 10) for index in range(60)])
    long_line = b"[2026-01-01 00:00:15 TP0] Prefill batch, " + b"x" * (MAX_LINE_CHARS + 10)
    assert _agree(plain + long_line + b"\n" + plain, 65536) == 0, "the chunk took the text path"
    assert _agree(plain + long_line + b"\n" + plain, 4096) > 0


@given(st.text(st.sampled_from("0123456789-: .,x"), max_size=26))
def test_the_minute_cache_reads_timestamps_as_the_plain_formula(text: str) -> None:
    def plain(text: str) -> float | None:
        try:
            day = _day_seconds(int(text[0:4]), int(text[5:7]), int(text[8:10]), text[:10])
            return None if day is None else day + _clock_seconds(text[11:])
        except ValueError:
            return None

    stamp = "2026-01-01 00:00:" + text[17:]
    for candidate in (text, stamp, stamp):
        assert full_timestamp(candidate) == plain(candidate)
