"""The incremental path: chunk boundaries, partial lines, redraws, bounded memory."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.engine.engine_helpers import fixed_clock, run_chunks, run_text, sglang_lines
from tui.engine.logs.log_engine import LogEngine
from tui.engine.logs.sanitize import MAX_LINE_CHARS
from tui.engine.startup.log_events import EngineDetected, StageEntered, StageProgressed
from tui.engine.startup.snapshot import Failure, Snapshot
from tui.engine.startup.vocabulary import FailureKind, Stage

MILESTONES = [
    "[2026-01-01 00:00:00] server_args=ServerArgs(model_path='/m', tp_size=2)",
    "[2026-01-01 00:00:01 TP0] Init torch distributed begin.",
    "[2026-01-01 00:00:01 TP1] Init parallel begin.",
    "[2026-01-01 00:00:02 TP1] Load weight begin. avail mem=70.00 GB",
    "[2026-01-01 00:00:02 TP0] Load weight begin. avail mem=70.00 GB",
    "\rLoading safetensors checkpoint shards:  50% Completed | 1/2 [00:01<00:01]"
    "\rLoading safetensors checkpoint shards: 100% Completed | 2/2 [00:02<00:00]",
    "[2026-01-01 00:00:05 TP0] Load weight end. type=Q, dtype=bf16, avail mem=9.0 GB, "
    "mem usage=60.0 GB.",
    "[2026-01-01 00:00:05 TP1] KV Cache is allocated. #tokens: 1000, K size: 1 GB, V size: 1 GB",
    "[2026-01-01 00:00:06 TP0] Capture cuda graph begin. This can take up to several minutes.",
    "\x1b[32mCapturing batches (bs=4 avail_mem=8.0 GB):  50%|█████     | 1/2 [00:01<00:01]\x1b[0m",
    "[2026-01-01 00:00:07 TP0] Capture draft cuda graph begin. avail mem=7 GB",
    "[2026-01-01 00:00:08 TP0] Load weight begin. avail mem=7.00 GB",
    "[2026-01-01 00:00:09] INFO:     Application startup complete.",
    "[2026-01-01 00:00:10] The server is fired up and ready to roll!",
    "[2026-01-01 00:00:11 TP0] Decode batch, #running-req: 1, #token: 9, token usage: 0.01, "
    "accept len: 2.50, accept rate: 0.50, cuda graph: True, gen throughput (token/s): 42.00, "
    "#queue-req: 0, ",
    '[2026-01-01 00:00:12] INFO:     127.0.0.1:1 - "POST /generate HTTP/1.1" 200 OK',
    "[2026-01-01 00:00:13 TP1] Scheduler hit an exception: Traceback (most recent call last):",
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB",
    "(EngineCore_DP0 pid=3) INFO 03-08 08:24:46 [gpu_model_runner.py:1] Model loading took "
    "14.37 GiB memory and 13.2 seconds",
    "(APIServer pid=2) INFO:     Application startup complete.",
    "bad utf-8 \xff\xfe and \u00e9",
    "INFO 03-25 11:06:16 [__init__.py:241] Automatically detected platform cuda.",
    "(Worker pid=7) INFO 03-08 08:24:40 [parallel_state.py:1] world_size=2 rank=0 local_rank=0 "
    "distributed_init_method=tcp://x backend=nccl",
    "(Worker_TP0 pid=7) INFO 03-08 08:24:41 [gpu_model_runner.py:1] Starting to load model /m...",
    "[2026-01-01 00:00:06 TP1] Capture cuda graph end. Time elapsed: 2.19 s",
    "[2026-01-01 00:00:06 TP1] Prefill batch, #new-seq: 1, #new-token: 6, #cached-token: 0",
    "(APIServer pid=2) INFO 08-21 10:24:34 [launcher.py:100] [shutdown] API server: shutdown "
    "triggered",
    "(RayWorkerProc pid=8, ip=10.0.0.2) (Worker pid=8) INFO 08-14 11:58:02 [x.py:1] hello",
]


def _split(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({0, len(data), *(cut % (len(data) + 1) for cut in cuts)})
    return [data[a:b] for a, b in itertools.pairwise(points)]


@st.composite
def logs(draw: st.DrawFn) -> bytes:
    lines = draw(st.lists(st.sampled_from(MILESTONES), min_size=1, max_size=25))
    text = "\n".join(lines) + draw(st.sampled_from(["\n", "", "\r"]))
    return text.encode("utf-8", "surrogateescape").replace(b"\\xff", b"\xff")


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(logs(), st.lists(st.integers(min_value=0), max_size=12))
def test_events_do_not_depend_on_chunk_boundaries(data: bytes, cuts: list[int]) -> None:
    whole_snapshot, whole = run_chunks([data])
    split_snapshot, split = run_chunks(_split(data, cuts))
    assert split == whole
    assert split_snapshot.ranks == whole_snapshot.ranks
    assert split_snapshot.outcome == whole_snapshot.outcome


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(logs(), st.lists(st.integers(min_value=1, max_value=97), min_size=1, max_size=20))
def test_stages_never_go_backwards(data: bytes, sizes: list[int]) -> None:
    log = LogEngine(clock=fixed_clock)
    seen: dict[str, int] = {}
    runs = 0
    offset = 0
    for size in sizes * 20:
        if offset >= len(data):
            break
        snapshot = log.feed(data[offset : offset + size]).snapshot
        offset += size
        if snapshot.runs_before != runs:
            runs, seen = snapshot.runs_before, {}
        for rank in snapshot.ranks:
            assert rank.stage.order >= seen.get(rank.tag, 0)
            seen[rank.tag] = rank.stage.order
            targets = [span.stage.order for span in rank.history if not span.draft]
            assert targets == sorted(targets)
            assert rank.stage.order >= max(targets)


@given(st.binary(max_size=400), st.lists(st.integers(min_value=0), max_size=6))
def test_any_bytes_in_any_chunks_never_raise(data: bytes, cuts: list[int]) -> None:
    snapshot, _ = run_chunks(_split(data, cuts))
    assert snapshot.lines == data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)


def test_partial_line_progress_shows_before_the_line_ends() -> None:
    log = LogEngine(clock=fixed_clock)
    log.feed(sglang_lines("Load weight begin. avail mem=1 GB").encode())
    update = log.feed(b"\rLoading safetensors checkpoint shards:  10% Completed | 1/10 [00:01]")
    assert update.events == ()
    update = log.feed(b"\rLoading safetensors checkpoint shards:  20% Completed | 2/10 [00:02]")
    progress = [e for e in update.events if isinstance(e, StageProgressed)]
    assert [(p.rank, p.done, p.total) for p in progress] == [("TP0", 1, 10)]
    assert log.snapshot.rank("TP0") is not None
    final = log.finish()
    assert [(e.done, e.total) for e in final.events if isinstance(e, StageProgressed)] == [(2, 10)]
    assert final.snapshot.lines == 2


def test_an_endless_line_is_bounded_and_says_how_much_was_cut() -> None:
    log = LogEngine(clock=fixed_clock, keep_lines=True)
    for _ in range(20):
        log.feed(b"x" * 65536)
    text = log.feed(b"\n").lines[0].text
    head = text.split(" [")[0]
    assert text.endswith(f"[… {20 * 65536 - len(head)} bytes cut]")
    assert len(text) <= MAX_LINE_CHARS
    assert len(log._partial) == 0


def test_a_tqdm_line_that_never_ends_keeps_bounded_memory() -> None:
    log = LogEngine(clock=fixed_clock)
    log.feed(sglang_lines("Load weight begin. avail mem=1 GB").encode())
    bar = "\rLoading safetensors checkpoint shards: {0:3d}% Completed | {0}/100 [00:01]"
    for done in range(100):
        for _ in range(50):
            log.feed(bar.format(done).encode())
    assert len(log._partial) < 200
    state = log.snapshot.rank("TP0")
    assert state is not None
    assert state.progress is not None
    assert state.progress.done == 99


def test_mark_new_run_starts_over_and_counts_runs() -> None:
    log = LogEngine(clock=fixed_clock)
    log.feed(sglang_lines("Init parallel begin.", "Load weight begin. avail mem=1 GB").encode())
    update = log.mark_new_run("file replaced")
    assert update.snapshot.runs_before == 1
    assert update.snapshot.ranks == ()
    assert update.snapshot.lines == 2


def test_keep_lines_gives_attributed_sanitized_lines() -> None:
    log = LogEngine(clock=fixed_clock, keep_lines=True)
    text = sglang_lines("Init parallel begin.") + "\x1b[31mplain ERROR noise\x1b[0m\n"
    lines = log.feed(text.encode()).lines
    assert [(line.rank, line.problem) for line in lines] == [("TP0", False), (None, True)]
    assert lines[1].text == "plain ERROR noise"


def test_engine_is_reported_once_detected() -> None:
    snapshot, events = run_text(sglang_lines("Init parallel begin."))
    detected = [e for e in events if isinstance(e, EngineDetected)]
    assert [e.engine for e in detected] == ["sglang"]
    assert snapshot.server.engine == "sglang"
    entered = [e for e in events if isinstance(e, StageEntered)]
    assert entered[-1].stage is Stage.DISTRIBUTED_INIT


SERVING = [
    "[2026-01-01 00:00:{s:02d} TP0] Decode batch, #running-req: 3, #token: 9, token usage: 0.1, "
    "accept len: 2.{s:02d}, accept rate: 0.5, cuda graph: True, gen throughput (token/s): 4{s}.5, "
    "#queue-req: 0, ",
    "[2026-01-01 00:00:{s:02d}.123 DP1 TP1] Decode batch, #running-req: 1, #token: 9, token "
    "usage: 0.1, cuda graph: True, gen throughput (token/s): 1{s}.0, #queue-req: 0, ",
    "[2026-01-01 00:00:{s:02d} TP0] Decode batch, #running-req: 3, no figures here",
    "[2026-01-01 00:00:{s:02d} TP0] Prefill batch, #new-seq: 1, #new-token: 5, #cached-token: 0",
    '[2026-01-01 00:00:{s:02d}] INFO:     127.0.0.1:5 - "POST /generate HTTP/1.1" 200 OK',
    '[2026-01-01 00:00:{s:02d}] INFO:     127.0.0.1:5 - "GET /health HTTP/1.1" 503 Unavailable',
    '[2026-01-01 00:00:{s:02d}] INFO:     127.0.0.1:5 - "GET /x HTTP/1.1" 404 Not Found',
    "[2026-01-01 00:00:{s:02d}] Using default chat sampling params",
    "[2026-01-01 00:00:{s:02d} TP0] KV cache pool is full. Retract requests. #retracted_reqs: 1",
    "[2026-01-01 00:00:{s:02d} TP1] Scheduler hit an exception: Traceback (most recent call last):",
    "RuntimeError: boom {s}",
    "plain noise {s}",
]
READY_LINES = sglang_lines(
    "server_args=ServerArgs(model_path='/m', tp_size=2)",
    "The server is fired up and ready to roll!",
    rank="",
) + sglang_lines("Decode batch, #running-req: 1, cuda graph: True, gen throughput (token/s): 1.0, ")


@settings(max_examples=40, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.lists(st.tuples(st.integers(0, len(SERVING) - 1), st.integers(0, 59)), max_size=80))
def test_the_fast_path_agrees_with_reading_line_by_line(picks: list[tuple[int, int]]) -> None:
    body = "".join(SERVING[index].format(s=second) + "\n" for index, second in picks)
    data = (READY_LINES + body).encode()
    fast = LogEngine(clock=fixed_clock)
    by_line = LogEngine(clock=fixed_clock, keep_lines=True)
    fast_events = [*fast.feed(data).events, *fast.finish().events]
    line_events = [*by_line.feed(data).events, *by_line.finish().events]
    assert fast_events == line_events
    assert fast.snapshot == by_line.snapshot


def failure_of(*lines: str) -> Failure:
    """The failure a log of ``lines`` ends with (there must be one)."""
    snapshot, _ = run_text("\n".join(lines) + "\n")
    assert snapshot.failure is not None
    return snapshot.failure


def test_a_traceback_inside_graph_capture_is_a_cuda_graph_failure() -> None:
    failure = failure_of(
        "[2024-10-22 06:31:49 TP0] Capture cuda graph begin. This can take up to several minutes.",
        "[2024-10-22 06:31:49 TP0] Scheduler hit an exception: Traceback (most recent call last):",
        '  File "/sgl/python/sglang/srt/model_executor/cuda_graph_runner.py", line 147, in '
        "__init__",
        "    self.capture()",
        '  File "/sgl/python/sglang/srt/model_executor/cuda_graph_runner.py", line 190, in capture',
        "    out = self.capture_one_batch_size(bs, forward)",
        "AssertionError: shape mismatch",
    )
    assert failure.kind is FailureKind.CUDA_GRAPH


def test_a_cause_named_by_the_exception_outranks_the_capture_frames() -> None:
    failure = failure_of(
        "[2024-10-22 06:31:49 TP0] Scheduler hit an exception: Traceback (most recent call last):",
        '  File "/sgl/srt/model_executor/cuda_graph_runner.py", line 190, in capture',
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
    )
    assert failure.kind is FailureKind.OOM


def test_the_parents_sigquit_gives_the_failure_to_the_child_rank() -> None:
    failure = failure_of(
        "[2026-03-03 03:53:36 TP3] Load weight begin. avail mem=70.00 GB",
        "[2026-03-03 03:53:36] Received sigquit from a child process. It usually means the "
        "child failed.",
        "[2026-03-03 03:53:36 TP3] Scheduler hit an exception: Traceback (most recent call last):",
        '  File "/sgl/srt/managers/scheduler.py", line 1, in run_scheduler_process',
        "ValueError: bad weight",
    )
    assert (failure.rank, failure.line) == ("TP3", 3)
    assert failure.kind is FailureKind.TRACEBACK_OTHER


def rank_stages(snapshot: Snapshot, tag: str) -> list[Stage]:
    rank = next(rank for rank in snapshot.ranks if rank.tag == tag)
    return [span.stage for span in rank.history]


def test_a_log_that_begins_after_the_begin_lines_still_moves_the_ranks() -> None:
    text = sglang_lines(
        "Init torch distributed ends. mem usage=0.62 GB",
        "Memory pool end. avail mem=9.91 GB",
        "Capture cuda graph end. Time elapsed: 12.96 s. mem usage=0.72 GB. avail mem=8.28 GB.",
    )
    snapshot, _ = run_text(text)
    assert rank_stages(snapshot, "TP0") == [
        Stage.PROCESS_START, Stage.DISTRIBUTED_INIT, Stage.KV_CACHE, Stage.CUDA_GRAPH,
    ]  # fmt: skip
    assert snapshot.last_stage is Stage.CUDA_GRAPH


def test_an_end_line_never_takes_a_rank_back() -> None:
    text = sglang_lines(
        "Capture cuda graph begin. This can take up to several minutes. avail mem=9.02 GB",
        "Init torch distributed ends. mem usage=0.62 GB",
        "Capture cuda graph end. Time elapsed: 12.96 s. mem usage=0.72 GB. avail mem=8.28 GB.",
    )
    snapshot, _ = run_text(text)
    assert rank_stages(snapshot, "TP0") == [Stage.PROCESS_START, Stage.CUDA_GRAPH]


def test_decode_lines_without_the_ready_line_show_the_rank_serving() -> None:
    text = sglang_lines(
        "Decode batch. #running-req: 509, #token: 180776, token usage: 0.43, gen throughput "
        "(token/s): 7897.87, #queue-req: 0, ",
    )
    snapshot, _ = run_text(text)
    assert snapshot.last_stage is Stage.SERVING
    assert snapshot.outcome.value == "incomplete"  # the ready line itself was not seen
    assert snapshot.decode.gen_throughput == (7897.87,)


def test_a_launch_after_a_failed_one_starts_a_new_run() -> None:
    text = "\n".join(
        [
            "INFO 10-10 10:22:51 api_server.py:526] vLLM API server version 0.6.1",
            "ERROR 10-10 10:22:58 api_server.py:1] [Errno 98] error while attempting to bind on "
            "address ('0.0.0.0', 8000): address already in use",
            "OSError: [Errno 98] Address already in use",
            "INFO 10-10 10:23:00 api_server.py:526] vLLM API server version 0.6.1",
            "INFO 10-10 10:23:00 api_server.py:527] args: Namespace(port=8001)",
        ]
    )
    snapshot, _ = run_text(text + "\n")
    assert snapshot.runs_before == 1
    assert snapshot.failure is None


def test_the_rank_whose_line_named_the_cause_keeps_the_failure() -> None:
    prefix = "ERROR 05-10 16:00:15 [multiproc_executor.py:470]"
    failure = failure_of(
        f"(VllmWorker rank=1 pid=6) {prefix} RuntimeError: CUDA out of memory occurred when "
        "warming up sampler with 256 dummy requests.",
        f"(VllmWorker rank=0 pid=5) {prefix} WorkerProc hit an exception.",
        f"(VllmWorker rank=0 pid=5) {prefix} Traceback (most recent call last):",
    )
    assert (failure.rank, failure.line) == ("VllmWorker rank=1", 1)
    assert failure.kind is FailureKind.OOM


def test_a_prefill_batch_is_the_warm_up_before_the_ready_line_and_serving_after_it() -> None:
    warm_up = sglang_lines(
        "Capture cuda graph end. Time elapsed: 12.96 s. mem usage=0.72 GB. avail mem=8.28 GB.",
        "Prefill batch, #new-seq: 1, #new-token: 6, #cached-token: 0, token usage: 0.00",
    )
    snapshot, _ = run_text(warm_up)
    assert snapshot.last_stage is Stage.WARMUP
    served = warm_up + sglang_lines("The server is fired up and ready to roll!", rank="")
    served += sglang_lines("Prefill batch, #new-seq: 1, #new-token: 896, #cached-token: 0")
    snapshot, _ = run_text(served)
    assert snapshot.last_stage is Stage.SERVING


def test_the_attention_note_before_the_arguments_does_not_start_a_second_run() -> None:
    text = sglang_lines(
        "Attention backend not specified. Use flashinfer backend by default.",
        "server_args=ServerArgs(model_path='/m', tp_size=1)",
        "Load weight begin. avail mem=70.00 GB",
        rank="",
    )
    snapshot, _ = run_text(text)
    assert snapshot.runs_before == 0


def test_a_traceback_after_vllms_signalled_shutdown_is_noise() -> None:
    api = "(APIServer pid=5) {level} 08-21 10:24:34 [x.py:1] {msg}"
    lines = [
        "(APIServer pid=5) INFO:     Application startup complete.",
        '(APIServer pid=5) INFO:     127.0.0.1:1 - "POST /v1/chat/completions HTTP/1.1" 200 OK',
        "(EngineCore pid=6) INFO 08-21 10:24:34 [core.py:1214] [shutdown] EngineCore: trigger "
        "received signal=SIGTERM",
        api.format(level="INFO", msg="[shutdown] API server: shutdown triggered"),
        api.format(level="ERROR", msg="AsyncLLM output_handler failed."),
        api.format(level="ERROR", msg="Traceback (most recent call last):"),
        api.format(level="ERROR", msg="vllm.v1.engine.exceptions.EngineDeadError: EngineCore "
                   "encountered an issue. See stack trace (above) for the root cause."),
    ]  # fmt: skip
    snapshot, _ = run_text("\n".join(lines) + "\n")
    assert snapshot.failure is None
    assert (snapshot.outcome.value, snapshot.last_stage) == ("ready", Stage.SERVING)


def test_uvicorn_alone_does_not_make_an_unknown_server_ready() -> None:
    text = "INFO:     Started server process [360]\nINFO:     Application startup complete.\n"
    snapshot, _ = run_text(text)
    assert snapshot.outcome.value == "incomplete"
    snapshot, _ = run_text(text, engine="vllm")
    assert snapshot.outcome.value == "ready"


def test_idle_vllm_figures_after_the_ready_line_are_not_serving() -> None:
    stats = (
        "INFO 03-19 06:36:{s:02d} metrics.py:349] Avg prompt throughput: 0.0 tokens/s, Avg "
        "generation throughput: {gen} tokens/s, Running: {run} reqs, Swapped: 0 reqs, Pending: 0 "
        "reqs, GPU KV cache usage: 0.0%, CPU KV cache usage: 0.0%."
    )
    lines = [
        "INFO 03-19 06:36:20 api_server.py:1] vLLM API server version 0.6.3.post1",
        "INFO:     Application startup complete.",
        stats.format(s=30, gen="0.0", run=0),
        stats.format(s=40, gen="0.0", run=0),
    ]
    snapshot, _ = run_text("\n".join(lines) + "\n")
    assert (snapshot.last_stage, snapshot.decode.lines) == (Stage.READY, 2)
    snapshot, _ = run_text("\n".join([*lines, stats.format(s=50, gen="31.5", run=2)]) + "\n")
    assert snapshot.last_stage is Stage.SERVING


def test_an_sglang_log_drops_the_clock_of_vllms_import_line() -> None:
    text = (
        "INFO 03-24 11:06:16 [__init__.py:241] Automatically detected platform cuda.\n"
        + sglang_lines("server_args=ServerArgs(model_path='/m', tp_size=1)", rank="", second=20)
        + sglang_lines("The server is fired up and ready to roll!", rank="", second=30)
    ).replace("2026-01-01 00:00:", "2026-03-25 11:06:")
    snapshot, _ = run_text(text)
    assert snapshot.server.engine == "sglang"
    assert snapshot.ready_ts is not None
    assert snapshot.first_ts is not None
    assert snapshot.ready_ts - snapshot.first_ts == 10.0  # from server_args, not a day before
    main = next(rank for rank in snapshot.ranks if rank.tag == "main")
    assert [span.start_text for span in main.history][1:] == [
        "2026-03-25 11:06:20", "2026-03-25 11:06:30",
    ]  # fmt: skip
    assert main.history[1].seconds == 10.0


def test_stamps_without_a_year_take_the_year_of_the_first_full_one() -> None:
    lines = [
        "(APIServer pid=1) INFO 03-25 11:06:16 [x.py:1] non-default args: {'model': '/m'}",
        "[2026-03-25 11:06:20] [aiter] import [module_aiter_enum] under /x",
        "(APIServer pid=1) INFO 03-25 11:06:30 [x.py:1] Starting vLLM API server on http://x",
    ]
    snapshot, _ = run_text("\n".join(lines) + "\n")
    assert snapshot.server.engine == "vllm"
    api = next(rank for rank in snapshot.ranks if rank.tag == "APIServer")
    assert [span.seconds for span in api.history][1:] == [14.0, None]


def test_a_log_that_crashed_before_its_own_first_line_names_its_engine_by_the_frames() -> None:
    text = "\n".join(
        [
            "Traceback (most recent call last):",
            '  File "/usr/lib/python3/site-packages/sglang/launch_server.py", line 7, in <module>',
            '  File "/usr/lib/python3/site-packages/sglang/srt/server_args.py", line 1, in x',
            "ValueError: bad argument",
        ]
    )
    snapshot, _ = run_text(text + "\n")
    assert snapshot.server.engine == "sglang"
    assert snapshot.failure is not None


def test_a_vllm_worker_renamed_after_its_rank_is_known_stays_one_rank() -> None:
    env = "INFO 06-13 20:05:{s:02d} [x.py:1]"
    lines = [
        f"(Worker pid=300) {env.format(s=49)} world_size=2 rank=0 local_rank=0 "
        "distributed_init_method=tcp://127.0.0.1:1 backend=nccl",
        f"(Worker pid=301) {env.format(s=49)} world_size=2 rank=1 local_rank=1 "
        "distributed_init_method=tcp://127.0.0.1:1 backend=nccl",
        f"(Worker pid=300) {env.format(s=53)} vLLM is using nccl==2.28.9",
        f"(Worker_TP1 pid=301) {env.format(s=55)} Starting to load model /m...",
        f"(Worker_TP0 pid=300) {env.format(s=55)} Starting to load model /m...",
    ]
    head = "\n".join(lines[:3]) + "\n"
    snapshot, _ = run_text(head)  # named by the rank their distributed init states
    assert [rank.tag for rank in snapshot.ranks] == ["Worker rank=0", "Worker rank=1"]
    for size in (64, 65536):
        snapshot, _ = run_text("\n".join(lines) + "\n", size=size)
        assert [rank.tag for rank in snapshot.ranks] == ["Worker_TP0", "Worker_TP1"]
        worker = snapshot.ranks[0]
        assert [span.stage for span in worker.history] == [
            Stage.PROCESS_START, Stage.DISTRIBUTED_INIT, Stage.WEIGHT_LOADING,
        ]  # fmt: skip
        assert worker.lines == 3


def test_an_older_eagle_log_marks_the_second_plain_capture_as_the_draft() -> None:
    text = sglang_lines(
        "Attention backend not set. Use flashinfer backend by default.",
        "Init torch distributed begin.",
        "Load weight begin. avail mem=70.00 GB",
        "Capture cuda graph begin. This can take up to several minutes.",
        "Capture cuda graph end. Time elapsed: 4.00 s",
        "Init torch distributed begin.",
        "Load weight begin. avail mem=22.82 GB",
        "Capture cuda graph begin. This can take up to several minutes.",
        "Capture cuda graph end. Time elapsed: 4.00 s",
    )
    snapshot, _ = run_text(text)
    spans = [(span.stage, span.draft) for span in snapshot.ranks[0].history]
    assert spans == [
        (Stage.PROCESS_START, False), (Stage.ARGS, False), (Stage.DISTRIBUTED_INIT, False),
        (Stage.WEIGHT_LOADING, False), (Stage.CUDA_GRAPH, False),
        (Stage.DISTRIBUTED_INIT, True), (Stage.WEIGHT_LOADING, True), (Stage.CUDA_GRAPH, True),
    ]  # fmt: skip


def test_a_soft_watchdog_is_a_sign_that_progress_retracts() -> None:
    stuck = sglang_lines(
        "Load weight begin. avail mem=70.00 GB",
        "Scheduler watchdog timeout (self.watchdog_timeout=300, self.soft=True)",
    )
    snapshot, _ = run_text(stuck + sglang_lines("Load weight end. type=Q, avail mem=9.0 GB"))
    assert snapshot.failure is None
    hard = stuck.replace(", self.soft=True", "")
    snapshot, _ = run_text(hard + sglang_lines("Load weight end. type=Q, avail mem=9.0 GB"))
    assert snapshot.failure is not None
    assert snapshot.failure.kind is FailureKind.HANG


def test_answered_requests_in_a_log_that_began_after_start_up_show_it_serving() -> None:
    lines = (
        '[2025-08-02 19:24:20] INFO:     10.0.0.8:48276 - "POST /v1/completions HTTP/1.1" 200 OK',
        "[2025-08-02 19:24:30 TP3] Watchdog timeout (self.watchdog_timeout=300)",
    )
    snapshot, _ = run_text("\n".join(lines) + "\n")
    assert snapshot.last_stage is Stage.SERVING
    assert failure_of(*lines).kind is FailureKind.HANG


@pytest.mark.parametrize(
    "first",
    [
        '[2025-08-02 19:24:20] INFO:     127.0.0.1:4 - "POST /v1/completions HTTP/1.1" 503 OK',
        '[2025-08-02 19:24:20] INFO:     127.0.0.1:4 - "GET /health HTTP/1.1" 200 OK',
    ],
    ids=["refused-generation", "health-check"],
)
def test_a_refused_generation_or_a_health_check_is_not_serving(first: str) -> None:
    snapshot, _ = run_text(first + "\n")
    assert snapshot.last_stage is Stage.PROCESS_START


def test_the_warm_up_request_of_a_whole_log_is_not_serving() -> None:
    text = (
        sglang_lines(
            "Capture cuda graph end. Time elapsed: 12.96 s. mem usage=0.72 GB. avail mem=8.28 GB.",
        )
        + '[2025-08-02 19:24:20] INFO:     127.0.0.1:4 - "POST /generate HTTP/1.1" 200 OK\n'
    )
    snapshot, _ = run_text(text)
    assert snapshot.last_stage is Stage.CUDA_GRAPH


def test_a_long_traceback_between_the_cause_and_the_end_stays_one_failure() -> None:
    frames = [
        f'(APIServer pid=1)   File "/venv/lib/python3.12/site-packages/m{i}.py", line {i}, in f'
        for i in range(100)
    ]
    lines = (
        "(EngineCore pid=2) INFO 06-22 01:25:40 [backends.py:1] Dynamo bytecode transform time: 8s",
        "(EngineCore pid=2) Traceback (most recent call last):",
        '(EngineCore pid=2)   File "/venv/lib/python3.12/site-packages/torch/x.py", line 1, in g',
        "(EngineCore pid=2) KeyboardInterrupt",
        "(APIServer pid=1) Traceback (most recent call last):",
        *frames,
        "(APIServer pid=1) RuntimeError: Engine core initialization failed. See root cause above.",
    )
    failure = failure_of(*lines)
    assert (failure.kind, failure.rank) == (FailureKind.KILLED, "EngineCore")


def _two_tracebacks(second: str, gap: int = 0) -> tuple[str, ...]:
    """A rank's traceback that names no cause, then (``gap`` lines later) another rank's."""
    return (
        "[2025-10-19 00:51:10 DP0 TP0] Init torch distributed begin.",
        "[2025-10-19 00:51:18 DP6 TP6] Scheduler hit an exception: Traceback (most recent call "
        "last):",
        '  File "/venv/lib/python3.12/site-packages/torch/distributed/rendezvous.py", line 194',
        "RuntimeError: nonce == returnedNonce INTERNAL ASSERT FAILED at TCPStore.cpp:405",
        *[f"[2025-10-19 00:51:18 DP3 TP3] noise {i}" for i in range(gap)],
        "[2025-10-19 00:51:18 DP0 TP0] Scheduler hit an exception: Traceback (most recent call "
        "last):",
        '  File "/venv/lib/python3.12/site-packages/torch/distributed/rendezvous.py", line 194',
        second,
    )


def test_a_root_cause_printed_just_after_another_rank_s_traceback_explains_it() -> None:
    failure = failure_of(
        *_two_tracebacks(
            "RuntimeError: The server socket has failed to listen on any local network address. "
            "port: 30238, useIpv6: 0, code: -98, name: EADDRINUSE, message: address already in use"
        )
    )
    assert (failure.kind, failure.rank) == (FailureKind.PORT_IN_USE, "DP0 TP0")
    assert "nonce" in failure.excerpt
    assert "address already in use" in failure.excerpt


@pytest.mark.parametrize(
    ("second", "gap"),
    [
        ("RuntimeError: NCCL error: remote process exited or there was a network error", 0),
        ("OSError: [Errno 98] Address already in use", 80),
    ],
    ids=["a-consequence", "too-late"],
)
def test_a_later_failure_does_not_explain_one_it_may_follow_from(second: str, gap: int) -> None:
    failure = failure_of(*_two_tracebacks(second, gap))
    assert (failure.kind, failure.rank) == (FailureKind.TRACEBACK_OTHER, "DP6 TP6")


_SHM_WAIT = (
    "(Worker_TP0 pid=5) INFO 05-10 10:01:{s:02d} [shm_broadcast.py:1] No available shared memory "
    "broadcast block found in 60 seconds. This typically happens when some processes are hanging "
    "or doing some time-consuming work (e.g. compilation)."
)


@pytest.mark.parametrize(
    ("end", "kind"),
    [
        ((), FailureKind.HANG),
        (
            (
                "(EngineCore_DP0 pid=4) ERROR 05-10 10:09:00 [core.py:1] EngineCore failed to "
                "start.",
                "(EngineCore_DP0 pid=4) Traceback (most recent call last):",
                "(EngineCore_DP0 pid=4) OSError: [Errno 122] Disk quota exceeded",
            ),
            FailureKind.TRACEBACK_OTHER,
        ),
    ],
    ids=["waits-alone", "then-an-exception"],
)
def test_shared_memory_waits_are_a_hang_only_if_no_exception_follows(
    end: tuple[str, ...], kind: FailureKind
) -> None:
    lines = (
        "(EngineCore_DP0 pid=4) INFO 05-10 10:00:00 [backends.py:1] Dynamo bytecode transform "
        "time: 8.01 s",
        *[_SHM_WAIT.format(s=second) for second in range(3)],
        *end,
    )
    assert failure_of(*lines).kind is kind


def _traceback_alone(*frames: str, cause: str = "ValueError: no backend") -> str:
    return "\n".join([
        "[2026-06-28 23:41:27 TP1] Scheduler hit an exception: Traceback (most recent call last):",
        *(f'  File "/sgl/python/sglang/srt/x.py", line {n}, in {f}' for n, f in enumerate(frames)),
        cause,
    ]) + "\n"  # fmt: skip


@pytest.mark.parametrize(
    ("frames", "cause", "stage"),
    [
        (
            ("run_scheduler_process", "init_cuda_graphs", "warmup"),
            "ValueError: no backend",
            Stage.CUDA_GRAPH,
        ),
        (
            ("run_scheduler_process", "init_torch_distributed", "initialize_model_parallel"),
            "RuntimeError: NCCL error: unhandled system error",
            Stage.DISTRIBUTED_INIT,
        ),
        (("run_scheduler_process", "forward"), "ValueError: no backend", None),
    ],
    ids=["graphs", "distributed-named-cause", "nothing-known"],
)
def test_a_traceback_pasted_alone_shows_the_stage_its_frames_were_in(
    frames: tuple[str, ...], cause: str, stage: Stage | None
) -> None:
    snapshot, _ = run_text(_traceback_alone(*frames, cause=cause))
    assert snapshot.failure is not None
    assert snapshot.failure.stage is (stage or Stage.PROCESS_START)  # the rank's, with no frame
    assert snapshot.last_stage is stage


def test_frames_past_a_rank_s_last_milestone_show_where_it_failed() -> None:
    text = sglang_lines("Load weight begin. avail mem=70.00 GB") + _traceback_alone(
        "run_scheduler_process", "init_memory_pool", "profile_max_num_token"
    )
    snapshot, _ = run_text(text)
    assert snapshot.failure is not None
    assert (snapshot.failure.stage, snapshot.last_stage) == (Stage.KV_CACHE, Stage.WEIGHT_LOADING)


@pytest.mark.parametrize(
    ("top", "kind"),
    [
        ('pynccl_wrapper.py", line 290 in ncclAllReduce', FailureKind.NCCL),
        ('model_runner.py", line 90 in forward', FailureKind.TRACEBACK_OTHER),
    ],
    ids=["inside-nccl", "elsewhere"],
)
def test_a_crash_inside_nccl_is_an_nccl_failure(top: str, kind: FailureKind) -> None:
    prefix = "(RayWorkerWrapper pid=7, ip=10.0.0.2) "
    lines = (
        "(RayWorkerWrapper pid=7, ip=10.0.0.2) INFO 05-06 14:20:00 [pynccl.py:69] vLLM is using "
        "nccl==2.21.5",
        f"{prefix}[2025-05-06 14:20:09,187 E 7 7] logging.cc:484: *** SIGSEGV received at "
        "time=1746566409 on cpu 131 ***",
        f"{prefix}Fatal Python error: Segmentation fault",
        f"{prefix}Stack (most recent call first):",
        f'{prefix}  File "/usr/local/lib/python3.12/dist-packages/vllm/{top}',
    )
    assert failure_of(*lines).kind is kind


def test_an_exception_named_by_its_module_ends_the_traceback() -> None:
    lines = (
        "[2025-02-09 20:33:34] The server is fired up and ready to roll!",
        "[2025-02-09 20:33:56 TP0] TpModelWorkerClient hit an exception: Traceback (most recent "
        "call last):",
        '  File "/sgl/python/sglang/srt/layers/attention/triton_ops/decode.py", line 9, in f',
        "triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 106496, "
        "Hardware limit: 101376.",
        "[2025-02-09 20:33:56] Received sigquit from a child proces. It usually means the child "
        "failed.",
        "Killed",
    )
    failure = failure_of(*lines)
    assert (failure.kind, failure.rank) == (FailureKind.TRACEBACK_OTHER, "TP0")
    assert "OutOfResources" in failure.excerpt


@pytest.mark.parametrize(
    ("message", "stage"),
    [
        ("Prefill batch. #new-seq: 3, #new-token: 8190, #cached-token: 0, token usage: 0.02, "
         "#running-req: 2, #queue-req: 5", Stage.SERVING),
        ("Decode out of memory happened. #retracted_reqs: 1, #new_token_ratio: 0.1474 -> 0.1845",
         Stage.SERVING),
        ("Prefill batch. #new-seq: 1, #new-token: 7, #cached-token: 0, token usage: 0.00, "
         "#running-req: 0, #queue-req: 0", Stage.WARMUP),
    ],
    ids=["busy-prefill", "retraction", "the-warm-up"],
)  # fmt: skip
def test_traffic_without_the_ready_line_shows_the_rank_serving(message: str, stage: Stage) -> None:
    snapshot, _ = run_text(sglang_lines(message))
    assert snapshot.last_stage is stage
    assert snapshot.failure is None


def test_an_answered_vllm_request_without_the_ready_line_shows_it_serving() -> None:
    lines = (
        "(APIServer pid=1) INFO 04-16 10:32:00 [api_server.py:1] vLLM API server version 0.8.4",
        "(APIServer pid=1) INFO 04-16 10:32:01 [utils.py:1] non-default args: {'model': 'm'}",
        "(APIServer pid=1) INFO 04-16 10:32:17 [launcher.py:34] Route: /health, Methods: GET",
        '(APIServer pid=1) INFO:     10.0.0.9:50301 - "POST /v1/chat/completions HTTP/1.1" 200 OK',
    )
    snapshot, _ = run_text("\n".join(lines) + "\n")
    assert snapshot.last_stage is Stage.SERVING
    assert snapshot.outcome.value == "incomplete"  # the ready line itself was not seen
