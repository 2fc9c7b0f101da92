"""Patterns both engines share: progress bars, uvicorn lines, failures, timestamps.

Rules are written from the engines' format strings and from what the messages mean (see the
project's engine reference), not from particular log files.
"""

from __future__ import annotations

import math
import re
from datetime import date

from tui.engine.servers.hits import (
    FailureHit,
    Hit,
    Marker,
    ProgressHit,
    RequestHit,
    StageHit,
    StopHit,
)
from tui.engine.startup.vocabulary import FailureKind, Phase, Stage

# ---------------------------------------------------------------------------- numbers


def to_float(text: str) -> float | None:
    """A finite number from log text, or None (hostile text may say ``1.2.3`` or ``1e999``)."""
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def to_int(text: str) -> int | None:
    """A count from log text, or None when it is not a plausible one (over 18 digits)."""
    if not text.isdigit() or len(text) > 18:
        return None
    return int(text)


def whole(value: float | None) -> int | None:
    """A finite float as an int, or None."""
    return None if value is None or abs(value) > 1e18 else int(value)


# ---------------------------------------------------------------------------- progress bars

# SGLang's bar format ``desc: 45% Completed | 9/20 [..]`` and tqdm's default
# ``desc: 45%|████      | 9/20 [..]``; the description may be missing.
_TQDM = re.compile(
    r"\s*(?:(?P<desc>[^\r\n]*?):\s*)?(?P<pct>\d{1,3})%(?: Completed \||\|[^|]*\|)\s*"
    r"(?P<done>\d+)/(?P<total>\d+)"
)
_WEIGHT_BARS = ("checkpoint shards", "loading shards", "Loading safetensors", "Loading pt ")
_GRAPH_BARS = ("Capturing batches", "Capturing prefill shape", "Capturing CUDA graph")


def parse_bar(text: str) -> ProgressHit | None:
    """A progress bar of a known start-up step, or None."""
    match = _TQDM.match(text)
    if match is None:
        return None
    desc = match["desc"] or ""
    phase = None
    if any(word in desc for word in _WEIGHT_BARS):
        stage = Stage.WEIGHT_LOADING
    elif any(word in desc for word in _GRAPH_BARS):
        stage = Stage.CUDA_GRAPH
    else:  # a compile, JIT or autotune bar: inside whatever stage runs it
        phase = next((phase for word, phase in _PHASE_BARS if word in desc), None)
        if phase is None:
            return None
        stage = Stage.PROCESS_START
    done, total = to_int(match["done"]), to_int(match["total"])
    if done is None or total is None:
        return None
    return ProgressHit(stage, done, total, desc.strip(), phase)


_PHASE_BARS = (
    # sglang/srt/layers/deep_gemm_wrapper/compile_utils.py: tqdm(desc="DeepGEMM warmup")
    ("DeepGEMM", Phase.DEEPGEMM_JIT),
    # sglang/srt/model_executor/piecewise_cuda_graph_runner.py:
    # set_description(f"Compiling num tokens ({num_tokens=})"), one torch.compile per size
    ("Compiling num tokens", Phase.TORCH_COMPILE),
    # flashinfer/autotuner.py: tqdm(desc=f"[AutoTuner]: Tuning {custom_op}", unit="profile")
    ("[AutoTuner]: Tuning", Phase.FLASHINFER_AUTOTUNE),
)


def bar_hits(bar: ProgressHit) -> tuple[Hit, ...]:
    """A bar is evidence that its step has begun even when no begin line was logged (a
    phase's bar moves the phase, not the stage)."""
    if bar.phase is not None:
        return (bar,)
    return (StageHit(bar.stage, "bar:" + bar.stage.value), bar)


# ---------------------------------------------------------------------------- uvicorn lines

_ACCESS = re.compile(
    r"(?:DEBUG|INFO|WARNING|ERROR|CRITICAL):\s+\S+ - \"(?P<method>[A-Z]+) (?P<path>\S+) "
    r"HTTP/[\d.]+\" (?P<status>\d{3})"
)
_LIFECYCLE = re.compile(
    r"INFO:\s+(?:Started server process|Waiting for application startup|"
    r"Application startup complete|Uvicorn running on|Started parent process)"
)
_SHUTDOWN = re.compile(
    r"INFO:\s+(?P<what>Shutting down|Waiting for application shutdown|"
    r"Application shutdown complete|Finished server process)"
)
GENERATION_PATHS = (
    "/generate",
    "/v1/chat/completions",
    "/v1/completions",
    "/v1/embeddings",
    "/v1/responses",
    "/v1/messages",
    "/v1/rerank",
    "/v1/score",
    "/encode",
    "/classify",
    "/pooling",
    "/invocations",
)


