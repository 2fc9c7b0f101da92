"""Start-up timeouts: a failure kind of their own, with the setting that raises the limit named
in the verdict. Lines are the engines' format strings filled in (sources in
``tui/engine/servers/startup_timeouts.py``). No public log in the shared corpus shows one of
these timeouts, so every case here is written from the format string; real vLLM and SGLang
timeouts from public threads are read in ``test_public_logs.py``."""

from __future__ import annotations

import pytest

from tests.engine.engine_helpers import run_text
from tui.engine.judge.judge import Signals, judge
from tui.engine.startup.vocabulary import FailureKind, Verdict
from tui.engine.timing.estimate import default_expectations

VLLM_START = [
    "(APIServer pid=10) INFO 03-01 17:33:10 [api_server.py:1000] vLLM API server version 0.11.0",
    "(APIServer pid=10) INFO 03-01 17:33:11 [utils.py:233] non-default args: {'model': 'big'}",
    "(EngineCore_DP0 pid=20) INFO 03-01 17:33:17 [core.py:95] Initializing a V1 LLM engine "
    "(v0.11.0) with config: model='big'",
    "(EngineCore_DP0 pid=20) INFO 03-01 17:33:20 [gpu_model_runner.py:1900] Starting to load "
    "model big...",
]
CASES = [
    # vllm/v1/engine/utils.py wait_for_engine_startup: raise TimeoutError("Timed out waiting
    # for engines to send initial message on input socket.")
    (
        [
            *VLLM_START,
            "(APIServer pid=10) Traceback (most recent call last):",
            '(APIServer pid=10)   File "/vllm/v1/engine/utils.py", line 800, in '
            "wait_for_engine_startup",
            "(APIServer pid=10) TimeoutError: Timed out waiting for engines to send initial "
            "message on input socket.",
        ],
        "VLLM_ENGINE_READY_TIMEOUT_S",
    ),
    # sglang/srt/entrypoints/http_server.py _wait_and_warmup: "Initialization failed. warmup
    # error: {last_traceback}" after the warm-up request waited SGLANG_WARMUP_TIMEOUT
    (
        [
            "[2026-01-01 10:00:00] server_args=ServerArgs(model_path='big', tp_size=1)",
            "[2026-01-01 10:00:05 TP0] Load weight begin. avail mem=70.00 GB",
            "[2026-01-01 10:20:05] Initialization failed. warmup error: Traceback (most recent "
            "call last): requests.exceptions.ReadTimeout: HTTPConnectionPool(host='127.0.0.1', "
            "port=30000): Read timed out. (read timeout=600)",
        ],
        "SGLANG_WARMUP_TIMEOUT",
    ),
    # sgl-router: "Timeout {}s waiting for workers {:?} to become healthy. Please set
    # --router-worker-startup-timeout-secs ..."
    (
        [
            "[2026-01-01 10:00:00] server_args=ServerArgs(model_path='big', tp_size=1)",
            "2026-01-01 10:10:00  ERROR sglang_router_rs::routers::http::router: Timeout 600s "
            'waiting for workers ["http://127.0.0.1:31000"] to become healthy. Please set '
            "--router-worker-startup-timeout-secs (sglang_router.launch_server) to a larger value",
        ],
        "--worker-startup-timeout-secs",
    ),
    # torch/distributed/elastic/rendezvous: RendezvousTimeoutError (torchrun's join_timeout)
    (
        [
            "[2026-01-01 10:00:00] server_args=ServerArgs(model_path='big', tp_size=16, nnodes=2)",
            "torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError",
        ],
        "join_timeout",
    ),
]


@pytest.mark.parametrize(("lines", "setting"), CASES, ids=["vllm", "sglang", "router", "torchrun"])
def test_a_startup_timeout_names_the_setting_to_raise(lines: list[str], setting: str) -> None:
    snapshot, _ = run_text("\n".join(lines) + "\n")
    assert snapshot.failure is not None
    assert snapshot.failure.kind is FailureKind.STARTUP_TIMEOUT
    assert setting in snapshot.failure.setting
    judgement = judge(snapshot, Signals(), default_expectations(600.0), 0.0)
    assert judgement.verdict is Verdict.FAILED
    assert judgement.reason.startswith("startup_timeout")
    assert f"raise {snapshot.failure.setting}" in judgement.reason


def test_the_kind_has_a_label() -> None:
    assert FailureKind.STARTUP_TIMEOUT.label == "start-up timed out"


def test_a_warmup_error_without_a_timeout_stays_what_it_was() -> None:
    snapshot, _ = run_text(
        "[2026-01-01 10:00:00] server_args=ServerArgs(model_path='big', tp_size=1)\n"
        "[2026-01-01 10:00:05] Initialization failed. warmup error: Traceback (most recent "
        "call last): ValueError: bad prompt\n"
    )
    assert snapshot.failure is not None
    assert snapshot.failure.kind is not FailureKind.STARTUP_TIMEOUT
    assert snapshot.failure.setting == ""
