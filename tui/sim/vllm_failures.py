"""The text vLLM prints when its engine cannot start (worker, engine core, API server)."""

from __future__ import annotations

VL = "/usr/local/lib/python3.12/dist-packages/vllm"

_ECC = (
    "RuntimeError: CUDA error: uncorrectable ECC error encountered\n"
    "CUDA kernel errors might be asynchronously reported at some other API call, so the "
    "stacktrace below might be incorrect.\n"
)
_NO_KV = (
    "ValueError: No available memory for the cache blocks. Try increasing "
    "`gpu_memory_utilization` when initializing the engine."
)
_WORKER = (
    "Exception: WorkerProc initialization failed due to an exception in a background "
    "process. See stack trace for root cause."
)


def _frame(path: str, line: int, func: str, code: str) -> str:
    return f'  File "{VL}/{path}", line {line}, in {func}\n    {code}\n'


def worker_failed() -> str:
    """A worker process dying while it loads its weights."""
    return (
        "WorkerProc failed to start.\nTraceback (most recent call last):\n"
        + _frame(
            "v1/executor/multiproc_executor.py",
            1051,
            "worker_main",
            "worker = WorkerProc(*args, **kwargs)",
        )
        + _frame(
            "v1/worker/gpu_worker.py",
            301,
            "load_model",
            "self.model_runner.load_model(eep_scale_up=eep_scale_up)",
        )
        + _frame(
            "model_executor/model_loader/default_loader.py",
            309,
            "load_weights",
            "loaded_weights = model.load_weights(self.get_all_weights(model_config, model))",
        )
        + _ECC
    )


_KV_FRAME = (
    "v1/engine/core.py",
    121,
    "__init__",
    "num_gpu_blocks, num_cpu_blocks, kv_cache_config = self._initialize_kv_caches(",
)
_LOAD_FRAME = (
    "v1/engine/core.py",
    104,
    "__init__",
    "self.model_executor = executor_class(vllm_config)",
)


def engine_core_failed(reason: str) -> str:
    """The engine core's own report: a worker died, the GPU failed, or no KV memory."""
    tail = {"worker": _WORKER, "gpu": _ECC.rstrip("\n"), "kv": _NO_KV}[reason]
    return (
        "EngineCore failed to start.\nTraceback (most recent call last):\n"
        + _frame(
            "v1/engine/core.py",
            1573,
            "run_engine_core",
            "engine_core = EngineCoreProc(*args, engine_index=dp_rank, **kwargs)",
        )
        + _frame(
            "v1/engine/core.py",
            842,
            "__init__",
            "super().__init__(vllm_config, executor_class, log_stats,",
        )
        + _frame(*(_KV_FRAME if reason == "kv" else _LOAD_FRAME))
        + tail
    )


def init_failed(core: str) -> str:
    """The API server giving up on the engine core."""
    return (
        "Traceback (most recent call last):\n"
        + _frame(
            "entrypoints/openai/api_server.py",
            1915,
            "run_server",
            "await run_server_worker(listen_address, sock, args, **uvicorn_kwargs)",
        )
        + _frame("v1/engine/utils.py", 1473, "wait_for_engine_startup", "raise RuntimeError(")
        + "RuntimeError: Engine core initialization failed. See root cause above. Failed core "
        f"proc(s): {{'{core}': 1}}"
    )


def port_busy(host: str, port: int) -> str:
    """The API server failing to bind its socket before anything else starts."""
    return (
        "Traceback (most recent call last):\n"
        + _frame(
            "entrypoints/openai/api_server.py",
            1897,
            "run_server",
            "sock = create_server_socket(sock_addr)",
        )
        + _frame(
            "entrypoints/openai/api_server.py", 1868, "create_server_socket", "sock.bind(addr)"
        )
        + f"OSError: [Errno 98] Address already in use ({host}:{port})"
    )