def parse_access(msg: str) -> RequestHit | None:
    """An HTTP access line (``INFO:     127.0.0.1:5 - "GET /health HTTP/1.1" 200 OK``)."""
    match = _ACCESS.match(msg)
    if match is None:
        return None
    return RequestHit(match["method"], match["path"], int(match["status"]))


def is_generation(request: RequestHit) -> bool:
    """True for a request that makes the server generate (or embed) for a client."""
    return request.method == "POST" and request.path.startswith(GENERATION_PATHS)


def uvicorn_hits(msg: str, ready_on_startup: bool) -> tuple[Hit, ...] | None:
    """uvicorn's lifecycle lines. For vLLM ``Application startup complete.`` means ready."""
    if _LIFECYCLE.match(msg):
        if ready_on_startup and "Application startup complete" in msg:
            return (Marker.READY,)
        return (StageHit(Stage.WARMUP, "http"),)
    stop = _SHUTDOWN.match(msg)
    if stop is not None:
        return (StopHit(stop["what"]),)
    return None


# ---------------------------------------------------------------------------- failures

STARTUP_TIMEOUTS = (
    r"Timed out waiting for engines? (?:core processes )?to |VLLM_ENGINE_READY_TIMEOUT_S|"
    r"warmup error: .*(?:[Tt]imed? ?out|Timeout)|"
    r"Timeout \d+s waiting for workers? .*to become healthy|RendezvousTimeoutError"
)
"""A start-up that gave up waiting on a limit the user can raise (``startup_timeouts``
names it)."""

# The process is going down: these end a start.
_HARD: tuple[tuple[re.Pattern[str], FailureKind | None], ...] = tuple(
    (re.compile(pattern), kind)
    for pattern, kind in (
        (r"scheduler died during initialization \(exit code: -9\)", FailureKind.KILLED),
        # a soft watchdog (``self.soft=True``) only dumps the stacks: a sign, not the end
        (
            r"[Ww]atchdog timeout(?!.*soft=True)|[Ww]atchdog caught collective operation timeout",
            None,
        ),
        (r"error while attempting to bind on address|[Aa]ddress already in use", None),
        (r"is not available in \d+ seconds|^Port is already in use", FailureKind.PORT_IN_USE),
        (r"^Killed$|\b\d+ Killed +\S", FailureKind.KILLED),
        (r"Timeout \d+s waiting for workers? .*to become healthy", FailureKind.STARTUP_TIMEOUT),
        (
            r"hit an exception|Received sigquit from a child|SIGQUIT received|"
            r"scheduler died during initialization|Initialization failed\.|"
            r"crashed with exit code|terminated with -?[1-9]\d*$|"
            r"terminate called after throwing|Fatal Python error|"
            r"EngineCore failed to start|[Ee]ngine core initialization failed|"
            r"WorkerProc (?:failed to start|hit an exception)|"
            r"EngineCore encountered a fatal error|EngineDeadError|"
            r"(?:MQLLMEngine|[Ee]ngine) is already dead, terminating|"
            r"Got fatal signal from worker processes|taking the entire process down|"
            r"Exception in ModelTpServer|^Memory access fault by GPU node-\d+|"
            r"Caught signal 11 \(Segmentation fault|\*\*\* SIGSEGV received at time=",
            None,
        ),
    )
)
# Text that names a cause. In priority order: when one line names two, the first wins.
_CAUSES: tuple[tuple[re.Pattern[str], FailureKind], ...] = tuple(
    (re.compile(pattern), kind)
    for pattern, kind in (
        (
            r"OutOfMemoryError|(?:CUDA|HIP|NPU|XPU|MUSA|GPU|[Dd]evice) out of memory|"
            r"out of memory\. Tried to allocate|Not enough memory\. Please try to increase|"
            r"not enough GPU memory|No available memory for the cache blocks|"
            r"\[Errno 12\] Cannot allocate memory|Ran out of memory in memory space|"
            r"runs out of memory|(?:Prefill|Decode) out of memory(?! happened)|"
            r"Free memory on device .* is less than desired GPU memory utilization|"
            r"larger than the available KV cache memory",
            FailureKind.OOM,
        ),
        (
            r"NCCL [Ee]rror|nccl\w*Error\b|DistBackendError|NCCL communicator was aborted|"
            r"[Ww]atchdog caught collective operation timeout|HCCL (?:error|timeout)|"
            r"DistStoreError|DistNetworkError|TCPStore\b.*[Tt]imed out|"
            r"NCCL WARN .*(?:Connect to .* failed|[Ee]rror|[Tt]imed? ?out|[Aa]bort)",
            FailureKind.NCCL,
        ),
        (
            r"error while attempting to bind on address|[Aa]ddress already in use|"
            r"port \d+ is in use|is already in use",
            FailureKind.PORT_IN_USE,
        ),
        (
            r"Cannot find any model weights|is not a valid model identifier|"
            r"does not appear to have a file named (?!generation_config)|"
            r"RepositoryNotFoundError|Repository Not Found|LocalEntryNotFoundError|"
            r"Invalid repository ID or local directory|HFValidationError|"
            r"No such file or directory: \S*(?:config\.json|\.safetensors|\.bin)|"
            r"Can't load (?:the )?(?:configuration|config|tokenizer) for|"
            r"GatedRepoError|[Aa]ccess to model \S+ is restricted|No supported config format found|"
            r"40[13] Client Error: [\w ]+ for url: https://huggingface\.co/",
            FailureKind.WEIGHTS_MISSING,
        ),
        (
            r"Capture (?:cuda|CUDA|npu|NPU|cpu) graph failed|[Gg]raph capture failed|"
            r"cudaErrorStreamCapture|operation not permitted when stream is capturing",
            FailureKind.CUDA_GRAPH,
        ),
        (STARTUP_TIMEOUTS, FailureKind.STARTUP_TIMEOUT),
        (
            r"[Ww]atchdog timeout|shared memory broadcast block|"
            r"No available shared memory broadcast",
            FailureKind.HANG,
        ),
        (
            r"exited with code (?:-9|137)\b|exit code: -9\b|exit status 137\b|"
            r"KeyboardInterrupt: (?:\w+ )?terminated|^KeyboardInterrupt\s*$|"
            r"\*\*\* SIGTERM received at time=",
            FailureKind.KILLED,
        ),
    )
)
_WEAK = re.compile(r"shared memory broadcast block|No available shared memory broadcast")
"""Causes that an exception after them overrides (see ``FailureHit.weak``)."""
_ANY = re.compile(
    "|".join(
        [pattern.pattern for pattern, _ in _HARD]
        + [pattern.pattern for pattern, _ in _CAUSES]
        + [r"Traceback \(most recent call last\)"]
    )
)
_EXCEPTION = re.compile(
    r"(?:[\w.]+\.)?[A-Z]\w*(?:Error|Exception|Exit|Interrupt)(?::|$)|\s*what\(\):|"
    r"(?:[a-z_]\w*\.)+[A-Z]\w*: "  # any class a module names (``triton.runtime.errors.X: ...``)
)


