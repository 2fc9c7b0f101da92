"""A log that belongs to more than the server: a wrapper's uvicorn, a test harness, another
process's bind error. Only the engine's own lines decide stages and readiness; another
process's failure names the start's failure only when the engine's own lines agree. uvicorn's
lines are its format strings (``uvicorn/server.py``: ``Uvicorn running on %s://%s:%d``,
``uvicorn/lifespan/on.py``: ``Application startup complete.``, ``uvicorn/server.py``: ``[Errno
98] error while attempting to bind on address ('0.0.0.0', 8080): address already in use``).

Real logs: the shared corpus's 013 is a CI harness's run around an SGLang node (``Running test
case ...``, ``Ran 1 test in 3600.000s``, ``OK``, then the server's own teardown failure), read
to its label by the corpus test and here. No public log in the corpus shows a wrapper's own
uvicorn, a harness's timeout traceback or another process's bind error: those cases are
written from the format strings."""

from __future__ import annotations

from pathlib import Path

from tests.engine.engine_helpers import run_chunks, run_text
from tui.engine.startup.snapshot import Snapshot
from tui.engine.startup.vocabulary import FailureKind, Outcome, Stage

SGLANG = [
    "[2026-01-01 10:00:00] server_args=ServerArgs(model_path='m', tp_size=2, port=30000)",
    "[2026-01-01 10:00:02 TP0] Init torch distributed begin.",
    "[2026-01-01 10:00:02 TP1] Init torch distributed begin.",
    "[2026-01-01 10:00:04 TP0] Load weight begin. avail mem=70.00 GB",
    "[2026-01-01 10:00:04 TP1] Load weight begin. avail mem=70.00 GB",
]
WRAPPER_UVICORN = [
    "INFO:     Started server process [4242]",
    "INFO:     Waiting for application startup.",
    "INFO:     Application startup complete.",
    "INFO:     Uvicorn running on http://0.0.0.0:8080 (Press CTRL+C to quit)",
]
HARNESS_TIMEOUT = [
    "Traceback (most recent call last):",
    '  File "/home/ci/tests/test_server.py", line 40, in wait_ready',
    "    raise TimeoutError(f'server not ready after {limit} s')",
    "TimeoutError: server not ready after 600 s",
]


def _read(*parts: list[str]) -> Snapshot:
    snapshot, _ = run_text("\n".join(line for part in parts for line in part) + "\n")
    return snapshot


def test_a_wrappers_uvicorn_moves_no_stage() -> None:
    snapshot = _read(SGLANG, WRAPPER_UVICORN)
    assert snapshot.last_stage is Stage.WEIGHT_LOADING
    assert snapshot.outcome is Outcome.INCOMPLETE


def test_a_wrappers_ready_line_is_not_vllms() -> None:
    vllm = [
        "(APIServer pid=10) INFO 03-01 17:33:10 [api_server.py:1000] vLLM API server version "
        "0.11.0",
        "(APIServer pid=10) INFO 03-01 17:33:11 [utils.py:233] non-default args: {'model': 'm'}",
        "(EngineCore_DP0 pid=20) INFO 03-01 17:33:20 [gpu_model_runner.py:1900] Starting to "
        "load model m...",
    ]
    snapshot = _read(vllm, WRAPPER_UVICORN)
    assert snapshot.outcome is Outcome.INCOMPLETE
    assert snapshot.last_stage is Stage.WEIGHT_LOADING
    own = ["(APIServer pid=10) INFO:     Application startup complete."]
    assert _read(vllm, WRAPPER_UVICORN, own).outcome is Outcome.READY


def test_a_harness_timeout_alone_is_not_the_servers_failure() -> None:
    snapshot = _read(SGLANG, HARNESS_TIMEOUT)
    assert snapshot.failure is None
    assert snapshot.outcome is Outcome.INCOMPLETE


def test_a_harness_timeout_counts_once_the_servers_own_lines_fail() -> None:
    own = [
        "[2026-01-01 10:10:00 TP0] Scheduler hit an exception: Traceback (most recent call last):",
        '  File "/sgl/python/sglang/srt/managers/scheduler.py", line 2000, in run_scheduler',
        "RuntimeError: shutting down",
    ]
    snapshot = _read(SGLANG, HARNESS_TIMEOUT, own)
    assert snapshot.failure is not None
    assert snapshot.failure.rank == "TP0"
    assert "server not ready after 600 s" in snapshot.failure.excerpt


def test_another_processes_bind_error_is_not_a_port_clash_of_the_server() -> None:
    other = [
        "ERROR:    [Errno 98] error while attempting to bind on address ('0.0.0.0', 8080): "
        "address already in use"
    ]
    assert _read(SGLANG, other).failure is None
    own = [other[0].replace("8080", "30000")]
    snapshot = _read(SGLANG, own)
    assert snapshot.failure is not None
    assert snapshot.failure.kind is FailureKind.PORT_IN_USE


def test_a_ci_harness_around_the_server_real_log(shared: Path) -> None:
    # shun8686/for_debug: the harness's lines do not make the node ready; the server's own
    # scheduler exception at teardown is the failure
    data = (shared / "corpus" / "logs" / "013_sglang_ascend-pd-prefill-node1-tp16-31-gloo-"
            "closed.log").read_bytes()  # fmt: skip
    snapshot, _ = run_chunks([data])
    assert snapshot.outcome is Outcome.FAILED
    assert snapshot.failure is not None
    assert snapshot.failure.rank is not None
