"""The official tools' summary tables, written here from their format strings.

Both tools print every row as ``"{:<40} {:<10}"`` (or ``{:<10.2f}``) inside a 50-wide banner of
``=`` and section rules of ``-``; the tables below are built the same way, trailing padding
included, for SGLang 0.5.2x, SGLang 0.5.2 (no peak rows, no TPOT block), SGLang 0.5.10 and vLLM.
"""

from __future__ import annotations

import math

import pytest

from tui.engine.bench.load_plan import LoadLevel
from tui.engine.bench.official_bench import (
    OfficialRun,
    OfficialSummaryError,
    official_argv,
    parse_summaries,
    parse_summary,
)
from tui.engine.bench.official_load import load_notes, read_back_problems

Row = tuple[str, object]


def _banner(title: str, fill: str) -> str:
    return f"{title:{fill}^50}"


def _table(sections: list[tuple[str, list[Row]]]) -> str:
    lines = [_banner(" Serving Benchmark Result ", "=")]
    for header, rows in sections:
        if header:
            lines.append(_banner(header, "-"))
        for label, value in rows:
            text = f"{value:<10.2f}" if isinstance(value, float) else f"{value!s:<10}"
            lines.append(f"{label:<40} {text}")
    lines.append("=" * 50)
    return "\n".join(lines) + "\n"


def _stats(metric: str, stats: tuple[str, ...], base: float) -> list[Row]:
    return [(f"{stat} {metric} (ms):", base + i) for i, stat in enumerate(stats)]


SGLANG_HEAD: list[Row] = [
    ("Backend:", "sglang"),
    ("Traffic request rate:", "inf"),
    ("Max request concurrency:", 4),
    ("Successful requests:", 64),
    ("Benchmark duration (s):", 21.5),
    ("Total input tokens:", 16384),
    ("Total input text tokens:", 16384),
    ("Total generated tokens:", 16384),
    ("Total generated tokens (retokenized):", 16380),
    ("Request throughput (req/s):", 2.98),
    ("Input token throughput (tok/s):", 762.05),
    ("Output token throughput (tok/s):", 762.05),
    ("Peak output token throughput (tok/s):", 801.0),
    ("Peak concurrent requests:", 4),
    ("Total token throughput (tok/s):", 1524.1),
    ("Concurrency:", 3.99),
    ("Accept length:", 2.48),
]
FIVE = ("Mean", "Median", "P90", "P95", "P99")

SGLANG_0523 = _table(
    [
        ("", SGLANG_HEAD),
        ("End-to-End Latency", _stats("E2E Latency", FIVE, 5000.0)),
        ("Time to First Token", _stats("TTFT", FIVE, 150.0)),
        ("Time per Output Token (excl. 1st token)", _stats("TPOT", FIVE, 19.0)),
        ("Inter-Token Latency", _stats("ITL", (*FIVE, "Max"), 40.0)),
    ]
)

SGLANG_052 = _table(
    [
        ("", [row for row in SGLANG_HEAD if not row[0].startswith("Peak")]),
        ("End-to-End Latency", _stats("E2E Latency", ("Mean", "Median"), 5000.0)),
        ("Time to First Token", _stats("TTFT", ("Mean", "Median", "P99"), 150.0)),
        ("Inter-Token Latency", _stats("ITL", ("Mean", "Median", "P95", "P99"), 40.0)),
    ]
)

SGLANG_0510 = _table(
    [
        ("", SGLANG_HEAD[:-1]),
        ("End-to-End Latency", _stats("E2E Latency", ("Mean", "Median", "P90", "P99"), 5000.0)),
        ("Time to First Token", _stats("TTFT", ("Mean", "Median", "P99"), 150.0)),
        ("Time per Output Token (excl. 1st token)", _stats("TPOT", ("Mean", "Median", "P99"), 19)),
    ]
)

