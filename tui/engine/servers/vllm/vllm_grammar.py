"""vLLM's log grammar: ``(Proc pid=N) LEVEL MM-DD HH:MM:SS [file.py:N] message``.

The process prefix names the rank (``APIServer``, ``EngineCore_DP0``, ``Worker_TP3``, older
``VllmWorker rank=3``); old API servers and offline engines print no prefix at all. uvicorn's
own lines carry the prefix but no level or time. Most milestones are printed by local rank 0
only, so per-rank stages are coarser than SGLang's.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

from tui.engine.servers.common_patterns import parse_access, to_float, uvicorn_hits, whole
from tui.engine.servers.hits import (
    DecodeHit,
    Hit,
    Marker,
    MemoryHit,
    SpecHit,
    StageHit,
    StopHit,
    VersionHit,
)
from tui.engine.servers.jit_phases import phase_hit
from tui.engine.servers.library_lines import library_hits
from tui.engine.servers.server_args import vllm_args
from tui.engine.startup.vocabulary import Stage

NAME = "vllm"
"""How configs, logs and the user name the engine."""
PREFIX = re.compile(r"\((?P<proc>[^()]*?) pid=(?P<pid>\d+)(?:, ip=(?P<ip>[^()\s]+))?\) ?")
"""A process prefix; Ray adds the node's address (``(RayWorkerWrapper pid=7, ip=10.0.0.2)``)."""
# ``[file.py:12]`` since 0.6; before that ``file.py:12]`` without the opening bracket.
ENVELOPE = re.compile(
    r"(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) (?P<ts>\d\d-\d\d \d\d:\d\d:\d\d)(?:\.\d+)? "
    r"(?:\[[^\]]*\]|[\w.-]+:\d+\]) ?"
)
_SERVER_SOURCE = re.compile(
    r"[\[ ](?:api_server|launcher|serving_\w+|llm_engine|async_llm_engine|async_llm|core|"
    r"core_client|gpu_model_runner|model_runner|gpu_worker|worker|multiproc_executor|"
    r"ray_distributed_executor|ray_utils|loggers|metrics)\.py:"
)
"""Modules of vLLM's server and engine. Other engines import vLLM, and its import-time lines
(``__init__.py``'s platform line, ``weight_utils.py``) start many SGLang logs."""
_VERSION = re.compile(r"vLLM (?:API )?server version (\S+)|[█▄▀].*\bversion (\d\S*)")
_ENGINE = re.compile(r"Initializing an? (?:V1 )?LLM engine \(v([^)]+)\)")


_SHARED_NAMES = re.compile(r"Ray|VllmWorkerProcess$|Worker$")
"""Process names that several ranks share (Ray actors, V0 workers): their pid tells them
apart, and on several nodes their address too."""


@lru_cache(maxsize=256)
def shared_name(proc: str) -> bool:
    """True for a process name several ranks share (its pid tells them apart)."""
    return _SHARED_NAMES.match(proc) is not None


def rank_of(prefix: re.Match[str]) -> str:
    """The rank tag for a ``PREFIX`` match: the process name, and the pid (and the node's
    address) when ranks share the name."""
    proc: str = prefix["proc"]
    if not shared_name(proc):
        return proc
    pid, ip = prefix["pid"], prefix["ip"]
    return f"{proc} pid={pid}" if ip is None else f"{proc} pid={pid} ip={ip}"


_LIBRARY = re.compile(r"Custom allreduce is disabled|vLLM is using nccl==|Found nccl from library")
"""Messages of vLLM's distributed code, which SGLang (0.2 to 0.3) used and logged as its own."""


def library_message(msg: str) -> bool:
    """True for a message other engines print through vLLM's code (it names no engine)."""
    return _LIBRARY.match(msg) is not None


def server_source(envelope: str) -> bool:
    """True when a line's envelope names a module of vLLM's server or engine."""
    return _SERVER_SOURCE.search(envelope) is not None


def _number(text: str, key: str) -> float | None:
    start = text.find(key)
    if start < 0:
        return None
    start += len(key)
    end = start
    while end < len(text) and (text[end].isdigit() or text[end] == "."):
        end += 1
    return to_float(text[start:end])


def decode_hit(msg: str) -> DecodeHit:
    """The periodic stats line (``Engine 000: Avg prompt throughput: ...``)."""
    running = _number(msg, "Running: ")
    waiting = _number(msg, "Waiting: ")
    return DecodeHit(
        _number(msg, "Avg generation throughput: "),
        running=whole(running),
        queued=whole(waiting),
    )


def spec_hit(msg: str) -> SpecHit:
    """The speculative-decoding line; the mean acceptance length includes the bonus token."""
    rate = _number(msg, "Avg Draft acceptance rate: ")
    if rate is not None:
        rate /= 100.0
    else:
        rate = _number(msg, "Draft acceptance rate: ")
    return SpecHit(_number(msg, "Mean acceptance length: "), rate)


def _version(msg: str, match: re.Match[str]) -> tuple[Hit, ...]:
    return (
        VersionHit(NAME, match[1] or match[2]),
        Marker.RUN_STARTED,
        StageHit(Stage.ARGS, "args"),
    )


def _engine(msg: str, match: re.Match[str]) -> tuple[Hit, ...]:
    return (VersionHit(NAME, match[1]), StageHit(Stage.ARGS, "engine"), vllm_args(msg))


