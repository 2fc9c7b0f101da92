"""Line layouts, tqdm meters, uvicorn records, batch statistics and Prometheus text."""

from __future__ import annotations

import logging
import logging.config
import re
import time

import pytest

from tui.sim.bars import graph_draws, shard_draws
from tui.sim.logfmt import (
    format_interval,
    graph_bar,
    sglang_line,
    shard_bar,
    uvicorn_log_config,
    vllm_line,
)
from tui.sim.metrics import sglang_metrics, vllm_metrics
from tui.sim.sim_cli import parse
from tui.sim.stats import ServerStats
from tui.sim.tokens import GenRequest

NOW = time.mktime((2026, 11, 29, 14, 35, 1, 0, 0, -1)) + 0.123


def test_sglang_layout_has_no_level_and_tags_only_when_given() -> None:
    assert sglang_line(NOW, None, "server_args={}") == "[2026-11-29 14:35:01] server_args={}\n"
    assert sglang_line(NOW, "DP0 TP3 EP3", "x") == "[2026-11-29 14:35:01 DP0 TP3 EP3] x\n"
    assert sglang_line(NOW, "", "x", millis=True) == "[2026-11-29 14:35:01.123] x\n"


def test_sglang_traceback_continuation_lines_stay_bare() -> None:
    text = sglang_line(NOW, "TP1", "Scheduler hit an exception: Traceback\n  File x\nError: y\n")
    assert text.splitlines() == [
        "[2026-11-29 14:35:01 TP1] Scheduler hit an exception: Traceback",
        "  File x",
        "Error: y",
        "",
    ]


def test_vllm_layout_repeats_the_header_on_every_line() -> None:
    text = vllm_line(NOW, "Worker_TP0", 42, "ERROR", "core.py:1", "failed\nTraceback")
    assert text == (
        "(Worker_TP0 pid=42) ERROR 11-29 14:35:01 [core.py:1] failed\n"
        "(Worker_TP0 pid=42) ERROR 11-29 14:35:01 [core.py:1] Traceback\n"
    )


def test_tqdm_meters() -> None:
    assert format_interval(61) == "01:01"
    assert format_interval(3725) == "1:02:05"
    assert shard_bar("Loading safetensors checkpoint shards", 0, 20, 0.0) == (
        "Loading safetensors checkpoint shards:   0% Completed | 0/20 [00:00<?, ?it/s]"
    )
    assert shard_bar("Loading safetensors checkpoint shards", 9, 20, 9.9) == (
        "Loading safetensors checkpoint shards:  45% Completed | 9/20 [00:09<00:12,  1.10s/it]"
    )
    assert graph_bar("Capturing batches (bs=1 avail_mem=8.30 GB)", 36, 36, 21.0) == (
        "Capturing batches (bs=1 avail_mem=8.30 GB): 100%|██████████| 36/36 [00:21<00:00,  "
        "1.71it/s]"
    )
    assert "|█████▌    |" in graph_bar("x", 20, 36, 10.0)


def test_bars_redraw_with_carriage_returns_and_close_once() -> None:
    shards = shard_draws(10.0, 100.0, 4, 0.5)
    assert [round(loaded, 2) for _, _, loaded in shards] == [0, 0.25, 0.5, 0.75, 1, 1]
    assert [text.endswith("\n") for _, text, _ in shards] == [False] * 5 + [True]
    assert shards[0][0] > 10.0
    assert shards[-1][0] < 110.0
    graphs = graph_draws(0.0, 36.0, [1, 2, 4], 10.0, 9.0, 1.0)
    sizes = [re.findall(r"bs=(\d+)", text) for _, text, _ in graphs]
    assert sizes == [["4"], ["2"], ["1"], ["1"]]
    assert "avail_mem=9.00 GB" in graphs[-1][1]


def test_uvicorn_records_in_sglang_and_vllm_layouts(capsys: pytest.CaptureFixture[str]) -> None:
    for config, expected in (
        (
            uvicorn_log_config("info"),
            r'^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\] INFO:     127\.0\.0\.1:5 - "GET /health '
            r'HTTP/1\.1" 503 Service Unavailable$',
        ),
        (
            uvicorn_log_config("info", prefix="(APIServer pid=%(process)d) ", timestamps=False),
            r'^\(APIServer pid=\d+\) INFO:     127\.0\.0\.1:5 - "GET /health HTTP/1\.1" 503 '
            r"Service Unavailable$",
        ),
    ):
        logging.config.dictConfig(config)
        logging.getLogger("uvicorn.access").info(
            '%s - "%s %s HTTP/%s" %d', "127.0.0.1:5", "GET", "/health", "1.1", 503
        )
        assert re.match(expected, capsys.readouterr().err.strip())


def _stats(spec: bool) -> tuple[ServerStats, list[str], list[float]]:
    lines: list[str] = []
    clock = [100.0]
    stats = ServerStats(lambda: clock[0], lines.append, 10_000, spec, 4)
    return stats, lines, clock


def test_decode_line_every_forty_passes_from_what_was_generated() -> None:
    stats, lines, clock = _stats(spec=True)
    req = GenRequest("r", 10, 1000, 1)
    stats.queued(req)
    stats.admitted(req)
    assert lines[0].startswith("Prefill batch, #new-seq: 1, #new-token: 10, #cached-token: 0,")
    stats.first_token(req, 0.0)
    for step in range(40):
        clock[0] += 0.0125
        stats.stepped(req, 3 if step % 2 else 2)
    decode = lines[-1]
    assert decode.startswith("Decode batch, #running-req: 1, #token: 111, token usage: 0.01, ")
    assert "accept len: 2.50, accept rate: 0.50, cuda graph: True, " in decode
    assert decode.endswith("gen throughput (token/s): 202.00, #queue-req: 0")
    assert stats.avg_accept_length == pytest.approx(2.5)


def test_concurrent_requests_share_forward_passes() -> None:
    stats, lines, _ = _stats(spec=False)
    reqs = [GenRequest(str(i), 1, 100, i) for i in range(4)]
    for req in reqs:
        stats.queued(req)
        stats.admitted(req)
    for _ in range(40):
        for req in reqs:
            stats.stepped(req, 1)
    decode = [line for line in lines if line.startswith("Decode batch")]
    assert len(decode) == 1
    assert "accept len" not in decode[0]
    assert decode[0].startswith("Decode batch, #running-req: 4, ")


def test_prometheus_text_is_well_formed() -> None:
    stats, _, _ = _stats(spec=True)
    sample = re.compile(r'^[a-zA-Z_:][\w:]*(\{[a-z_]+="[^"]*"(,[a-z_]+="[^"]*")*\})? -?[\d.e+]+$')
    for text in (
        sglang_metrics(parse(["--speculative-algorithm", "EAGLE"]), stats),
        vllm_metrics(
            parse(
                [
                    "--engine",
                    "vllm",
                    "--speculative-config",
                    '{"method": "eagle", "num_speculative_tokens": 3}',
                ]
            ),
            stats,
        ),
    ):
        for line in text.splitlines():
            assert line.startswith("# ") or sample.match(line), line
