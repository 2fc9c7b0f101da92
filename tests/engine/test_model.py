"""The start-up model: stage machine, drafts, outcome, failures, runs, decode figures."""

from __future__ import annotations

from tests.engine.engine_helpers import run_text, sglang_lines
from tui.engine.startup.log_events import (
    DecodeStats,
    FailureDetected,
    RunStarted,
    ServerStopped,
    StageProgressed,
)
from tui.engine.startup.vocabulary import FailureKind, Outcome, Stage

LAUNCH = "server_args=ServerArgs(model_path='/m', tp_size=2, port=30000)"
READY = "The server is fired up and ready to roll!"


def test_a_healthy_start_walks_every_stage_and_times_them() -> None:
    text = (
        sglang_lines(LAUNCH, rank="")
        + sglang_lines(
            "Init torch distributed begin.",
            "Load weight begin. avail mem=70.00 GB",
            "Load weight end. type=Q, dtype=bf16, avail mem=10.00 GB, mem usage=60.00 GB.",
            "KV Cache is allocated. #tokens: 5000, K size: 1 GB, V size: 1 GB",
            "Capture cuda graph begin. This can take up to several minutes. avail mem=9 GB",
            second=1,
        )
        + sglang_lines("INFO:     Application startup complete.", READY, rank="", second=9)
    )
    snapshot, _ = run_text(text)
    assert snapshot.outcome is Outcome.READY
    assert snapshot.last_stage is Stage.READY
    tp0 = snapshot.rank("TP0")
    assert tp0 is not None
    assert [span.stage for span in tp0.history] == [
        Stage.PROCESS_START,
        Stage.DISTRIBUTED_INIT,
        Stage.WEIGHT_LOADING,
        Stage.KV_CACHE,
        Stage.CUDA_GRAPH,
        Stage.READY,
    ]
    assert [span.seconds for span in tp0.history] == [0.0, 1.0, 1.0, 2.0, 5.0, None]
    assert (tp0.avail_gb, tp0.used_gb, tp0.kv_tokens) == (9.0, 60.0, 5000)
    assert snapshot.startup_seconds == 10.0
    assert snapshot.server.tp_size == 2


def test_a_milestone_never_logged_is_skipped_and_late_lines_do_not_go_back() -> None:
    snapshot, _ = run_text(
        sglang_lines(
            "Load weight begin. avail mem=70.00 GB",
            "Multimodal attention backend not set. Use triton_attn.",
        )
    )
    tp0 = snapshot.rank("TP0")
    assert tp0 is not None
    assert tp0.stage is Stage.WEIGHT_LOADING
    assert [span.stage for span in tp0.history] == [Stage.PROCESS_START, Stage.WEIGHT_LOADING]


def test_the_draft_models_second_load_and_capture_are_shown_as_draft() -> None:
    snapshot, _ = run_text(
        sglang_lines(
            "Load weight begin. avail mem=70.00 GB",
            "Load weight end. type=Q, dtype=bf16, avail mem=10.00 GB, mem usage=60.00 GB.",
            "Capture cuda graph begin. This can take up to several minutes. avail mem=9 GB",
            "Load weight begin. avail mem=9.00 GB",
            "Capture draft cuda graph begin. This can take up to several minutes. avail mem=8 GB",
        )
        + "Capturing batches (bs=1 avail_mem=8.0 GB): 100%|██████████| 4/4 [00:01<00:00]\n"
    )
    tp0 = snapshot.rank("TP0")
    assert tp0 is not None
    assert tp0.stage is Stage.CUDA_GRAPH
    assert (tp0.draft, tp0.draft_stage) == (True, Stage.CUDA_GRAPH)
    assert [(s.stage, s.draft) for s in tp0.history][-2:] == [
        (Stage.WEIGHT_LOADING, True),
        (Stage.CUDA_GRAPH, True),
    ]
    assert tp0.progress is not None
    assert tp0.progress.label.startswith("draft ")