VLLM = _table(
    [
        (
            "",
            [
                ("Successful requests:", 64),
                ("Failed requests:", 0),
                ("Maximum request concurrency:", 4),
                ("Benchmark duration (s):", 20.75),
                ("Total input tokens:", 16384),
                ("Total generated tokens:", 16384),
                ("Request throughput (req/s):", 3.08),
                ("Output token throughput (tok/s):", 789.6),
                ("Peak output token throughput (tok/s):", 830.0),
                ("Peak concurrent requests:", 4.0),
                ("Total Token throughput (tok/s):", 1579.2),
            ],
        ),
        ("Time to First Token", _stats("TTFT", ("Mean", "Median", "P99"), 120.0)),
        ("Time per Output Token (excl. 1st token)", _stats("TPOT", ("Mean", "Median", "P99"), 18)),
        ("Inter-token Latency", _stats("ITL", ("Mean", "Median", "P99"), 45.0)),
        ("End-to-end Latency", _stats("E2EL", ("Mean", "Median", "P99"), 4800.0)),
        (
            "Speculative Decoding",
            [
                ("Acceptance rate (%):", 61.5),
                ("Acceptance length:", 2.85),
                ("Drafts:", 5800),
                ("Draft tokens:", 17400),
                ("Accepted tokens:", 10701),
            ],
        ),
    ]
)


def test_sglang_current_summary_reads_every_row() -> None:
    summary = parse_summary("Server ready in 0.4s.\n" + SGLANG_0523)
    fields = summary.fields
    assert summary.tool == "sglang"
    assert summary.complete
    assert summary.problems == ()
    assert fields["completed"] == 64
    assert fields["max_concurrency"] == 4
    assert fields["duration"] == pytest.approx(21.5)
    assert fields["total_output_tokens"] == 16384
    assert fields["total_output_tokens_retokenized"] == 16380
    assert fields["output_throughput"] == pytest.approx(762.05)
    assert fields["max_output_tokens_per_s"] == pytest.approx(801.0)
    assert fields["mean_ttft_ms"] == pytest.approx(150.0)
    assert fields["median_ttft_ms"] == pytest.approx(151.0)
    assert fields["p95_tpot_ms"] == pytest.approx(22.0)
    assert fields["max_itl_ms"] == pytest.approx(45.0)
    assert fields["p90_e2el_ms"] == pytest.approx(5002.0)
    assert fields["request_rate"] == float("inf")
    # SGLang's accept length is the server's lifetime average, not the run's.
    assert fields["server_avg_spec_accept_length_after"] == pytest.approx(2.48)
    assert "accept_length" not in fields


def test_older_sglang_versions_miss_rows_without_error() -> None:
    old = parse_summary(SGLANG_052)
    assert old.problems == ()
    assert "max_output_tokens_per_s" not in old.fields
    assert "median_tpot_ms" not in old.fields
    assert old.fields["p95_itl_ms"] == pytest.approx(42.0)
    assert "p90_ttft_ms" not in old.fields
    middle = parse_summary(SGLANG_0510)
    assert "server_avg_spec_accept_length_after" not in middle.fields
    assert "p95_e2el_ms" not in middle.fields
    assert middle.fields["p99_tpot_ms"] == pytest.approx(21.0)
    assert middle.tool == "sglang"


def test_vllm_summary_with_speculative_section() -> None:
    summary = parse_summary(VLLM)
    fields = summary.fields
    assert summary.tool == "vllm"
    assert fields["failed"] == 0
    assert fields["max_concurrency"] == 4
    assert fields["total_token_throughput"] == pytest.approx(1579.2)
    assert fields["median_e2el_ms"] == pytest.approx(4801.0)
    assert fields["spec_decode_acceptance_length"] == pytest.approx(2.85)
    assert fields["spec_decode_accepted_tokens"] == 10701
    assert summary.unknown_rows == ()


def test_unset_concurrency_and_unknown_rows() -> None:
    text = SGLANG_0523.replace("Max request concurrency:                 4 ",
                               "Max request concurrency:                 not set")  # fmt: skip
    text = text.replace("Concurrency:", "Something new:")
    summary = parse_summary(text)
    assert summary.fields["max_concurrency"] is None
    assert summary.unknown_rows == ("something new",)


def test_bad_values_are_reported_by_line_and_kept_out() -> None:
    text = SGLANG_0523.replace("Successful requests:                     64",
                               "Successful requests:                     lots")  # fmt: skip
    summary = parse_summary(text)
    assert "completed" not in summary.fields
    assert summary.fields["duration"] == pytest.approx(21.5)
    (problem,) = summary.problems
    assert problem.startswith("line 5: 'Successful requests' is not a valid value")


