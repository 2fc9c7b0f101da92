"""The text SGLang and PyTorch print when a start fails: tracebacks, NCCL and watchdog lines.

The wording follows the engines' format strings; file paths and line numbers only need to
look like a real install, so they point into a typical ``dist-packages`` tree.
"""

from __future__ import annotations

SG = "/usr/local/lib/python3.12/dist-packages/sglang"
TORCH = "/usr/local/lib/python3.12/dist-packages/torch"
GLOG = "\x00glog\x00"

_SCHEDULER_HEAD = (
    (
        "srt/managers/scheduler.py",
        6360,
        "run_scheduler_process",
        "scheduler = Scheduler(",
        "^^^^^^^^^^",
    ),
    ("srt/managers/scheduler.py", 512, "__init__", "self.init_model_worker()", ""),
    (
        "srt/managers/scheduler.py",
        1171,
        "init_model_worker",
        "self.tp_worker = TpModelWorker(**worker_kwargs)",
        "^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
    ),
    ("srt/managers/tp_worker.py", 262, "__init__", "self._init_model_runner()", ""),
    (
        "srt/managers/tp_worker.py",
        347,
        "_init_model_runner",
        "self._model_runner = ModelRunner(",
        "^^^^^^^^^^^^",
    ),
    (
        "srt/model_executor/model_runner.py",
        498,
        "__init__",
        "self.initialize(pre_model_load_memory)",
        "",
    ),
)
_LOAD_FRAMES = (
    ("srt/model_executor/model_runner.py", 655, "initialize", "self.load_model()", ""),
    (
        "srt/model_executor/model_runner.py",
        1341,
        "load_model",
        "self.model = self.loader.load_model(",
        "^^^^^^^^^^^^^^^^^^^^^^^^",
    ),
    ("srt/model_loader/loader.py", 706, "load_model", "self.load_weights_and_postprocess(", ""),
    (
        "srt/model_loader/loader.py",
        715,
        "load_weights_and_postprocess",
        "model.load_weights(weights)",
        "",
    ),
    ("srt/layers/linear.py", 1273, "weight_loader", "param_data.copy_(loaded_weight)", ""),
)
_KV_FRAMES = (
    (
        "srt/model_executor/model_runner.py",
        671,
        "initialize",
        "self.init_memory_pool(pre_model_load_memory)",
        "",
    ),
    (
        "srt/model_executor/model_runner.py",
        1902,
        "init_memory_pool",
        "self.kv_cache_configurator.configure(",
        "",
    ),
    (
        "srt/mem_cache/kv_cache_configurator.py",
        471,
        "configure",
        "self.token_to_kv_pool = self._create_pool(",
        "^^^^^^^^^^^^^^^^^^",
    ),
)
_CUDA_ERROR_TAIL = (
    "CUDA kernel errors might be asynchronously reported at some other API call, so the "
    "stacktrace below might be incorrect.\n"
    "For debugging consider passing CUDA_LAUNCH_BLOCKING=1\n"
    "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n"
)


def _frames(frames: tuple[tuple[str, int, str, str, str], ...]) -> str:
    out = []
    for path, line, func, code, marks in frames:
        out.append(f'  File "{SG}/{path}", line {line}, in {func}\n    {code}\n')
        if marks:
            indent = 4 + (code.index("= ") + 2 if "= " in code else 0)
            out.append(" " * indent + marks + "\n")
    return "".join(out)


def scheduler_exception(frames: str, error: str) -> str:
    """``Scheduler hit an exception: Traceback ...`` as one multi-line log record."""
    head = _frames(_SCHEDULER_HEAD)
    return f"Scheduler hit an exception: Traceback (most recent call last):\n{head}{frames}{error}"


def weight_load_crash() -> str:
    """A rank's GPU fails while copying a weight in (an uncorrectable ECC error)."""
    error = "RuntimeError: CUDA error: uncorrectable ECC error encountered\n" + _CUDA_ERROR_TAIL
    return scheduler_exception(_frames(_LOAD_FRAMES), error)


def kv_not_enough_memory(fraction: float) -> str:
    """SGLang's own check when the KV budget left after the weights is not positive."""
    error = (
        "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. "
        f"Current value: mem_fraction_static={fraction}\n"
    )
    return scheduler_exception(_frames(_KV_FRAMES), error)