def test_failure_kind_comes_from_the_cause_named_in_the_traceback() -> None:
    text = sglang_lines(
        "Load weight begin. avail mem=70.00 GB",
        "Scheduler hit an exception: Traceback (most recent call last):",
        rank="TP1",
    ) + (
        '  File "model_runner.py", line 1, in load\n'
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n"
    ) + sglang_lines("Received sigquit from a child process. It usually means the child failed.",
                     rank="", second=5)  # fmt: skip
    snapshot, events = run_text(text)
    assert snapshot.outcome is Outcome.FAILED
    failure = snapshot.failure
    assert failure is not None
    assert (failure.kind, failure.rank, failure.line, failure.stage) == (
        FailureKind.OOM,
        "TP1",
        2,
        Stage.WEIGHT_LOADING,
    )
    assert "CUDA out of memory" in failure.excerpt
    assert "hit an exception" in failure.excerpt
    assert len([e for e in events if isinstance(e, FailureDetected)]) == 1
    tp1 = snapshot.rank("TP1")
    assert tp1 is not None
    assert tp1.failed


def test_a_survived_traceback_does_not_fail_the_run() -> None:
    text = sglang_lines(
        "Load weight begin. avail mem=70.00 GB",
        "Traceback (most recent call last):",
        "Load weight end. type=Q, dtype=bf16, avail mem=10.00 GB, mem usage=60.00 GB.",
    )
    snapshot, _ = run_text(text)
    assert snapshot.failure is None
    assert snapshot.outcome is Outcome.INCOMPLETE


def test_a_traceback_at_the_end_with_no_progress_fails_the_run() -> None:
    text = sglang_lines(LAUNCH, rank="") + (
        "Traceback (most recent call last):\n"
        '  File "hub.py", line 1\n'
        "OSError: /m does not appear to have a file named config.json.\n"
    )
    snapshot, events = run_text(text)
    assert snapshot.outcome is Outcome.FAILED
    assert snapshot.failure is not None
    assert snapshot.failure.kind is FailureKind.WEIGHTS_MISSING
    assert any(isinstance(e, FailureDetected) for e in events)


def test_noise_after_a_clean_shutdown_or_warnings_do_not_fail() -> None:
    text = (
        sglang_lines(
            "Failed to load generation config for /m: /m does not appear to have a file named "
            "generation_config.json. Proceeding without generation config.",
            READY,
            "SIGTERM received. signum=15, frame=None. Draining requests and shutting down...",
            "Scheduler hit an exception: Traceback (most recent call last):",
            rank="",
        )
        + "RuntimeError: shutting down\n"
    )
    snapshot, events = run_text(text)
    assert snapshot.outcome is Outcome.READY
    assert snapshot.stopped
    assert any(isinstance(e, ServerStopped) for e in events)


def test_a_port_clash_after_loading() -> None:
    text = sglang_lines(
        "ERROR:    [Errno 98] error while attempting to bind on address ('0.0.0.0', 30000): "
        "address already in use",
        rank="",
    )
    snapshot, _ = run_text(text)
    assert snapshot.failure is not None
    assert snapshot.failure.kind is FailureKind.PORT_IN_USE


def test_serving_needs_real_work_after_ready() -> None:
    health = '[2026-01-01 00:01:00] INFO:     127.0.0.1:1 - "GET /health HTTP/1.1" 200 OK\n'
    ready, _ = run_text(sglang_lines(READY, rank="") + health)
    assert ready.last_stage is Stage.READY
    assert ready.requests == 1
    chat = '[2026-01-01 00:01:00] INFO:     1.2.3.4:1 - "POST /v1/completions HTTP/1.1" 200\n'
    serving, _ = run_text(sglang_lines(READY, rank="") + chat)
    assert serving.last_stage is Stage.SERVING


def test_the_monitors_own_polls_and_probes_are_not_traffic() -> None:
    stamp = "[2026-01-01 00:01:00"
    monitor = (
        f"{stamp} TP0] Prefill batch, #new-seq: 1, #new-token: 1, #cached-token: 0, "
        "token usage: 0.00, #running-req: 0, #queue-req: 0, \n"
        f'{stamp}] INFO:     127.0.0.1:1 - "GET /health?from=bringup HTTP/1.1" 200 OK\n'
        f'{stamp}] INFO:     127.0.0.1:1 - "POST /generate?from=bringup HTTP/1.1" 200 OK\n'
    )
    idle, _ = run_text(sglang_lines(READY, rank="") + monitor * 3)
    assert idle.last_stage is Stage.READY
    assert idle.requests == 0
    user = (
        f"{stamp} TP0] Prefill batch, #new-seq: 1, #new-token: 37, #cached-token: 0, "
        "token usage: 0.00, #running-req: 0, #queue-req: 0, \n"
        f'{stamp}] INFO:     1.2.3.4:1 - "POST /generate HTTP/1.1" 200 OK\n'
    )
    serving, _ = run_text(sglang_lines(READY, rank="") + monitor + user)
    assert serving.last_stage is Stage.SERVING
    assert serving.requests == 1


