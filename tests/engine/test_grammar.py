"""The line grammars: envelopes, wrappers, milestone wordings of every version, detection."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tui.engine.servers.common_patterns import failure_hit, parse_bar
from tui.engine.servers.hits import (
    DecodeHit,
    FailureHit,
    Hit,
    Marker,
    ProgressHit,
    RequestHit,
    SpecHit,
    StageHit,
)
from tui.engine.servers.line_grammar import LineGrammar
from tui.engine.servers.server_args import sglang_args, vllm_args
from tui.engine.servers.sglang.sglang_grammar import is_boring
from tui.engine.servers.wrappers import unwrap
from tui.engine.startup.decode_tail import slot_value
from tui.engine.startup.vocabulary import FailureKind, Stage


def parse(line: str, engine: str = "auto") -> tuple[str | None, tuple[Hit, ...]]:
    parsed = LineGrammar(engine).parse(line)[-1]
    return parsed.rank, parsed.hits


def stage_of(line: str) -> Stage | None:
    return next((h.stage for h in parse(line)[1] if isinstance(h, StageHit)), None)


@pytest.mark.parametrize(
    ("line", "rank"),
    [
        ("[2025-11-29 14:35:01 TP3] Load weight begin. avail mem=75.12 GB", "TP3"),
        ("[2025-11-29 14:35:01.123 TP3] Load weight begin. avail mem=75.12 GB", "TP3"),
        ("[2025-11-29 14:35:01 DP3 TP3 EP3] Load weight begin. avail mem=1 GB", "DP3 TP3 EP3"),
        ("[2025-11-29 14:35:01 TP3 EP3 DP3] Load weight begin. avail mem=1 GB", "TP3 EP3 DP3"),
        ("[2025-11-29 14:35:01 DP0 PP1 ATTN_CP0 MOE_DP0 TP3 EP3] Init parallel begin.",
         "DP0 PP1 ATTN_CP0 MOE_DP0 TP3 EP3"),
        ("[2025-11-29 14:35:01] Load weight begin. avail mem=75.12 GB", "main"),
        ("(SchedulerActor pid=12, ip=10.0.0.1) [2025-11-29 14:35:01 TP1] Init parallel begin.",
         "TP1"),
        ("sglang-1  | [2025-11-29 14:35:01 TP2] Init parallel begin.", "TP2"),
        ("2025-11-29T14:35:01.5Z [2025-11-29 14:35:01 TP2] Init parallel begin.", "TP2"),
        ("[2025-11-29 16:35:01] [2025-11-29 01:35:01 TP2] Init parallel begin.", "TP2"),
        ("[gpu=3] Load weight begin. avail mem=21.65 GB", "gpu=3"),
        ("^[[36m(Worker_TP1 pid=99)^[[0m INFO 03-25 08:34:16 [gpu_model_runner.py:1140] Model "
         "loading took 40.3172 GB and 35.573925 seconds", "Worker_TP1"),
        ("(Worker_TP3 pid=99) INFO 03-08 08:22:31 [parallel_state.py:1] world_size=4 rank=3 "
         "local_rank=3 distributed_init_method=tcp://x backend=nccl", "Worker_TP3"),
        ("(VllmWorker rank=2 pid=5) INFO 08-13 17:18:34 [loader.py:1] Starting to load model m...",
         "VllmWorker rank=2"),
        ("INFO 08-13 17:18:34 [gpu_model_runner.py:1] Starting to load model m...", "main"),
    ],
)  # fmt: skip
def test_envelopes_give_the_rank_as_printed(line: str, rank: str) -> None:
    got_rank, hits = parse(line)
    assert got_rank == rank
    assert any(isinstance(hit, StageHit) for hit in hits)


@pytest.mark.parametrize(
    ("message", "stage"),
    [
        ("Init torch distributed begin.", Stage.DISTRIBUTED_INIT),
        ("Init parallel begin.", Stage.DISTRIBUTED_INIT),
        ("Multimodal attention backend not set. Use triton_attn.", Stage.MODEL_CONFIG),
        ("Using triton_attn as multimodal attention backend.", Stage.MODEL_CONFIG),
        ("Load weight begin. avail mem=78.52 GB", Stage.WEIGHT_LOADING),
        ("Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=63.10 GB, "
         "mem usage=15.42 GB.", Stage.KV_CACHE),
        ("Load weight end. elapsed=41.37 s, type=Qwen3ForCausalLM, quant=fp8, fmt=e4m3, "
         "avail mem=63.10 GB, mem usage=15.42 GB.", Stage.KV_CACHE),
        ("KV Cache is allocated. #tokens: 1187654, K size: 27.18 GB, V size: 27.18 GB",
         Stage.KV_CACHE),
        ("KV Cache is allocated. dtype: torch.bfloat16, #tokens: 1187654, K size: 27.18 GB, "
         "V size: 27.18 GB", Stage.KV_CACHE),
        ("SWA KV Cache is allocated. dtype: torch.bfloat16, #tokens: 5, KV size: 1.00 GB",
         Stage.KV_CACHE),
        ("Capture cuda graph begin. This can take up to several minutes. avail mem=9.02 GB",
         Stage.CUDA_GRAPH),
        ("Capture npu graph begin. This can take up to several minutes. avail mem=9.02 GB",
         Stage.CUDA_GRAPH),
        ("Capture target decode CUDA graph begin. backend=full, num_tokens_per_req=1, "
         "avail mem=9.02 GB", Stage.CUDA_GRAPH),
        ("Capture target verify CUDA graph begin. backend=full, num_tokens_per_req=4, "
         "avail mem=9.02 GB", Stage.CUDA_GRAPH),
        ("INFO:     Started server process [12345]", Stage.WARMUP),
        ("INFO:     Application startup complete.", Stage.WARMUP),
        ("INFO:     Uvicorn running on http://127.0.0.1:30000 (Press CTRL+C to quit)",
         Stage.WARMUP),
        ("WARNING server_args.py:1780: Load weight begin. avail mem=1 GB", Stage.WEIGHT_LOADING),
    ],
)  # fmt: skip
def test_sglang_milestones_of_every_version(message: str, stage: Stage) -> None:
    assert stage_of(f"[2025-11-29 14:35:01 TP0] {message}") is stage


def test_draft_wording_is_recognised_from_the_text() -> None:
    for message in (
        "Capture draft cuda graph begin. This can take up to several minutes. avail mem=6 GB",
        "Capture draft decode CUDA graph begin. backend=full, num_tokens_per_req=1, bs=[1], "
        "avail mem=6.10 GB",
        "Capture draft extend cuda graph begin (step 1). This can take up to several minutes.",
    ):
        hits = parse(f"[2025-11-29 14:35:01 TP0] {message}")[1]
        assert any(isinstance(h, StageHit) and h.draft for h in hits), message
    end = "Load weight end. type=LlamaForCausalLMEagle3, dtype=torch.bfloat16, avail mem=1 GB"
    hits = parse(f"[2025-11-29 14:35:01] {end}")[1]
    assert any(isinstance(h, StageHit) and h.draft for h in hits)


def test_ready_lines_and_uvicorn_semantics_differ_by_engine() -> None:
    ready = "[2025-11-29 14:41:09] The server is fired up and ready to roll!"
    assert Marker.READY in parse(ready)[1]
    assert Marker.READY in parse("[2025-12-25 13:14:34] INFO:     The server is fired up and "
                                 "ready to roll!")[1]  # fmt: skip
    assert Marker.READY in parse("(APIServer pid=1) INFO:     Application startup complete.")[1]
    assert Marker.READY in parse("INFO:     Application startup complete.", "vllm")[1]
    assert Marker.READY not in parse("INFO:     Application startup complete.", "sglang")[1]


def test_decode_lines_of_both_engines() -> None:
    sglang = (
        "[2026-01-07 07:33:18 TP0] Decode batch, #running-req: 1, #token: 18304, token usage: "
        "0.01, accept len: 4.25, accept rate: 0.85, npu graph: True, gen throughput (token/s): "
        "182.84, #queue-req: 0, "
    )
    assert DecodeHit(182.84, 4.25, 0.85, 1, 0) in parse(sglang)[1]
    old = (
        "[2025-01-01 00:00:00 TP0] Decode batch. #running-req: 3, #token: 10, token usage: "
        "0.00, cuda graph: True, gen throughput (token/s): 55.10, #queue-req: 2, "
    )
    assert DecodeHit(55.10, None, None, 3, 2) in parse(old)[1]
    vllm = (
        "(APIServer pid=5) INFO 08-21 10:29:59 [loggers.py:273] Engine 000: Avg prompt "
        "throughput: 4.8 tokens/s, Avg generation throughput: 5.6 tokens/s, Running: 1 reqs, "
        "Waiting: 0 reqs, GPU KV cache usage: 0.8%, Prefix cache hit rate: 0.0%"
    )
    assert DecodeHit(5.6, None, None, 1, 0) in parse(vllm)[1]
    spec = (
        "(APIServer pid=5) INFO 08-21 10:29:59 [metrics.py:120] SpecDecoding metrics: Mean "
        "acceptance length: 2.67, Accepted throughput: 3.44 tokens/s, Drafted throughput: 6.18 "
        "tokens/s, Accepted: 97 tokens, Drafted: 174 tokens, Per-position acceptance rate: "
        "0.7, 0.5, Avg Draft acceptance rate: 55.7%"
    )
    hit = next(h for h in parse(spec)[1] if isinstance(h, SpecHit))
    assert hit.accept_len == 2.67
    assert hit.accept_rate == pytest.approx(0.557)


def test_access_lines() -> None:
    line = '[2025-11-29 14:41:07] INFO:     127.0.0.1:53422 - "POST /generate HTTP/1.1" 200 OK'
    assert parse(line)[1] == (RequestHit("POST", "/generate", 200),)


@pytest.mark.parametrize(
    ("text", "stage", "done", "total"),
    [
        ("Loading safetensors checkpoint shards:  45% Completed | 9/20 [00:10<00:12,  1.10s/it]",
         Stage.WEIGHT_LOADING, 9, 20),
        ("Multi-thread loading shards: 100% Completed | 1/1 [00:04<00:00,  4.12s/it]",
         Stage.WEIGHT_LOADING, 1, 1),
        ("Capturing batches (bs=1 avail_mem=8.30 GB): 100%|██████████| 36/36 [00:21<00:00]",
         Stage.CUDA_GRAPH, 36, 36),
        ("Capturing CUDA graphs (decode, FULL):   6%|▌         | 2/35 [00:00<00:20]",
         Stage.CUDA_GRAPH, 2, 35),
    ],
)  # fmt: skip
def test_progress_bars(text: str, stage: Stage, done: int, total: int) -> None:
    bar = parse_bar(text)
    assert bar is not None
    assert (bar.stage, bar.done, bar.total) == (stage, done, total)
    assert parse_bar("  0%|          | 0/3 [00:00<?, ?it/s]") is None


def test_a_bar_glued_to_a_log_line_gives_both() -> None:
    line = (
        "Multi-thread loading shards:   0% Completed | 0/1 [00:00<?, ?it/s][2026-05-25 17:26:25 "
        "TP1] Scheduler hit an exception: Traceback (most recent call last):"
    )
    bar, crash = LineGrammar().parse(line)
    assert any(isinstance(h, ProgressHit) for h in bar.hits)
    assert crash.rank == "TP1"
    assert FailureHit(None, True) in crash.hits


def test_traceback_lines_belong_to_the_rank_that_started_it() -> None:
    grammar = LineGrammar()
    grammar.parse("[2026-05-25 17:26:25 TP1] Scheduler hit an exception: Traceback (most recent "
                  "call last):")  # fmt: skip
    assert grammar.parse('  File "x.py", line 1, in f')[0].rank == "TP1"
    assert grammar.parse("RuntimeError: boom")[0].rank == "TP1"
    assert grammar.parse("pip noise")[0].rank is None


@pytest.mark.parametrize(
    ("text", "kind", "hard"),
    [
        ("Scheduler hit an exception: Traceback (most recent call last):", None, True),
        ("Received sigquit from a child process. It usually means the child failed.", None, True),
        ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a "
         "total capacity of 79.19 GiB of which 1.12 GiB is free", FailureKind.OOM, False),
        ("  what():  NPU out of memory. Tried to allocate 4.00 GiB", FailureKind.OOM, False),
        ("RuntimeError: NCCL error: unhandled system error", FailureKind.NCCL, False),
        ("[rank3]:[E ProcessGroupNCCL.cpp:616] Watchdog caught collective operation timeout: "
         "WorkNCCL(SeqNum=1, OpType=ALLREDUCE) ran for 600000 milliseconds before timing out",
         FailureKind.NCCL, True),
        ("Scheduler watchdog timeout (self.watchdog_timeout=300, self.soft=False)",
         FailureKind.HANG, True),
        ("ERROR:    [Errno 98] error while attempting to bind on address ('0.0.0.0', 30000): "
         "address already in use", FailureKind.PORT_IN_USE, True),
        ("RuntimeError: Cannot find any model weights with `/models/x`",
         FailureKind.WEIGHTS_MISSING, False),
        ("OSError: /m does not appear to have a file named config.json.",
         FailureKind.WEIGHTS_MISSING, False),
        ("Exception: Capture cuda graph failed: invalid argument", FailureKind.CUDA_GRAPH, False),
        ("RuntimeError: Rank 3 scheduler died during initialization (exit code: -9). If exit code "
         "is -9 (SIGKILL), a common cause is the OS OOM killer.", FailureKind.KILLED, True),
        ("No available shared memory broadcast block found in 60 seconds.",
         FailureKind.HANG, False),
        ("Killed", FailureKind.KILLED, True),
        ("/bin/sh: line 1: 4242 Killed                  python3 -m sglang.launch_server",
         FailureKind.KILLED, True),
        ("sglang-1 exited with code 137", FailureKind.KILLED, False),
        ("EngineCore failed to start.", None, True),
        ("Got fatal signal from worker processes, shutting down", None, True),
        ("ValueError: Invalid repository ID or local directory specified: '/m'",
         FailureKind.WEIGHTS_MISSING, False),
        ("FileNotFoundError: No such file or directory: '/m/config.json'",
         FailureKind.WEIGHTS_MISSING, False),
        ("RuntimeError: operation not permitted when stream is capturing",
         FailureKind.CUDA_GRAPH, False),
        ("requests.exceptions.HTTPError: 401 Client Error: Unauthorized for url: "
         "https://huggingface.co/meta-llama/Meta-Llama-3-8B-Instruct/resolve/main/config.json",
         FailureKind.WEIGHTS_MISSING, False),
        ("huggingface_hub.errors.GatedRepoError: 403 Client Error.", FailureKind.WEIGHTS_MISSING,
         False),
        ("KeyboardInterrupt", FailureKind.KILLED, False),
        ("MQLLMEngine is already dead, terminating server process", None, True),
        ("ValueError: No supported config format found in /models/mistral-7b",
         FailureKind.WEIGHTS_MISSING, False),
        ("OSError: [Errno 12] Cannot allocate memory", FailureKind.OOM, False),
        ("ValueError: Ran out of memory in memory space vmem while allocating on stack",
         FailureKind.OOM, False),
        ("RuntimeError: NCCL Error 2: unhandled system error (run with NCCL_DEBUG=INFO for "
         "details)", FailureKind.NCCL, False),
        ("Memory access fault by GPU node-8 (Agent handle: 0x636e3add6120) on address "
         "0x7a2d7a600000. Reason: Unknown.", None, True),
        ("Access to model meta-llama/Llama-3.1-8B is restricted. You must have access to it and "
         "be authenticated to access it. Please log in.", FailureKind.WEIGHTS_MISSING, False),
    ],
)  # fmt: skip
def test_failure_signatures(text: str, kind: FailureKind | None, hard: bool) -> None:
    hit = failure_hit(text)
    assert hit is not None
    assert (hit.kind, hit.hard) == (kind, hard)


@pytest.mark.parametrize(
    "text",
    [
        "Failed to load generation config for /m: /m does not appear to have a file named "
        "generation_config.json. Proceeding without generation config.",
        "Cannot use FA version 2 is not supported due to FA2 is only supported on devices with "
        "compute capability >= 8",
        "[rank0]:[W308 ProcessGroupNCCL.cpp:1524] Warning: WARNING: destroy_process_group() was "
        "not called before program exit",
        "KV cache pool is full. Retract requests. #retracted_reqs: 1, #new_token_ratio: 0.5 -> 1.0",
        "Decode out of memory happened. #retracted_reqs: 1, #new_token_ratio: 0.1474 -> 0.1845",
    ],
)
def test_harmless_noise_is_not_a_failure(text: str) -> None:
    assert failure_hit(text) is None


def test_detection_needs_a_line_only_one_engine_prints() -> None:
    grammar = LineGrammar()
    grammar.parse("[2026-03-01 17:32:58] INFO core.py:517: start build [module_aiter_enum]")
    assert grammar.engine == "unknown"
    grammar.parse("INFO 03-01 17:32:50 [utils.py:253] non-default args: {'model': 'm'}")
    assert (grammar.engine, grammar.detected) == ("vllm", True)
    sglang = LineGrammar()
    sglang.parse("[2026-01-01 00:00:00 TP0] Init parallel begin.")
    assert sglang.engine == "sglang"
    forced = LineGrammar("vllm")
    forced.parse("[2026-01-01 00:00:00 TP0] Init parallel begin.")
    assert (forced.engine, forced.detected) == ("vllm", False)


def test_server_args_of_both_engines() -> None:
    old = sglang_args("server_args=ServerArgs(model_path='/m/q', tp_size=8, dp_size=1, "
                      "speculative_algorithm='EAGLE3', speculative_draft_model_path='/m/d', "
                      "port=30000, nnodes=1)")  # fmt: skip
    assert (old.model, old.tp_size, old.drafter, old.port) == ("/m/q", 8, "/m/d", 30000)
    new = sglang_args("server_args={'model_path': 'Qwen/Qwen3-8B', 'tp_size': 4, 'port': 1}")
    assert (new.model, new.tp_size, new.port) == ("Qwen/Qwen3-8B", 4, 1)
    vllm = vllm_args("non-default args: {'model': 'm', 'tensor_parallel_size': 2, "
                     "'served_model_name': ['x'], 'speculative_config': {'method': 'eagle3', "
                     "'model': 'd'}}")  # fmt: skip
    assert (vllm.model, vllm.tp_size, vllm.served_model_name) == ("m", 2, "x")
    assert (vllm.drafter, vllm.speculative_algorithm) == ("d", "eagle3")


def test_wrappers_are_stripped() -> None:
    assert unwrap("vllm-1  | INFO 08-13 17:18:34 [x.py:1] hi") == (
        "vllm-1  | ",
        "INFO 08-13 17:18:34 [x.py:1] hi",
    )
    assert unwrap("[pod/sglang-0/main] [2025-01-01 00:00:00] x")[1] == "[2025-01-01 00:00:00] x"
    assert unwrap("Mar 08 08:22:22 gpu1 python[1234]: hello")[1] == "hello"
    assert unwrap("авг 18 14:15:04 llm python3[28059]: hello")[1] == "hello"
    assert unwrap("[2025-08-12T08:42:31Z] (EngineCore_0 pid=1) x")[1] == "(EngineCore_0 pid=1) x"
    assert unwrap("INFO 08-13 17:18:34 [x.py:1] hi")[0] == ""
    assert unwrap("Loading safetensors checkpoint shards: 1% Completed | 1/2")[0] == ""


@settings(max_examples=300)
@given(st.text(max_size=200))
def test_any_line_parses_without_raising(line: str) -> None:
    for engine in ("auto", "sglang", "vllm"):
        assert LineGrammar(engine).parse(line)


@given(st.sampled_from(["[", "(", "INFO ", "[2025-01-01 00:00:00", "(A pid=1) "]), st.text())
def test_envelope_like_prefixes_never_raise(prefix: str, rest: str) -> None:
    LineGrammar().parse(prefix + rest)


@pytest.mark.parametrize(
    ("line", "stage"),
    [
        ("INFO 06-18 10:36:47 llm_engine.py:161] Initializing an LLM engine (v0.5.0.post1) with "
         "config: model='m'", Stage.ARGS),
        ("INFO 06-18 10:37:02 model_runner.py:160] Loading model weights took 13.97 GB",
         Stage.KV_CACHE),
        ("INFO 06-18 10:37:04 gpu_executor.py:83] # GPU blocks: 7288, # CPU blocks: 2048",
         Stage.KV_CACHE),
        ("INFO 06-18 10:37:05 model_runner.py:965] Capturing the model for CUDA graphs. This may "
         "lead to unexpected consequences if the model is not static.", Stage.CUDA_GRAPH),
        ("[2024-05-01 10:00:00 TP0] Init nccl begin.", Stage.DISTRIBUTED_INIT),
    ],
)  # fmt: skip
def test_old_wordings(line: str, stage: Stage) -> None:
    assert stage_of(line) is stage


def test_an_unknown_actor_prefix_is_a_wrapper() -> None:
    grammar = LineGrammar()
    assert (
        grammar.parse("(SGLangWorker pid=42) [2025-01-01 00:00:00 TP1] Init parallel begin.")[
            0
        ].rank
        == "TP1"
    )
    assert grammar.parse("(SGLangWorker pid=42)   File 'x.py', line 1")[0].rank is None
    assert failure_hit("Exception in ModelTpServer:") == FailureHit(None, True)


def test_every_milestone_is_kept_off_the_fast_path() -> None:
    for message in (
        "Init torch distributed begin.",
        "Load weight begin. avail mem=1 GB",
        "SWA KV Cache is allocated. #tokens: 5",
        "Using triton_attn as multimodal attention backend.",
        "The server is fired up and ready to roll!",
        "Scheduler hit an exception: Traceback (most recent call last):",
        "max_total_num_tokens=5, chunked_prefill_size=1",
    ):
        line = f"[2025-11-29 14:35:01 TP0] {message}"
        assert not is_boring(line, 26), message
    assert is_boring("[2025-11-29 14:35:01 TP0] Using default chat sampling params", 26)


def test_hostile_numbers_are_dropped_not_raised() -> None:
    huge = "9" * 5000
    decode = (
        "[2026-01-01 00:00:00 TP0] Decode batch, #running-req: 1e999, accept len: 1.2.3, "
        f"cuda graph: True, gen throughput (token/s): {huge}.5, #queue-req: nan, "
    )
    hit = next(h for h in parse(decode)[1] if isinstance(h, DecodeHit))
    assert hit == DecodeHit(None, None, None, None, None)
    assert parse_bar(f"Loading safetensors checkpoint shards: 5% Completed | {huge}/9") is None
    load = "[2026-01-01 00:00:00 TP0] Load weight begin. avail mem=1.2.3 GB"
    assert stage_of(load) is Stage.WEIGHT_LOADING
    assert (slot_value(f"{huge}, accept len: 2.5, "), slot_value("2.5, ")) == (None, 2.5)


@pytest.mark.parametrize(
    ("line", "rank"),
    [
        ("(RayWorkerWrapper pid=7, ip=10.0.0.2) INFO 06-25 15:28:30 worker_base.py:1] Hello",
         "RayWorkerWrapper pid=7 ip=10.0.0.2"),
        ("(RayWorkerProc pid=8) (Worker pid=8) INFO 08-14 11:58:02 [parallel_state.py:1] "
         "world_size=2 rank=1 local_rank=1 distributed_init_method=tcp://x backend=nccl",
         "Worker rank=1"),
        ("(my_task pid=3, ip=10.0.0.9) (EngineCore_DP0 pid=4) INFO 08-14 11:58:02 [core.py:1] x",
         "EngineCore_DP0"),
        ("(VllmWorkerProcess pid=456) INFO 08-14 11:58:02 multiproc_worker_utils.py:1] x",
         "VllmWorkerProcess pid=456"),
    ],
)  # fmt: skip
def test_ray_and_v0_worker_prefixes_name_each_process(line: str, rank: str) -> None:
    grammar = LineGrammar()
    assert grammar.parse(line)[-1].rank == rank
    assert grammar.engine == "vllm"


def test_a_nested_prefix_still_reads_the_milestone() -> None:
    line = (
        "(RayWorkerProc pid=8) (Worker pid=8) INFO 08-14 11:58:02 [parallel_state.py:1] "
        "world_size=2 rank=1 local_rank=1 distributed_init_method=tcp://x backend=nccl"
    )
    assert stage_of(line) is Stage.DISTRIBUTED_INIT


@pytest.mark.parametrize(
    "line",
    [
        "INFO 03-07 09:19:58 __init__.py:190] Automatically detected platform cuda.",
        "INFO 03-07 09:19:58 weight_utils.py:1] Using model weights format ['*.safetensors']",
        "WARNING 08-23 11:04:07 custom_all_reduce.py:118] Custom allreduce is disabled because "
        "it's not supported on more than two PCIe-only GPUs.",
        "INFO 08-23 11:04:07 pynccl.py:63] vLLM is using nccl==2.20.5",
    ],
)
def test_vllm_import_noise_does_not_decide_the_engine(line: str) -> None:
    grammar = LineGrammar()
    grammar.parse(line)
    assert grammar.engine == "unknown"
    grammar.parse("[2025-03-07 09:20:01 TP0] Init torch distributed begin.")
    assert grammar.engine == "sglang"


@pytest.mark.parametrize(
    "line",
    [
        "INFO 10-12 00:26:58 launcher.py:27] Route: /docs, Methods: HEAD, GET",
        "INFO 07-01 10:00:00 [api_server.py:1880] Available routes are:",
        "WARNING 07-01 10:00:00 [serving_chat.py:10] Default sampling parameters changed",
    ],
)
def test_a_line_of_vllm_s_own_server_decides_the_engine(line: str) -> None:
    grammar = LineGrammar()
    grammar.parse(line)
    assert grammar.engine == "vllm"
    assert grammar.parse("INFO:     Application startup complete.")[0].hits == (Marker.READY,)


def test_an_untagged_sglang_failure_decides_the_engine() -> None:
    grammar = LineGrammar()
    grammar.parse("[2025-12-14 07:09:52] Scheduler hit an exception: Traceback (most recent call")
    assert grammar.engine == "sglang"


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        ("h100-15:139:1092 [7] socket.c:485 NCCL WARN socketStartConnect: Connect to "
         "10.0.0.82<38455> failed : Software caused connection abort", FailureKind.NCCL),
        ("node:1:2 [0] misc.cc:1 NCCL WARN Call to ibv_reg_mr timed out", FailureKind.NCCL),
    ],
)  # fmt: skip
def test_nccl_warnings_of_a_broken_link_name_nccl(line: str, kind: FailureKind) -> None:
    assert failure_hit(line) == FailureHit(kind, False, evidence=True)


def test_harmless_nccl_warnings_are_not_failures() -> None:
    assert failure_hit("node:1:2 [0] NCCL WARN NET/IB : No device found.") is None


@pytest.mark.parametrize(
    ("line", "stage"),
    [
        ("(APIServer pid=1) INFO 08-01 10:00:00 [api_server.py:676] Supported tasks: "
         "['generate']", Stage.WARMUP),
        ("(EngineCore_DP0 pid=2) INFO 08-01 10:00:00 [core.py:1] init engine (profile, create "
         "kv cache, warmup model) took 25.99 seconds", Stage.WARMUP),
        ("(EngineCore_DP0 pid=2) INFO 08-01 10:00:00 [gpu_model_runner.py:1] Graph capturing "
         "finished in 12 secs, took 0.50 GiB", Stage.CUDA_GRAPH),
        ("[2025-02-26 12:01:56 TP3] sglang is using nccl==2.21.5", Stage.DISTRIBUTED_INIT),
        ("INFO 06-01 10:00:00 [config.py:793] This model supports multiple tasks: {'generate', "
         "'embed'}. Defaulting to 'generate'.", Stage.MODEL_CONFIG),
        ("[2026-01-01 00:00:00 TP0] Memory pool end. avail mem=9.91 GB", Stage.KV_CACHE),
        ("[2026-01-01 00:00:00 TP0] Init parallel ends. elapsed=3.21 s", Stage.DISTRIBUTED_INIT),
        ("[2026-01-01 00:00:00 TP0] Capture target decode CUDA graph end. bs=[1, 2], "
         "elapsed=21.40 s, mem usage=0.72 GB, avail mem=8.28 GB.", Stage.CUDA_GRAPH),
        ("[2025-05-01 10:08:11 TP0] Using model weights format ['*.safetensors']",
         Stage.WEIGHT_LOADING),
        ("[2025-02-11 18:41:41 TP15] Custom allreduce is disabled because this process group "
         "spans across nodes.", Stage.DISTRIBUTED_INIT),
        ("(Worker_TP1 pid=9) INFO 08-01 10:00:00 [pynccl.py:1] vLLM is using nccl==2.21.5",
         Stage.DISTRIBUTED_INIT),
        ("node-7:88008:88008 [2] NCCL INFO ncclCommInitRank comm 0xafd6da0 rank 10 nranks 16 "
         "cudaDev 2 nvmlDev 2 busId a2000 commId 0x898b6d578585998c - Init START",
         Stage.DISTRIBUTED_INIT),
    ],
)  # fmt: skip
def test_later_wordings_and_end_lines_name_their_stage(line: str, stage: Stage) -> None:
    assert stage_of(line) is stage


@pytest.mark.parametrize(
    "line",
    ["sglang-1  | " * 3000 + "x", "(task pid=1) " * 3000 + "x", "(RayWorker pid=1) " * 2000,
     "(Worker_TP0 pid=1) " * 2000 + "INFO 08-01 10:00:00 [x.py:1] y", "(a pid=1) a | " * 2000],
)  # fmt: skip
def test_thousands_of_stacked_prefixes_are_read_without_recursion(line: str) -> None:
    for engine in ("auto", "vllm", "sglang"):
        assert LineGrammar(engine).parse(line)


FRAGMENTS = [
    "sglang-1  | ", "2025-11-29T14:35:01.5Z ", "[pod/sglang-0/main] ", "Mar 08 08:22:22 h p[1]: ",
    "авг 18 14:15:04 h p[2]: ", "[2025-08-12T08:42:31Z] ", "INFO:sglang.srt:",
    "(RayWorkerWrapper pid=7, ip=10.0.0.2) ", "(Worker pid=3) ", "(Worker_TP0 pid=3) ",
    "(task pid=1) ", "[2025-11-29 14:35:01 TP3] ", "[2025-11-29 14:35:01.123 DP0 TP3 EP3] ",
    "[2025-11-29 14:35:01] ", "INFO 08-13 17:18:34 [x.py:1] ", "ERROR 08-13 17:18:34 x.py:1] ",
    "INFO:     ", "Loading safetensors checkpoint shards:  50% Completed | 1/2 [00:01<00:01]",
    "Traceback (most recent call last):", '  File "/x/sglang/srt/cuda_graph_runner.py", line 1, '
    "in capture", "Capture cuda graph end. ", "Decode batch, #running-req: 1, gen throughput "
    "(token/s): 5.0, ", "Prefill batch, #new-seq: 1", "[shutdown] ", "NCCL WARN Connect to x "
    "failed", "Free memory on device cuda:0 (1/2 GiB) on startup is less than desired GPU memory "
    "utilization", "server_args=ServerArgs(tp_size=2)", "The server is fired up and ready to roll!",
    "]", "(", " pid=", "[", "|", "\t", "TP9] ",
]  # fmt: skip


@settings(max_examples=300)
@given(st.lists(st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=8), max_size=12))
def test_lines_stacked_from_real_fragments_never_raise(lines: list[list[str]]) -> None:
    for engine in ("auto", "sglang", "vllm"):
        grammar = LineGrammar(engine)
        for fragments in lines:
            assert grammar.parse("".join(fragments))


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        ("ValueError: To serve at least one request with the models's max seq len (16384), (3.0 "
         "GiB KV cache is needed, which is larger than the available KV cache memory (1.87 GiB).",
         FailureKind.OOM),
        ("ValueError: Free memory on device cuda:0 (54.34/79.18 GiB) on startup is less than "
         "desired GPU memory utilization (0.92, 72.84 GiB). Decrease GPU memory utilization or "
         "reduce GPU memory used by other processes.", FailureKind.OOM),
        ("KeyboardInterrupt: terminated", FailureKind.KILLED),
        ("KeyboardInterrupt: MQLLMEngine terminated", FailureKind.KILLED),
        ("[2025-05-26 18:58:10,599 E 629624 629624] logging.cc:496: *** SIGTERM received at "
         "time=1748300290 on cpu 8 ***", FailureKind.KILLED),
    ],
)  # fmt: skip
def test_more_causes_are_named(line: str, kind: FailureKind) -> None:
    hit = failure_hit(line)
    assert hit is not None
    assert hit.kind is kind


def test_a_log_collectors_time_column_is_a_wrapper() -> None:
    line = "2026-04-19 12:58:51.742 | (APIServer pid=1) INFO 04-19 12:58:51 [x.py:1] hello"
    assert unwrap(line)[1] == "(APIServer pid=1) INFO 04-19 12:58:51 [x.py:1] hello"
    assert LineGrammar().parse(line)[-1].rank == "APIServer"


def test_a_single_gpu_vlm_builds_its_model_in_the_main_process() -> None:
    """At TP=1 the scheduler's lines carry no tag: its multimodal note is the model config."""
    line = "[2026-01-01 00:00:00] Using triton_attn as multimodal attention backend."
    assert parse(line)[0] == "main"
    assert stage_of(line) is Stage.MODEL_CONFIG
    assert stage_of("[2026-01-01 00:00:00] Attention backend not set. Use fa3.") is Stage.ARGS