def kv_cuda_oom(gpu: int, want_gb: float, total_gb: float, free_gb: float) -> str:
    """PyTorch's allocator refusing the KV-cache tensors."""
    return scheduler_exception(
        _frames(_KV_FRAMES) + _DEVICE_FRAME, _cuda_oom(gpu, want_gb, total_gb, free_gb)
    )


def load_cuda_oom(gpu: int, want_gb: float, total_gb: float, free_gb: float) -> str:
    """PyTorch's allocator refusing a weight tensor: the model does not fit on the GPUs."""
    return scheduler_exception(
        _frames(_LOAD_FRAMES) + _DEVICE_FRAME, _cuda_oom(gpu, want_gb, total_gb, free_gb)
    )


_DEVICE_FRAME = (
    f'  File "{TORCH}/utils/_device.py", line 104, in __torch_function__\n'
    "    return func(*args, **kwargs)\n"
)


def _cuda_oom(gpu: int, want_gb: float, total_gb: float, free_gb: float) -> str:
    used = total_gb - free_gb
    error = (
        f"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {want_gb:.2f} GiB. "
        f"GPU {gpu} has a total capacity of {total_gb:.2f} GiB of which {free_gb:.2f} GiB is "
        f"free. Including non-PyTorch memory, this process has {used:.2f} GiB memory in use. "
        f"Of the allocated memory {used - 0.6:.2f} GiB is allocated by PyTorch, and 88.31 MiB "
        "is reserved by PyTorch but unallocated. If reserved but unallocated memory is large "
        "try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  "
        "See documentation for Memory Management  "
        "(https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)\n"
    )
    return error


def scheduler_runtime_crash() -> str:
    """A scheduler dying while serving (used where ``/health`` goes on answering 200)."""
    frames = (
        f'  File "{SG}/srt/managers/scheduler.py", line 6371, in run_scheduler_process\n'
        "    scheduler.event_loop_overlap()\n"
        f'  File "{SG}/srt/managers/scheduler.py", line 1432, in event_loop_overlap\n'
        "    batch_result = self.run_batch(batch)\n"
    )
    error = "RuntimeError: CUDA error: an illegal memory access was encountered\n"
    head = "Scheduler hit an exception: Traceback (most recent call last):\n"
    return head + frames + error + _CUDA_ERROR_TAIL


def scheduler_watchdog(timeout: float) -> str:
    """The hard watchdog of a scheduler that made no progress for ``timeout`` seconds."""
    shown = int(timeout) if float(timeout).is_integer() else round(timeout, 3)
    return f"Scheduler watchdog timeout (self.watchdog_timeout={shown}, self.soft=False)"


def nccl_timeout(rank: int, timeout_s: float) -> str:
    """PyTorch's NCCL watchdog taking a rank down; ``GLOG`` marks where the stamp goes."""
    ms = int(timeout_s * 1000)
    ran = ms + 83
    work = (
        f"WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)={ms}) "
        f"ran for {ran} milliseconds before timing out."
    )
    pg = f"[PG ID 0 PG GUID 0(default_pg) Rank {rank}]"
    head = f"[rank{rank}]:[E{GLOG} ProcessGroupNCCL.cpp"
    return (
        f"{head}:632] [Rank {rank}] Watchdog caught collective operation timeout: {work}\n"
        f"{head}:2271] {pg}  failure detected by watchdog at work sequence id: 1 PG status: "
        "last enqueued work: 1, last completed work: 0\n"
        f"{head}:684] [Rank {rank}] Some NCCL operations have failed or timed out. Due to the "
        "asynchronous nature of CUDA kernels, subsequent GPU operations might run on "
        "corrupted/incomplete data.\n"
        f"{head}:698] [Rank {rank}] To avoid data inconsistency, we are taking the entire "
        "process down.\n"
        "terminate called after throwing an instance of 'c10::DistBackendError'\n"
        f"  what():  {pg} Process group watchdog thread terminated with exception: "
        f"[Rank {rank}] Watchdog caught collective operation timeout: {work}\n"
        "Exception raised from checkTimeout at "
        "/pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:635 (most recent call first):\n"
    )


def warmup_error(body: str) -> str:
    """What the main process logs when the warm-up request did not answer 200."""
    return (
        "Initialization failed. warmup error: Traceback (most recent call last):\n"
        f'  File "{SG}/srt/entrypoints/http_server.py", line 2533, in _execute_server_warmup\n'
        '    assert res.status_code == 200, f"{res.text}"\n'
        "           ^^^^^^^^^^^^^^^^^^^^^^\n"
        f"AssertionError: {body}\n"
    )