# Every failure pattern above contains one of these words; checking them first is far cheaper
# than the full patterns, and almost every line contains none.
_KEYWORDS = (
    "rror", "xception", "raceback", "emory", "NCCL", "nccl", "HCCL", "atchdog", "igquit",
    "IGQUIT", "died", "ailed", "crashed", "terminat", "Fatal", "Killed", "in use", "weights",
    "identifier", "file named", "epositor", "TCPStore", "broadcast", "exit code",
    "exit status", "exited with", "not available", "taking the entire", "Can't load", "fatal",
    "No such file", "stream is capturing", "SIGTERM received at", "restricted",
    "KeyboardInterrupt", "Segmentation", "SIGSEGV", "imed out", "become healthy",
    "Rendezvous", "TIMEOUT_S",
)  # fmt: skip


def maybe_failure(text: str) -> bool:
    """False when ``text`` cannot hold a failure signature (a cheap first test)."""
    for keyword in _KEYWORDS:  # noqa: SIM110 - a plain loop is faster than any() here
        if keyword in text:
            return True
    return False


def failure_hit(msg: str) -> FailureHit | None:
    """The failure signature in ``msg``, or None."""
    if not maybe_failure(msg) or _ANY.search(msg) is None:
        return None
    cause = next((kind for pattern, kind in _CAUSES if pattern.search(msg)), None)
    for pattern, kind in _HARD:
        if pattern.search(msg):
            return FailureHit(kind or cause, True)
    if cause is not None:
        return FailureHit(cause, False, evidence=True, weak=_WEAK.search(msg) is not None)
    return FailureHit(None, False)


_CAPTURE_FRAME = re.compile(r'File "[^"]*graph[^"]*", line \d+, in \w*capture')
"""A traceback frame inside a graph runner's capture (``cuda_graph_runner.py ... in
capture``): a failure whose exception names no cause failed to capture graphs."""


