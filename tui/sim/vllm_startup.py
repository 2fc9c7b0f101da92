"""vLLM's start-up as a pure schedule, in its own log layout and process names.

Lines look like ``(Worker_TP0 pid=N) INFO 11-29 14:35:01 [file.py:line] msg``. Most
milestones are printed once by local rank 0, the API server prints the routes, and uvicorn's
``Application startup complete.`` is the ready line. Wording follows vLLM 0.33.
"""

from __future__ import annotations

from tui.sim.config import VLLM_VERSION, SimConfig
from tui.sim.layout import Rank, failing_rank, ranks_for
from tui.sim.logfmt import graph_bar, shard_bar
from tui.sim.serverargs import vllm_non_default_args, vllm_speculative_config
from tui.sim.sglang_startup import PACE
from tui.sim.sim_model import CONTEXT_GB, GPU_TOTAL_GB, facts_for, plan_memory
from tui.sim.timeline import (
    Bind,
    Exit,
    Gpu,
    Raw,
    Ready,
    Script,
    Spawn,
    StartupTimes,
    Timeline,
)
from tui.sim.vllm_failures import engine_core_failed, init_failed, worker_failed

ROUTES = (
    "/openapi.json",
    "/docs",
    "/health",
    "/load",
    "/ping",
    "/version",
    "/metrics",
    "/v1/models",
    "/v1/completions",
    "/v1/chat/completions",
)


def build_vllm(config: SimConfig) -> Timeline:
    """vLLM's start-up on this node as a pure schedule."""
    ranks = ranks_for(config)
    script = Script()
    core = "EngineCore_DP0"
    _launch(script, config, ranks, core)
    lead = ranks[0].tag
    at = _load(script, config, ranks, lead, 6.0)
    facts, mem = facts_for(config), plan_memory(config, facts_for(config))
    if config.scenario == "rank-crash":
        bad = failing_rank(config, ranks)
        at = 6.0 + 0.35 * PACE.load
        script.cut(at)
        _fail(script, at, config, bad.tag if config.tp_size > 1 else None, core)
        return script.timeline(StartupTimes(), ready=False)
    at = _compile(script, lead, at, config.time_scale)
    if config.scenario == "oom-kv-cache" or mem.kv_gb < 0.5:
        script.cut(at)
        _fail(script, at + 1.0, config, None, core)
        return script.timeline(StartupTimes(), ready=False)
    scale = config.time_scale
    script.log(at, lead, f"Available KV cache memory: {mem.kv_gb:.2f} GiB", src="gpu_worker.py:424")
    script.log(
        at + 0.1, core, f"GPU KV cache size: {mem.kv_tokens:,} tokens", src="kv_cache_utils.py:1314"
    )
    script.log(
        at + 0.1,
        core,
        f"Maximum concurrency for {facts.context_len:,} tokens per "
        f"request: {mem.kv_tokens / facts.context_len:.2f}x",
        src="kv_cache_utils.py:1319",
    )
    script.add(at + 0.1, Gpu(None, GPU_TOTAL_GB - mem.after_kv, 0))
    at = _graphs(script, config, lead, at + 0.5)
    script.log(
        at + 0.3,
        core,
        "init engine (profile, create kv cache, warmup model) took "
        f"{(at - 6.0) * scale:.2f} seconds",
        src="core.py:282",
    )
    _api_up(script, config, at + 1.0)
    return script.timeline(StartupTimes(load_weight=PACE.load * scale), ready=True)


def _launch(script: Script, config: SimConfig, ranks: tuple[Rank, ...], core: str) -> None:
    model = config.model_path
    script.log(
        0.0,
        None,
        f"vLLM server version {VLLM_VERSION}, serving model {model}",
        src="api_server.py:1792",
    )
    script.log(0.01, None, f"non-default args: {vllm_non_default_args(config)}", src="utils.py:238")
    script.add(0.1, Bind())
    facts = facts_for(config)
    script.log(0.8, None, f"Resolved architecture: {facts.architecture}", src="model.py:531")
    script.log(0.8, None, f"Using max model len {facts.context_len}", src="model.py:1554")
    script.log(
        0.9,
        None,
        "Chunked prefill is enabled with max_num_batched_tokens=8192.",
        src="scheduler.py:231",
    )
    children: list[tuple[str, str | None]] = [(rank.tag, rank.tag) for rank in ranks]
    if config.tp_size > 1:
        children.append((core, core))
    script.add(1.5, Spawn(tuple(children)))
    spec = vllm_speculative_config(config) if config.speculative else None
    script.log(
        4.0,
        core,
        f"Initializing a V1 LLM engine (v{VLLM_VERSION}) with config: "
        f"model='{model}', speculative_config={spec}, tokenizer='{model}', "
        f"tensor_parallel_size={config.tp_size}, pipeline_parallel_size=1, "
        f"data_parallel_size={config.dp_size}, served_model_name={config.model_name}",
        src="core.py:101",
    )
    world = len(ranks)
    for rank in ranks:
        shown = "Worker" if config.tp_size > 1 else None
        script.log(
            5.0 + 0.05 * rank.local,
            rank.tag,
            f"world_size={world} rank={rank.local} "
            f"local_rank={rank.local} distributed_init_method=tcp://127.0.0.1:29500 "
            "backend=nccl",
            src="parallel_state.py:1393",
            shown=shown,
        )
        script.add(5.0, Gpu(rank.local, CONTEXT_GB, 0))
    script.log(
        5.6,
        ranks[0].tag,
        f"rank 0 in world size {world} is assigned as DP rank 0, PP "
        "rank 0, PCP rank 0, TP rank 0, EP rank N/A, EPLB rank N/A",
        src="parallel_state.py:1715",
    )


