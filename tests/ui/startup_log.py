"""SGLang-format start-up logs written line by line, for feeding the real engine in UI tests.

``phases(ranks)`` returns the log of a TP start with an EAGLE-3 drafter cut into named phases;
tests feed phases up to the state they want to show. Formats follow SGLang 0.5.23.
"""

from __future__ import annotations

import time

BASE = 1_767_261_600.0  # 2026-01-01 10:00:00 UTC
MODEL = "moonshotai/Kimi-K2.5"
DRAFTER = "lightseekorg/kimi-k2.5-eagle3"


def stamp(offset: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(BASE + offset))


def line(offset: float, tag: str | None, message: str) -> str:
    tags = f" {tag}" if tag else ""
    return f"[{stamp(offset)}{tags}] {message}\n"


def _every(count: int, offset: float, message: str) -> str:
    return "".join(line(offset, f"TP{i}" if count > 1 else None, message) for i in range(count))


def _args(count: int) -> str:
    args = (
        f"server_args={{'model_path': '{MODEL}', 'tp_size': {count}, 'dp_size': 1, "
        f"'speculative_algorithm': 'EAGLE3', 'speculative_draft_model_path': '{DRAFTER}', "
        "'port': 30000, 'nnodes': 1, 'node_rank': 0}"
    )
    return line(0, None, args)


def _shards(offset: float, done: int, total: int = 64) -> str:
    pct = round(100 * done / total)
    return (
        f"Loading safetensors checkpoint shards: {pct:3d}% Completed | {done}/{total} "
        "[00:10<00:12,  1.10s/it]\n"
    )


def phases(count: int = 8) -> dict[str, str]:
    """The start-up log in phases, in order: each value is the text appended by that phase."""
    return {
        "args": _args(count),
        "dist": _every(count, 5, "Init parallel begin.")
        + _every(count, 9, "Init parallel ends. elapsed=3.21 s"),
        "weights": _every(count, 12, "Load weight begin. avail mem=78.52 GB") + _shards(40, 29),
        "weights_done": _shards(90, 64)
        + _every(
            count,
            95,
            "Load weight end. elapsed=83.10 s, type=KimiK25ForCausalLM, quant=fp8, "
            "avail mem=63.10 GB, mem usage=15.42 GB.",
        ),
        "kv": _every(
            count,
            100,
            "KV Cache is allocated. dtype: torch.bfloat16, #tokens: 1187654, "
            "K size: 27.18 GB, V size: 27.18 GB",
        )
        + _every(count, 101, "Memory pool end. avail mem=8.91 GB"),
        "graphs": _every(
            count,
            102,
            "Capture target decode CUDA graph begin. backend=full, num_tokens_per_req=4, "
            "avail mem=8.91 GB",
        )
        + "Capturing batches (bs=64 avail_mem=8.40 GB):  50%|█████     | 18/36 "
        "[00:10<00:10,  1.75it/s]\n",
        "graphs_done": _every(
            count,
            140,
            "Capture target decode CUDA graph end. bs=[1, 2, 4, 8], elapsed=38.00 s, "
            "mem usage=0.72 GB, avail mem=8.18 GB.",
        )
        + line(
            141,
            "TP0" if count > 1 else None,
            "max_total_num_tokens=1187654, "
            "chunked_prefill_size=8192, max_prefill_tokens=16384, "
            "max_running_requests=48, context_len=262144, available_gpu_mem=8.18 GB",
        ),
        "serving": line(150, None, "INFO:     Started server process [4242]")
        + line(150, None, "INFO:     Uvicorn running on http://127.0.0.1:30000")
        + line(158, None, 'INFO:     127.0.0.1:40000 - "GET /model_info HTTP/1.1" 200 OK'),
        "ready": line(160, None, "The server is fired up and ready to roll!"),
    }


def up_to(phase: str, count: int = 8) -> bytes:
    """The log from the start through ``phase``."""
    text = []
    for name, chunk in phases(count).items():
        text.append(chunk)
        if name == phase:
            break
    return "".join(text).encode()


def oom_failure(rank: int = 3) -> bytes:
    """A CUDA out-of-memory crash of one rank during graph capture, then the parent's SIGQUIT."""
    tag = f"TP{rank}"
    return (
        line(120, tag, "Scheduler hit an exception: Traceback (most recent call last):")
        + '  File "/sgl/python/sglang/srt/managers/scheduler.py", line 2630, in run_scheduler\n'
        + "    scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank)\n"
        + "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has "
        "a total capacity of 139.81 GiB of which 1.02 GiB is free.\n"
        + line(
            121, None, "Received sigquit from a child process. It usually means the child failed."
        )
    ).encode()


HOSTILE_LINES = (
    "[/tmp/x] path in brackets",
    "[rank0]: NCCL says hello",
    "[@click=app.quit]x[/]",
    "clipboard \x1b]52;c;cHduZWQ=\x07 write",
    "title \x1b]0;PWNED-TITLE\x07 change",
    "link \x1b]8;;http://evil.example/\x1b\\click\x1b]8;;\x1b\\ here",
    "clear \x1b[2J screen",
    "c1 \x9b31m csi",
    "nul \x00 byte",
)


def hostile_bytes(tag: str = "TP0") -> bytes:
    """Lines with markup, escapes, C1 and NUL, a 200 kB line and invalid UTF-8."""
    text = "".join(line(20, tag, hostile) for hostile in HOSTILE_LINES)
    data = text.encode("utf-8")
    data += line(21, tag, "long " + "x" * 200_000).encode()
    data += b"[2026-01-01 10:00:22 " + tag.encode() + b"] bad utf8 \xff\xfe\xc3 raw c1 \x9b2J end\n"
    return data


def _crash(offset: float, tag: str, error: str) -> str:
    return (
        line(offset, tag, "Scheduler hit an exception: Traceback (most recent call last):")
        + '  File "/sgl/python/sglang/srt/managers/scheduler.py", line 2630, in run_scheduler\n'
        + f"{error}\n"
    )


FAILURES: dict[str, str] = {
    "oom": oom_failure().decode(),
    "nccl": _crash(120, "TP2", "RuntimeError: NCCL error: unhandled system error"),
    "cuda_graph": _crash(
        120,
        "TP2",
        "Exception: Capture cuda graph failed: CUDA error: out of "
        "resources\nPossible solutions:\n1. set --mem-fraction-static lower",
    ),
    "port_in_use": line(
        150,
        None,
        "ERROR:    [Errno 98] error while attempting to bind on "
        "address ('127.0.0.1', 30000): address already in use",
    ),
    "weights_missing": _crash(
        20, "TP2", "RuntimeError: Cannot find any model weights with `/models/kimi`"
    ),
    "traceback_other": _crash(20, "TP2", "KeyError: 'model.layers.0.mlp.experts.w1'"),
    "killed": line(
        30,
        None,
        "RuntimeError: Rank 3 scheduler died during initialization "
        "(exit code: -9). If exit code is -9 (SIGKILL), a common cause is the OS "
        "OOM killer.",
    ),
    "hang": line(
        400, "TP2", "Scheduler watchdog timeout (self.watchdog_timeout=300, self.soft=False)"
    ),
}
"""One log excerpt per failure kind, to append after a start-up phase."""
