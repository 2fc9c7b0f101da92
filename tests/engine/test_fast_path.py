"""The engine's shortcuts agree with the plain way: line shapes, redraw finding, long lines."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.engine.engine_helpers import SERVING_START, fixed_clock
from tui.engine.logs.line_scan import Scanner
from tui.engine.logs.log_engine import LogEngine
from tui.engine.logs.log_line import LogLine
from tui.engine.logs.sanitize import cap_line, split_lines, suspect_chars
from tui.engine.servers.sglang.sglang_shapes import (
    ACCESS,
    DECODE,
    OTHER,
    PREFILL,
    SLOW,
    fraction_length,
    shape_of,
    valid_stamp,
)
from tui.engine.startup.log_events import Event
from tui.engine.startup.snapshot import Snapshot

READY = SERVING_START

# Lines a serving SGLang server prints, and lines that only look like them.
TRICKY = [
    "[2026-01-01 00:00:{s:02d} TP0] Decode batch, #running-req: 3, accept len: 2.{s:02d}, "
    "gen throughput (token/s): 4{s}.5, #queue-req: 0, ",
    "[2026-01-01 00:00:{s:02d} DP1 TP1 EP1] Decode batch, #running-req: 1, gen throughput "
    "(token/s): 1{s}.0, #queue-req: 0, ",
    "[2026-01-01 00:00:{s:02d}.5 TP0] Prefill batch, #new-seq: 1, #new-token: 5",
    "[2026-01-01 00:00:{s:02d}.123456 DP1 TP1 EP1] Decode batch, gen throughput (token/s): 7.5, ",
    "[2026-01-01 00:00:{s:02d}.1234567 TP0] Prefill batch, #new-seq: 1",
    "[2026-01-01 00:00:{s:02d} TP0] Decode out of memory happened. #retracted_reqs: 1",
    "[2026-01-01 00:00:{s:02d} TP0] Prefill batch. #new-seq: 3, #new-token: 8190, #running-req: 2, "
    "#queue-req: 5",
    "[2026-01-01 00:00:{s:02d} TP0] Decoded {s} tokens",
    "[2026-01-01 00:00:{s:02d} TP0] foo] Decode batch, gen throughput (token/s): 5.0",
    "[2026-01-01 00:00:{s:02d} TP0] Using a] b",
    "[2026-01-01 00:00:{s:02d} TP0] Using default chat sampling params",
    "[2026-01-01 00:00:{s:02d} TP0] SystemExit: 1",
    "[2026-13-45 00:00:{s:02d} TP0] Decode batch, gen throughput (token/s): 9.0, ",
    "[xxxx-01-01 00:00:{s:02d} TP0] Prefill batch, #new-seq: 1",
    "[2026-01-01 00:00:{s:02d} TP7] Prefill batch, #new-seq: 1",
    "[2026-01-01 00:00:{s:02d} KV Cache] Prefill batch",
    '[2026-01-01 00:00:{s:02d}] INFO:     127.0.0.1:5 - "POST /generate HTTP/1.1" 200 OK',
    '[2026-01-01 00:00:{s:02d}] INFO:     127.0.0.1:5 - "GET /health HTTP/1.1" 503 Unavailable',
    "[2026-01-01 00:00:{s:02d}] INFO:     not an access line",
    "[2026-01-01 00:00:{s:02d} TP1] Scheduler hit an exception: Traceback (most recent call last):",
    "RuntimeError: boom {s}",
    "[2026-01-01 00:00:{s:02d}] server_args=ServerArgs(model_path='/m', tp_size=2)",
    "plain noise {s}",
]


def _read(
    data: bytes, keep_lines: bool, slow: bool = False
) -> tuple[list[Event], Snapshot, list[LogLine]]:
    """Events, snapshot and kept lines; ``slow`` takes every line through the full grammar."""
    engine = LogEngine(clock=fixed_clock, keep_lines=keep_lines)
    if slow:
        scanner: Scanner = engine._scanner

        def each(lines: list[str], now: float, start: int = 0, stop: int | None = None) -> None:
            scanner._scan_each(lines[start:stop], {}, now)

        scanner.fast_allowed = lambda path=None: False  # type: ignore[method-assign]
        scanner._fast_path = lambda: each  # type: ignore[method-assign]
    fed, ended = engine.feed(data), engine.finish()
    return [*fed.events, *ended.events], engine.snapshot, [*fed.lines, *ended.lines]


def _assert_paths_agree(head: str, lines: list[str], picks: list[tuple[int, int]]) -> None:
    """The log ``head`` then the picked lines (index, second) read the same fast and slow,
    with and without a log view keeping the lines (which keep the same ranks and flags)."""
    body = "".join(lines[index].format(s=second) + "\n" for index, second in picks)
    data = (head + body).encode()
    fast_events, fast_snapshot, _ = _read(data, keep_lines=False)
    kept_events, kept_snapshot, kept = _read(data, keep_lines=True)
    slow_events, slow_snapshot, slow_kept = _read(data, keep_lines=True, slow=True)
    assert fast_events == slow_events == kept_events
    assert fast_snapshot == slow_snapshot == kept_snapshot
    assert kept == slow_kept


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.lists(st.tuples(st.integers(0, len(TRICKY) - 1), st.integers(0, 59)), max_size=60))
def test_shapes_agree_with_the_full_grammar(picks: list[tuple[int, int]]) -> None:
    _assert_paths_agree(READY, TRICKY, picks)


def test_shapes_of_the_common_lines() -> None:
    decode = shape_of("0 TP0] Decode batch, #running-req: 1"[:21])
    assert (decode.tag, decode.kind, decode.at, decode.check) == ("TP0", DECODE, 26, False)
    assert shape_of("0 TP0] Prefill batch, #new"[:21]).kind == PREFILL
    assert shape_of('0] INFO:     127.0.0.1:5 - "GET'[:21]).kind == ACCESS
    assert shape_of("0 TP0] Decode out of memory"[:21]).kind == OTHER
    assert shape_of("x TP0] Decode batch, #running"[:21]).kind == SLOW


def test_a_long_tag_asks_each_line_to_confirm() -> None:
    shape = shape_of("0 DP1 TP1 EP1] Decode batch"[:21])
    assert (shape.tag, shape.kind, shape.check) == ("DP1 TP1 EP1", DECODE, True)
    assert shape.confirm("[2026-01-01 00:00:00 DP1 TP1 EP1] Decode batch, #running-req: 1")
    assert not shape.confirm("[2026-01-01 00:00:00 DP1 TP1 EP1] Decoder ready")


def test_a_fraction_of_a_second_moves_the_message_start() -> None:
    line = "[2026-01-01 00:00:00.123 TP0] Decode batch, #running-req: 1"
    assert fraction_length(line) == 4
    assert fraction_length("[2026-01-01 00:00:00 TP0] Decode batch") == 0
    shape = shape_of(line[19:20] + line[24:44])
    assert (shape.tag, shape.kind, shape.at + 4) == ("TP0", DECODE, line.index("Decode"))


def test_stamps_must_be_real_dates() -> None:
    assert valid_stamp("[2026-01-01 00:00:1")
    assert not valid_stamp("[2026-13-01 00:00:1")
    assert not valid_stamp("[2026-01-01T00:00:1")


HOSTILE = st.text(
    st.sampled_from(["a", " ", "\n", "\r", "\x1b", "[", "\x00", "\x7f", "\x85", "\t", "é", "█"]),
    max_size=300,
)


@given(HOSTILE)
def test_finding_suspect_lines_by_character_agrees_with_the_regex(text: str) -> None:
    chars = suspect_chars(text.encode())
    assert split_lines(text, suspect=chars != "", chars=chars) == split_lines(text)


@given(st.text(st.sampled_from(["a", "\n", "é"]), max_size=300), st.integers(1, 40))
def test_long_lines_are_capped_whatever_the_limit(text: str, limit: int) -> None:
    lines, _ = split_lines(text, limit=limit, suspect=False)
    assert lines == [cap_line(line, limit) for line in text.split("\n")]


VLLM_READY = (
    "(APIServer pid=1) INFO 03-19 06:30:00 [api_server.py:1] vLLM API server version 0.11.0\n"
    "(APIServer pid=1) INFO 03-19 06:30:01 [utils.py:1] non-default args: {'model': 'm', "
    "'tensor_parallel_size': 2}\n"
    "(EngineCore_DP0 pid=2) INFO 03-19 06:30:09 [core.py:1] init engine (profile, create kv "
    "cache, warmup model) took 20.5 seconds\n"
    "(APIServer pid=1) INFO:     Application startup complete.\n"
    '(APIServer pid=1) INFO:     127.0.0.1:40000 - "POST /v1/completions HTTP/1.1" 200 OK\n'
)

# Lines a serving vLLM server prints, and lines that only look like them.
VLLM_TRICKY = [
    '(APIServer pid=1) INFO:     127.0.0.1:4{s:04d} - "POST /v1/completions HTTP/1.1" 200 OK',
    '(APIServer pid=1) INFO:     10.0.0.{s}:5 - "GET /health HTTP/1.1" 200 OK',
    '(APIServer pid=1) INFO:     127.0.0.1:5 - "POST /v1/chat/completions HTTP/1.1" 400 Bad',
    '(APIServer pid=1) INFO:     127.0.0.1:5 - "POST /v1/completions HTTP/1.1" 500 Internal',
    '(APIServer pid=1) INFO:     127.0.0.1:5 - "GET /v1/failed/{s} HTTP/1.1" 404 Not Found',
    '(APIServer pid=1) INFO:     [::1]:5 - "GET /metrics HTTP/1.1" 200 OK',
    '(APIServer pid=1) INFO:     127.0.0.1:5 - "GET /x HTTP/1.1" 200 OK Traceback (most',
    "(APIServer pid=1) INFO:     127.0.0.1:5 - not an access line",
    'INFO:     127.0.0.1:5 - "GET /x HTTP/1.1" 200 OK [2026-01-01 00:00:{s:02d} TP0] Load weight '
    "begin. avail mem=9.0 GB",
    '(APIServer pid=1) INFO:     127.0.0.1:5 - "GET /x HTTP/1.1" 200 OK 50%|##| 1/2 [00:01]',
    '(APIServer pid=9) INFO:     127.0.0.1:5 - "POST /v1/completions HTTP/1.1" 200 OK',
    '(APIServer pid=1, ip=10.0.0.2) INFO:     1.2.3.4:5 - "GET /health HTTP/1.1" 200 OK',
    'INFO:     127.0.0.1:4{s:04d} - "POST /v1/completions HTTP/1.1" 200 OK',
    'vllm-1  | INFO:     127.0.0.1:5 - "POST /v1/completions HTTP/1.1" 200 OK',
    "(APIServer pid=1) INFO 03-19 06:{s:02d}:10 [loggers.py:1] Engine 000: Avg prompt "
    "throughput: 10.0 tokens/s, Avg generation throughput: {s}.5 tokens/s, Running: 3 reqs, "
    "Waiting: 0 reqs, GPU KV cache usage: 1.0%, Prefix cache hit rate: 0.0%",
    "INFO 03-19 06:{s:02d}:20 metrics.py:1] Avg prompt throughput: 0.0 tokens/s, Avg "
    "generation throughput: {s}.0 tokens/s, Running: 1 reqs, Swapped: 0 reqs, Pending: 0 reqs",
    "(Worker pid=7) INFO 03-19 06:{s:02d}:30 [parallel_state.py:1] world_size=2 rank=1 "
    "local_rank=1 distributed_init_method=tcp://x backend=nccl",
    '(Worker_TP1 pid=7) INFO:     127.0.0.1:5 - "POST /v1/completions HTTP/1.1" 200 OK',
    '(Worker pid=7) INFO:     127.0.0.1:5 - "POST /v1/completions HTTP/1.1" 200 OK',
    "Traceback (most recent call last):",
    '  File "/venv/lib/python3.12/site-packages/vllm/v1/engine/core.py", line {s}, in run',
    "RuntimeError: boom {s}",
    "(EngineCore_DP0 pid=2) ERROR 03-19 06:{s:02d}:40 [core.py:1] EngineCore encountered a "
    "fatal error.",
    "(APIServer pid=1) INFO 03-19 06:{s:02d}:50 [launcher.py:1] Shutting down FastAPI HTTP server.",
    "(APIServer pid=1) INFO 03-19 06:{s:02d}:55 [api_server.py:1] vLLM API server version 0.11.0",
    "(APIServer pid=1) INFO:     Application startup complete.",
]


@settings(max_examples=80, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.lists(st.tuples(st.integers(0, len(VLLM_TRICKY) - 1), st.integers(0, 59)), max_size=60))
def test_the_vllm_fast_path_agrees_with_the_full_grammar(picks: list[tuple[int, int]]) -> None:
    _assert_paths_agree(VLLM_READY, VLLM_TRICKY, picks)


def test_a_busy_vllm_log_reads_its_access_lines_without_the_grammar(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    read_slowly: list[str] = []
    full_path = Scanner.line

    def counted(
        self: Scanner, line: str, number: int, now: float, redrawn: bool = False
    ) -> str | None:
        read_slowly.append(line)
        return full_path(self, line, number, now, redrawn)

    monkeypatch.setattr(Scanner, "line", counted)
    access = '(APIServer pid=1) INFO:     127.0.0.1:{port} - "POST /v1/completions HTTP/1.1" 200 OK'
    engine = LogEngine(clock=fixed_clock)
    engine.feed(VLLM_READY.encode())
    read_slowly.clear()
    engine.feed("".join(access.format(port=port) + "\n" for port in range(500)).encode())
    assert read_slowly == []
    assert engine.snapshot.requests == 501