def _load(
    script: Script, config: SimConfig, ranks: tuple[Rank, ...], lead: str, start: float
) -> float:
    facts = facts_for(config)
    scale = config.time_scale
    script.log(
        start,
        lead,
        f"Starting to load model {config.model_path}...",
        src="gpu_model_runner.py:4255",
    )
    at = _bar_lines(script, config, lead, start, PACE.load, facts.shards, facts.weight_gb, 0.0)
    script.log(
        at,
        lead,
        f"Loading weights took {PACE.load * scale:.2f} seconds",
        src="default_loader.py:293",
    )
    total, took = facts.weight_gb, PACE.load
    if config.speculative and facts.draft_architecture:
        script.log(at, lead, "Loading drafter model...", src="gpu_model_runner.py:4287")
        at = _bar_lines(script, config, lead, at, PACE.draft_load, 1, facts.draft_gb, total)
        script.log(
            at,
            lead,
            f"Loading weights took {PACE.draft_load * scale:.2f} seconds",
            src="default_loader.py:293",
        )
        total += facts.draft_gb
        took += PACE.draft_load
    script.log(
        at + 0.1,
        lead,
        f"Model loading took {total:.2f} GiB memory and {took * scale:.6f} seconds",
        src="gpu_model_runner.py:4338",
    )
    return at + 0.5


def _bar_lines(
    script: Script,
    config: SimConfig,
    lead: str,
    start: float,
    pace: float,
    total: int,
    size_gb: float,
    before_gb: float,
) -> float:
    """vLLM's shard bar ends each redraw with a newline (one prefixed line per update)."""
    desc = "Loading safetensors checkpoint shards"
    for n in range(total + 1):
        at = start + pace * n / total
        text = shard_bar(desc, n, total, pace * n / total * config.time_scale)
        script.add(at, Raw(f"\r{text}\n", lead))
        script.add(at, Gpu(None, CONTEXT_GB + before_gb + size_gb * n / total, 0))
    script.add(start + pace, Raw("\n", lead))
    return start + pace + 0.05


def _compile(script: Script, lead: str, start: float, scale: float) -> float:
    """torch.compile: Dynamo tracing, then the graph compile (vLLM's optional stage)."""
    dynamo, compiled = 16.5, 12.9
    script.log(
        start + dynamo,
        lead,
        f"Dynamo bytecode transform time: {dynamo * scale:.2f} s",
        src="backends.py:976",
    )
    script.log(
        start + dynamo + compiled,
        lead,
        f"Compiling a graph for compile range (1, 8192) takes {compiled * scale:.2f} s",
        src="backends.py:366",
    )
    script.log(
        start + dynamo + compiled + 0.1,
        lead,
        f"torch.compile takes {(dynamo + compiled + 0.1) * scale:.2f} s in total",
        src="monitor.py:35",
    )
    return start + dynamo + compiled + 5.0


def _graphs(script: Script, config: SimConfig, lead: str, start: float) -> float:
    at = start
    for kind, total, pace in (
        ("mixed prefill-decode, PIECEWISE", 67, 9.0),
        ("decode, FULL", 35, 6.0),
    ):
        desc = f"Capturing CUDA graphs ({kind})"
        for n in range(total + 1):
            when = at + pace * n / total
            text = graph_bar(desc, n, total, pace * n / total * config.time_scale)
            script.add(when, Raw("\r" + text + ("\n" if n == total else ""), lead))
        at += pace + 0.1
    took = (at - start) * config.time_scale
    script.log(
        at,
        lead,
        f"Graph capturing finished in {max(int(took), 0)} secs, took 0.49 GiB",
        src="gpu_model_runner.py:5360",
    )
    return at


def _api_up(script: Script, config: SimConfig, at: float) -> None:
    script.log(at, None, "Supported tasks: ['generate']", src="api_server.py:495")
    url = f"http://{config.host}:{config.port}"
    script.log(at + 0.2, None, f"Starting vLLM server on {url}", src="api_server.py:500")
    script.log(at + 0.2, None, "Available routes are:", src="launcher.py:38")
    for route in ROUTES:
        method = (
            "POST"
            if route.startswith("/v1/c")
            else "HEAD, GET"
            if route.startswith("/docs") or route == "/openapi.json"
            else "GET"
        )
        script.log(at + 0.2, None, f"Route: {route}, Methods: {method}", src="launcher.py:47")
    script.add(at + 0.3, Ready())


def _fail(script: Script, at: float, config: SimConfig, worker: str | None, core: str) -> None:
    if worker is not None:
        script.log(at, worker, worker_failed(), "ERROR", src="multiproc_executor.py:1057")
        reason = "worker"
    else:
        reason = "gpu" if config.scenario == "rank-crash" else "kv"
    script.log(at + 0.05, core, engine_core_failed(reason), "ERROR", src="core.py:1582")
    script.add(at + 0.1, Raw(init_failed(core) + "\n", "APIServer"))
    script.add(at + 0.15, Exit(1))