def test_hostile_output_is_sanitized_before_parsing() -> None:
    hostile = "\x1b]0;owned\x07\x1b[31m" + SGLANG_0523.replace("sglang", "sglang\x1b[2J", 1)
    summary = parse_summary(hostile)
    assert summary.fields["backend"] == "sglang"
    assert all("\x1b" not in str(value) for value in summary.fields.values())


def test_a_cut_off_table_keeps_what_arrived() -> None:
    cut = SGLANG_0523[: SGLANG_0523.index("Time per Output")]
    summary = parse_summary(cut)
    assert not summary.complete
    assert summary.fields["median_ttft_ms"] == pytest.approx(151.0)


def test_several_tables_and_none() -> None:
    both = parse_summaries("warm-up\n" + SGLANG_052 + "next level\n" + VLLM)
    assert [s.tool for s in both] == ["sglang", "vllm"]
    assert both[1].first_line > both[0].first_line
    with pytest.raises(OfficialSummaryError, match="Serving Benchmark Result"):
        parse_summary("Traceback (most recent call last):\nConnectionRefusedError\n")


def test_command_lines_for_both_tools() -> None:
    run = OfficialRun("sglang", 30000, 4, 64, 256, 128, seed=3, model="m/x y")
    argv = official_argv(run)
    assert argv[:3] == ["python3", "-m", "sglang.bench_serving"]
    assert argv[argv.index("--max-concurrency") + 1] == "4"
    assert argv[argv.index("--model") + 1] == "m/x y"
    assert "--random-range-ratio" in argv
    assert "--disable-ignore-eos" not in argv
    vllm = official_argv(OfficialRun("vllm", 8000, 1, 8, 32, 16, ignore_eos=False))
    assert vllm[:3] == ["vllm", "bench", "serve"]
    assert "--ignore-eos" not in vllm
    assert "--model" not in vllm


def _after(argv: list[str], flag: str) -> str:
    return argv[argv.index(flag) + 1]


def test_open_loop_levels_for_both_tools() -> None:
    """``--request-rate`` for both, ``--burstiness`` only for vLLM (SGLang's parser has none),
    ``--max-concurrency`` only when the level caps it."""
    capped = OfficialRun("vllm", 8000, 16, 80, 32, 16, request_rate=8.0, burstiness=0.5)
    vllm = official_argv(capped)
    assert (_after(vllm, "--request-rate"), _after(vllm, "--burstiness")) == ("8.0", "0.5")
    assert _after(vllm, "--max-concurrency") == "16"
    sglang = official_argv(OfficialRun("sglang", 30000, 0, 80, 32, 16, request_rate=2.5))
    assert _after(sglang, "--request-rate") == "2.5"
    assert "--burstiness" not in sglang
    assert "--max-concurrency" not in sglang
    every = official_argv(OfficialRun("sglang", 30000, 4, 20, 32, 16, request_rate=math.inf))
    assert (_after(every, "--request-rate"), _after(every, "--max-concurrency")) == ("inf", "4")
    closed = official_argv(OfficialRun("vllm", 8000, 4, 20, 32, 16))
    assert "--request-rate" not in closed
    assert "--burstiness" not in closed
    assert _after(closed, "--max-concurrency") == "4"


def test_what_a_tool_reports_of_the_load_is_checked() -> None:
    level = LoadLevel(16, 8.0, 0.5)
    same = {"request_rate": 8.0, "burstiness": 0.5, "max_concurrency": 16}
    assert read_back_problems(same, level) == ()
    assert read_back_problems({}, level) == ()
    assert read_back_problems({"request_rate": "inf", "max_concurrency": 4}, LoadLevel(4)) == ()
    other = {"request_rate": 8.0, "burstiness": 1.0, "max_concurrency": 8}
    assert read_back_problems(other, level) == (
        "the tool reports max concurrency 8, asked 16",
        "the tool reports burstiness 1, asked 0.5",
    )
    assert read_back_problems({"max_concurrency": 64}, LoadLevel(0, math.inf)) == (
        "the tool reports max concurrency 64, asked none",
    )
    assert load_notes(LoadLevel(0, 2.0, 0.5), "sglang", "sglang.bench_serving") != ()
    assert load_notes(LoadLevel(0, 2.0, 0.5), "vllm", "vllm bench serve") == ()
    assert load_notes(LoadLevel(0, math.inf, 0.5), "sglang", "sglang.bench_serving") == ()