def test_decode_figures_are_kept_and_events_thinned_to_ten_seconds() -> None:
    decode = (
        "Decode batch, #running-req: 2, #token: 9, token usage: 0.01, accept len: {0:.2f}, "
        "accept rate: 0.50, cuda graph: True, gen throughput (token/s): {1:.2f}, #queue-req: 0, "
    )
    text = sglang_lines(READY, rank="") + "".join(
        f"[2026-01-01 00:00:{5 + i * 3:02d} TP0] {decode.format(2 + i / 10, 40 + i)}\n"
        for i in range(9)
    )
    snapshot, events = run_text(text, size=97)
    assert snapshot.decode.lines == 9
    assert snapshot.decode.gen_throughput == tuple(40.0 + i for i in range(9))
    assert snapshot.decode.accept_len[-1] == 2.8
    assert len([e for e in events if isinstance(e, DecodeStats)]) == 3
    assert snapshot.last_stage is Stage.SERVING


def test_a_relaunch_into_the_same_file_starts_a_new_run() -> None:
    first = sglang_lines(LAUNCH, rank="") + sglang_lines("Init parallel begin.", "Killed", second=1)
    second = sglang_lines(LAUNCH, rank="", second=20) + sglang_lines(
        "Init parallel begin.", "Load weight begin. avail mem=1 GB", second=21
    )
    snapshot, events = run_text(first + second)
    assert snapshot.runs_before == 1
    assert snapshot.failure is None
    assert snapshot.last_stage is Stage.WEIGHT_LOADING
    assert snapshot.lines == 6
    assert [e.runs_before for e in events if isinstance(e, RunStarted)] == [1]


def test_vllm_startup_and_stats() -> None:
    text = (
        "(APIServer pid=1) INFO 03-08 08:22:22 [utils.py:1] non-default args: {'model': 'm'}\n"
        "(EngineCore_DP0 pid=2) INFO 03-08 08:22:31 [parallel_state.py:1] world_size=1 rank=0 "
        "local_rank=0 distributed_init_method=tcp://x backend=nccl\n"
        "(EngineCore_DP0 pid=2) INFO 03-08 08:22:33 [gpu_model_runner.py:1] Starting to load "
        "model m...\n"
        "(EngineCore_DP0 pid=2) INFO 03-08 08:24:46 [gpu_model_runner.py:1] Model loading took "
        "14.37 GiB memory and 13.2 seconds\n"
        "(EngineCore_DP0 pid=2) \rCapturing CUDA graphs (decode, FULL):  50%|█   | 1/2 [00:01]"
        "\rCapturing CUDA graphs (decode, FULL): 100%|████| 2/2 [00:02]\n"
        "(APIServer pid=1) INFO:     Application startup complete.\n"
        "(APIServer pid=1) INFO 03-08 08:26:00 [loggers.py:1] Engine 000: Avg prompt throughput: "
        "1.0 tokens/s, Avg generation throughput: 30.5 tokens/s, Running: 1 reqs, Waiting: 0 "
        "reqs, GPU KV cache usage: 1.0%\n"
    )
    snapshot, events = run_text(text, size=50)
    assert snapshot.server.engine == "vllm"
    assert snapshot.outcome is Outcome.READY
    assert snapshot.last_stage is Stage.SERVING
    core = snapshot.rank("EngineCore_DP0")
    assert core is not None
    bars = [(e.rank, e.done) for e in events if isinstance(e, StageProgressed)]
    assert bars == [("EngineCore_DP0", 1), ("EngineCore_DP0", 2)]
    assert [s.stage for s in core.history][:5] == [
        Stage.PROCESS_START,
        Stage.DISTRIBUTED_INIT,
        Stage.WEIGHT_LOADING,
        Stage.KV_CACHE,
        Stage.CUDA_GRAPH,
    ]
    assert snapshot.decode.gen_throughput == (30.5,)