_FRAME_FUNCTION = re.compile(r'\s*File "[^"]*", line \d+, in (\w+)')
_FRAME_STAGES = {
    **dict.fromkeys(
        ("init_torch_distributed", "init_distributed_environment", "initialize_model_parallel",
         "init_model_parallel_group", "ensure_model_parallel_initialized",
         "init_worker_distributed_environment"),
        Stage.DISTRIBUTED_INIT,
    ),
    **dict.fromkeys(("load_model", "load_weights"), Stage.WEIGHT_LOADING),
    **dict.fromkeys(
        ("init_memory_pool", "profile_max_num_token", "profile_run",
         "determine_available_memory", "determine_num_available_blocks", "initialize_kv_cache"),
        Stage.KV_CACHE,
    ),
    **dict.fromkeys(
        ("init_cuda_graphs", "init_all_cuda_graphs", "capture_model", "capture_one_batch_size"),
        Stage.CUDA_GRAPH,
    ),
}  # fmt: skip
"""Functions of the engines' start-up whose frame in a traceback shows the stage it failed in."""


def frame_stage(msg: str) -> Stage | None:
    """The start-up stage a traceback frame line (``  File "...", line N, in f``) was in."""
    frame = _FRAME_FUNCTION.match(msg)
    return None if frame is None else _FRAME_STAGES.get(frame[1])


_NCCL_FRAME = re.compile(r"/nccl/|pynccl|\bin nccl[A-Z]|\bnccl[A-Z]\w*\(|ProxyOp")
"""A stack frame (Python's, or a native backtrace line) inside NCCL."""


def nccl_frame(msg: str) -> bool:
    """True for a line of a crash's stack that is inside NCCL."""
    return "ccl" in msg and _NCCL_FRAME.search(msg) is not None


def capture_frame(msg: str) -> bool:
    """True for a traceback frame inside CUDA (or NPU) graph capture."""
    return "graph" in msg and _CAPTURE_FRAME.search(msg) is not None


_SERVER_FRAME = re.compile(r'\s*File "[^"]*/(?:sglang|vllm)/[^"]*", line \d+, in ')
"""A traceback frame in the serving engine's own code (a path through its package)."""


def server_frame(msg: str) -> bool:
    """True for a traceback frame line that names a file and line of the engine's code."""
    return "File" in msg and _SERVER_FRAME.match(msg) is not None


def is_exception_line(msg: str) -> bool:
    """The closing line of a traceback (``RuntimeError: ...``) or a C++ ``what():`` line."""
    return _EXCEPTION.match(msg) is not None


# ---------------------------------------------------------------------------- timestamps

_DAYS: dict[str, float] = {}


def _day_seconds(year: int, month: int, day: int, key: str) -> float | None:
    seconds = _DAYS.get(key)
    if seconds is None:
        try:
            seconds = date(year, month, day).toordinal() * 86400.0
        except ValueError:
            return None
        _DAYS[key] = seconds
    return seconds


def _clock_seconds(text: str) -> float:
    """``HH:MM:SS`` or ``HH:MM:SS.fff`` as seconds since midnight."""
    seconds = int(text[0:2]) * 3600 + int(text[3:5]) * 60 + int(text[6:8])
    if len(text) > 9 and text[8] in ".,":
        return seconds + float("0." + text[9:])
    return float(seconds)


_MINUTES: dict[str, tuple[float, int]] = {}
_MINUTES_KEPT = 4096


def full_timestamp(text: str) -> float | None:
    """``YYYY-MM-DD HH:MM:SS[.fff]`` (naive, read as UTC) as seconds, or None.

    Each minute's day and seconds since midnight are read once (``_MINUTES``): a busy log asks
    for the same minutes over and over."""
    try:
        minute = _MINUTES.get(text[:16])
        if minute is None:
            day = _day_seconds(int(text[0:4]), int(text[5:7]), int(text[8:10]), text[:10])
            if day is None:
                return None
            minute = day, int(text[11:13]) * 3600 + int(text[14:16]) * 60
            if len(_MINUTES) >= _MINUTES_KEPT:
                _MINUTES.clear()
            _MINUTES[text[:16]] = minute
        day, seconds = minute
        rest = text[17:]
        seconds += int(rest[0:2])
        if len(rest) > 3 and rest[2] in ".,":
            return day + (seconds + float("0." + rest[3:]))
        return day + float(seconds)
    except ValueError:
        return None


def short_timestamp(text: str) -> float | None:
    """vLLM's ``MM-DD HH:MM:SS`` (no year) as seconds in a fixed leap year, or None."""
    try:
        day = _day_seconds(2000, int(text[0:2]), int(text[3:5]), text[:5])
        return None if day is None else day + _clock_seconds(text[6:])
    except ValueError:
        return None