def _figure(pattern: str) -> Callable[[str], float | None]:
    compiled = re.compile(pattern)

    def value(msg: str) -> float | None:
        match = compiled.search(msg)
        return to_float(match[1].replace(",", "")) if match else None

    return value


def _loaded(msg: str) -> MemoryHit:
    return MemoryHit(used_gb=_LOADED(msg))


def _kv_memory(msg: str) -> MemoryHit:
    return MemoryHit(avail_gb=_KV_MEMORY(msg))


def _kv_size(msg: str) -> MemoryHit:
    tokens = _KV_SIZE(msg)
    return MemoryHit(kv_tokens=whole(tokens))


_LOADED = _figure(r"(?:Model loading|Loading model weights) took ([\d.]+) Gi?B")
_KV_MEMORY = _figure(r"Available KV cache memory: ([\d.]+) GiB")
_KV_SIZE = _figure(r"KV cache size: ([\d,]+) tokens")


def _stage(stage: Stage, key: str, draft: bool | None = None) -> Callable[..., tuple[Hit, ...]]:
    return lambda _msg, _match: (StageHit(stage, key, False, draft),)


def _compile(msg: str, _match: re.Match[str]) -> tuple[Hit, ...]:
    """torch.compile runs inside the memory profiling (``profile_run``): the KV-cache stage."""
    stage = StageHit(Stage.KV_CACHE, "compile")
    phase = phase_hit(msg)
    return (stage,) if phase is None else (stage, phase)


_Rule = tuple[re.Pattern[str], Callable[[str, re.Match[str]], tuple[Hit, ...]]]
_RULES: tuple[_Rule, ...] = tuple(
    (re.compile(pattern), handler)
    for pattern, handler in (
        (r"non-default args: ", lambda msg, _m: (Marker.RUN_STARTED,
                                                 StageHit(Stage.ARGS, "args"), vllm_args(msg))),
        (_ENGINE.pattern, _engine),
        (r"Resolved architecture: |Using max model len |This model supports multiple tasks",
         _stage(Stage.MODEL_CONFIG, "arch")),
        (r"world_size=\d+ rank=\d+|rank \d+ in world size \d+ is assigned|"
         r"vLLM is using nccl==|Custom allreduce is disabled",
         _stage(Stage.DISTRIBUTED_INIT, "dist")),
        (r"Starting to load model", _stage(Stage.WEIGHT_LOADING, "load")),
        (r"Loading drafter model", _stage(Stage.WEIGHT_LOADING, "drafter", True)),
        (r"Model loading took|Loading model weights took",
         lambda msg, _m: (StageHit(Stage.KV_CACHE, "profile"), _loaded(msg))),
        (r"# GPU blocks: \d+|Memory profiling (?:takes|results)",
         _stage(Stage.KV_CACHE, "kv")),
        (r"Capturing the model for CUDA graphs|Capturing cudagraphs|Graph capturing finished",
         _stage(Stage.CUDA_GRAPH, "graph")),
        (r"init engine \(profile, create kv cache, warmup model\) took",
         _stage(Stage.WARMUP, "engine")),
        (r"Dynamo bytecode transform time|torch\.compile (?:takes|took)|Compiling a graph for|"
         r"Memory profiling takes|Initial profiling/warmup run|Directly load the compiled graph|"
         r"Using cache directory: .* for vLLM's torch\.compile", _compile),
        (r"Available KV cache memory",
         lambda msg, _m: (StageHit(Stage.KV_CACHE, "kv"), _kv_memory(msg))),
        (r"(?:\w+ )*KV cache size: ",
         lambda msg, _m: (StageHit(Stage.KV_CACHE, "kv"), _kv_size(msg))),
        (r"Supported[_ ]?tasks|Starting vLLM (?:API )?server|Warming up chat template|"
         r"Chat template warmup|(?:Readonly )?[Mm]ulti-modal warmup|Available routes are",
         _stage(Stage.WARMUP, "api")),
        (r"vLLM API server is ready", lambda _msg, _m: (Marker.READY,)),
        (r"(?:Engine \d+|\d+ Engines Aggregated): Avg prompt throughput|Avg prompt throughput",
         lambda msg, _m: (decode_hit(msg),)),
        (r"SpecDecoding metrics: |Speculative metrics: ", lambda msg, _m: (spec_hit(msg),)),
        (r"Shutting down FastAPI HTTP server",
         lambda _msg, _m: (StopHit("Shutting down FastAPI HTTP server"),)),
        (r"\[shutdown\] ", lambda msg, _m: (StopHit(msg[11:].strip()),)),
    )
)  # fmt: skip


def message_hits(msg: str) -> tuple[Hit, ...]:
    """What a vLLM message (the text after the envelope) means, if anything."""
    if msg[:5] in ("INFO:", "WARNI", "ERROR", "DEBUG"):
        request = parse_access(msg)
        if request is not None:
            return (request,)
        lifecycle = uvicorn_hits(msg, ready_on_startup=True)
        if lifecycle is not None:
            return lifecycle
    for pattern, handler in _RULES:
        match = pattern.match(msg)
        if match is not None:
            return handler(msg, match)
    version = _VERSION.search(msg)
    if version is not None:
        return _version(msg, version)
    return library_hits(msg)  # a library's line under vLLM's prefix (FlashInfer's autotuner)
