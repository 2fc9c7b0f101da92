"""The ``nvidia-smi`` CSV readers: exact values from a real H200, every failure mode, any bytes."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tui.engine.gpu.gpu_csv import (
    GpuSample,
    NoTelemetryKind,
    QueryGpuStream,
    classify_failure,
    header_columns,
    parse_compute_apps,
    parse_query_gpu,
    query_columns,
)

LIVE = query_columns("index,uuid,name,memory.used,memory.total,utilization.gpu,power.draw")
UUID = "GPU-e631629d-2256-277a-404b-d2ae4d3da19f"


@pytest.fixture
def h200(shared: Path) -> Path:
    return shared / "fixtures" / "gpu-h200"


def test_query_fixture_reads_every_row_with_units_and_header(h200: Path) -> None:
    batch = parse_query_gpu((h200 / "query-gpu-lms250.csv").read_bytes())
    assert batch.problems == ()
    assert batch.failure is None
    assert len(batch.samples) == 132
    first = batch.samples[0]
    assert first.index == 0
    assert first.uuid == UUID
    assert first.name == "NVIDIA H200"
    assert first.timestamp == pytest.approx(1795963098.140)
    assert first.memory_used_mib == 0.0
    assert first.memory_total_mib == 143771.0
    assert first.util_pct == 0.0
    assert first.mem_util_pct == 0.0
    assert first.temperature_c == 35.0
    assert first.power_w == pytest.approx(104.82)
    assert first.sm_clock_mhz == 375.0
    assert first.missing == ()


def test_query_fixture_peak_row_is_exact(h200: Path) -> None:
    samples = parse_query_gpu((h200 / "query-gpu-lms250.csv").read_bytes()).samples
    peak = max(samples, key=lambda sample: sample.memory_used_mib or 0.0)
    assert peak.memory_used_mib == 103411.0
    busiest = max(samples, key=lambda sample: sample.power_w or 0.0)
    assert busiest == samples[81]  # line 83: the header, then 81 rows before it
    assert busiest.timestamp == pytest.approx(1795963118.482)
    assert (busiest.util_pct, busiest.mem_util_pct) == (100.0, 21.0)
    assert (busiest.temperature_c, busiest.power_w, busiest.sm_clock_mhz) == (56.0, 698.29, 1500.0)


def test_header_names_drop_units_and_keep_renamed_columns() -> None:
    line = "timestamp, memory.used [MiB], clocks.current.sm [MHz], temperature.gpu"
    assert header_columns(line) == (
        "timestamp",
        "memory.used",
        "clocks.current.sm",
        "temperature.gpu",
    )
    assert header_columns("0, GPU-x, NVIDIA H200") is None


def test_noheader_nounits_rows_read_with_given_columns() -> None:
    text = f"0, {UUID}, NVIDIA H200, 41478, 143771, 87, 690.42\n"
    (sample,) = parse_query_gpu(text, LIVE).samples
    assert (sample.memory_used_mib, sample.util_pct, sample.power_w) == (41478.0, 87.0, 690.42)


def test_unavailable_fields_become_none_and_are_named() -> None:
    text = "3, GPU-x, NVIDIA H200, [N/A], 143771, [Not Supported], [Unknown Error]\n"
    (sample,) = parse_query_gpu(text, LIVE).samples
    assert sample.memory_used_mib is None
    assert sample.util_pct is None
    assert sample.power_w is None
    assert sample.missing == (
        ("memory.used", "N/A"),
        ("utilization.gpu", "Not Supported"),
        ("power.draw", "Unknown Error"),
    )


def test_stream_carries_partial_lines_across_chunks(h200: Path) -> None:
    data = (h200 / "query-gpu-lms250.csv").read_bytes()
    stream = QueryGpuStream()
    samples: list[GpuSample] = []
    for start in range(0, len(data), 7):
        samples.extend(stream.feed(data[start : start + 7]).samples)
    samples.extend(stream.close().samples)
    assert samples == list(parse_query_gpu(data).samples)


def test_stream_splits_multibyte_characters_safely() -> None:
    row = "0, GPU-x, NVIDIA Ä100, 1, 2, 3, 4\n".encode()
    cut = row.index("Ä".encode()) + 1
    stream = QueryGpuStream(LIVE)
    assert stream.feed(row[:cut]).samples == ()
    (sample,) = stream.feed(row[cut:]).samples
    assert sample.name == "NVIDIA Ä100"


def test_escape_sequences_in_names_are_removed() -> None:
    text = "0, GPU-x, \x1b]0;PWNED\x07NVIDIA\x1b[31m H200, 1, 2, 3, 4\n"
    (sample,) = parse_query_gpu(text, LIVE).samples
    assert sample.name is not None
    assert "\x1b" not in sample.name
    assert "\x07" not in sample.name


def test_short_row_is_a_problem_naming_the_line() -> None:
    batch = parse_query_gpu("0, GPU-x, NVIDIA H200, 1, 2, 3, 4\n0, GPU-x\n", LIVE)
    assert len(batch.samples) == 1
    (problem,) = batch.problems
    assert problem.line == 2
    assert str(problem) == "line 2: expected 7 values, found 2"


def test_bad_index_is_a_problem_naming_the_column() -> None:
    (problem,) = parse_query_gpu("x, GPU-x, H200, 1, 2, 3, 4\n", LIVE).problems
    assert (problem.line, problem.column) == (1, "index")


def test_rows_before_any_header_are_reported() -> None:
    (problem,) = parse_query_gpu("0, 1, 2\n").problems
    assert "header" in problem.reason


def test_overlong_line_is_dropped_and_reported() -> None:
    stream = QueryGpuStream(LIVE)
    batch = stream.feed("9" * 10_000)
    assert batch.problems
    assert stream.feed("\n0, GPU-x, H200, 1, 2, 3, 4\n").samples[0].index == 0


DRIVER = (
    "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
    "Make sure that the latest NVIDIA driver is installed and running."
)


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        (DRIVER, NoTelemetryKind.DRIVER),
        ("Failed to initialize NVML: Driver/library version mismatch", NoTelemetryKind.DRIVER),
        ("No devices were found", NoTelemetryKind.NO_DEVICES),
        ("bash: line 1: nvidia-smi: command not found", NoTelemetryKind.NOT_INSTALLED),
        ("sh: 1: nvidia-smi: not found", NoTelemetryKind.NOT_INSTALLED),
        ('Field "power.draw.instant" is not a valid field to query.', NoTelemetryKind.UNSUPPORTED),
        (
            "Unable to determine the device handle for GPU0000:00:06.0: Unknown Error",
            NoTelemetryKind.GPU_LOST,
        ),
        ("Insufficient Permissions", NoTelemetryKind.PERMISSION),
    ],
)
def test_error_messages_degrade_to_no_telemetry(text: str, kind: NoTelemetryKind) -> None:
    batch = parse_query_gpu(text + "\n", LIVE)
    assert batch.samples == ()
    assert batch.failure is not None
    assert batch.failure.kind is kind
    assert batch.failure.reason


def test_no_telemetry_reason_reads_as_a_sentence() -> None:
    failure = classify_failure(DRIVER)
    assert failure is not None
    assert failure.reason.startswith("nvidia-smi cannot talk to the NVIDIA driver: NVIDIA-SMI")


def test_compute_apps_fixture_during_and_after(h200: Path) -> None:
    during = parse_compute_apps((h200 / "compute-apps.csv").read_text())
    assert during.problems == ()
    (app,) = during.apps
    assert (app.pid, app.process_name, app.used_memory_mib) == (419, "python3", 41478.0)
    after = parse_compute_apps((h200 / "compute-apps-after.csv").read_text())
    assert after.apps == ()
    assert after.problems == ()
    assert after.failure is None


def test_compute_apps_noheader_with_uuid_and_commas_in_the_name() -> None:
    columns = query_columns("gpu_uuid,pid,process_name,used_memory")
    text = f"{UUID}, 4242, python3 -m sglang, tp=8, 70123\n"
    (app,) = parse_compute_apps(text, columns).apps
    assert app.gpu_uuid == UUID
    assert app.process_name == "python3 -m sglang, tp=8"
    assert app.used_memory_mib == 70123.0


def test_empty_noheader_process_list_is_empty() -> None:
    assert parse_compute_apps("", query_columns("pid,process_name,used_memory")).apps == ()


def test_mig_process_memory_not_available() -> None:
    text = "pid, process_name, used_gpu_memory [MiB]\n77, python3, [N/A]\n"
    (app,) = parse_compute_apps(text).apps
    assert app.used_memory_mib is None


ROW_PIECES = st.sampled_from(
    [
        "0",
        "7",
        "-1",
        "1e9",
        "[N/A]",
        "[Not Supported]",
        "[Unknown Error]",
        "41478 MiB",
        "104.82 W",
        "0 %",
        "NVIDIA H200",
        "GPU-x",
        "",
        " ",
        "\x1b[31m",
        "9" * 400,
        "nan",
        "MiB",
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(ROW_PIECES, max_size=9).map(", ".join), max_size=6))
def test_malformed_rows_never_raise(rows: list[str]) -> None:
    stream = QueryGpuStream(LIVE)
    for row in rows:
        stream.feed(row + "\n")
    stream.close()
    parse_compute_apps("\n".join(rows))


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=600), st.integers(min_value=1, max_value=64))
def test_arbitrary_bytes_in_any_chunking_never_raise(data: bytes, size: int) -> None:
    stream = QueryGpuStream()
    for start in range(0, len(data), size):
        batch = stream.feed(data[start : start + size])
        for sample in batch.samples:
            assert sample.index >= 0
    stream.close()
