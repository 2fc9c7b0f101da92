"""How fast the log engine reads a long SGLang (or vLLM) log, next to a plain regex scan.

Generates a realistic log in memory (a TP8 start with tqdm ``\\r`` bars, then mostly Decode and
Prefill batch lines and uvicorn access lines, with an occasional redrawn bar), feeds it through
``LogEngine.feed`` in chunks of the size ``bringup replay`` reads (256 KiB; sanitize, grammar,
start-up model) and prints lines per second of CPU time (``time.process_time``, so that other
work on a shared machine does not count). The baseline decodes the same bytes and runs one
``re.match`` per line. Two sizes show whether the cost grows linearly.

    python -m bench.replay            # 250k and 1M lines
    python -m bench.replay 100000     # one size
    python -m bench.replay --vllm     # a vLLM V1 log instead: access and throughput lines
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Iterator

from tui.commands.replay import CHUNK
from tui.engine.logs.log_engine import LogEngine

TP = 8
_BASELINE = re.compile(r"\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)((?: [A-Z_]+\d+)*)\] (.*)")
_VLLM_BASELINE = re.compile(r"\((\w+) pid=(\d+)\) (?:(\w+) (\d\d-\d\d \d\d:\d\d:\d\d) )?(.*)")


def _stamp(second: int) -> str:
    hours, rest = divmod(second, 3600)
    return f"2026-03-01 {hours % 24:02d}:{rest // 60:02d}:{rest % 60:02d}"


def _startup() -> Iterator[str]:
    yield f"[{_stamp(0)}] server_args=ServerArgs(model_path='/m/kimi', tp_size={TP}, port=30000)"
    for tp in range(TP):
        yield f"[{_stamp(5)} TP{tp}] Init torch distributed begin."
        yield f"[{_stamp(7)} TP{tp}] Init torch distributed ends. mem usage=0.62 GB"
        yield f"[{_stamp(8)} TP{tp}] Load weight begin. avail mem=78.52 GB"
    yield "".join(
        f"\rLoading safetensors checkpoint shards: {100 * i // 64:3d}% Completed | {i}/64 [00:10]"
        for i in range(65)
    )
    for tp in range(TP):
        yield (
            f"[{_stamp(90)} TP{tp}] Load weight end. type=KimiForCausalLM, dtype=torch.bfloat16, "
            "avail mem=20.10 GB, mem usage=58.42 GB."
        )
        yield f"[{_stamp(91)} TP{tp}] KV Cache is allocated. #tokens: 1187654, KV size: 9.0 GB"
        yield f"[{_stamp(91)} TP{tp}] Memory pool end. avail mem=9.91 GB"
        yield (
            f"[{_stamp(92)} TP{tp}] Capture cuda graph begin. This can take up to several "
            "minutes. avail mem=9.02 GB"
        )
    yield "".join(
        f"\rCapturing batches (bs={64 - i} avail_mem=8.30 GB): {100 * i // 36:3d}%|███ | {i}/36"
        for i in range(37)
    )
    for tp in range(TP):
        yield f"[{_stamp(130)} TP{tp}] Capture cuda graph end. Time elapsed: 38.1 s. avail mem=8 GB"
    yield (
        f"[{_stamp(131)} TP0] max_total_num_tokens=1187654, chunked_prefill_size=8192, "
        "max_prefill_tokens=16384, max_running_requests=48, context_len=262144"
    )
    yield f"[{_stamp(132)}] INFO:     Started server process [4242]"
    yield f"[{_stamp(132)}] INFO:     Application startup complete."
    yield f'[{_stamp(133)}] INFO:     127.0.0.1:53422 - "POST /generate HTTP/1.1" 200 OK'
    yield f"[{_stamp(135)}] The server is fired up and ready to roll!"


def _serving(count: int) -> Iterator[str]:
    for i in range(count):
        stamp = _stamp(140 + i // 20)
        kind = i % 20
        if kind < 9:
            yield (
                f"[{stamp} TP0] Decode batch, #running-req: {8 + i % 5}, #token: {9000 + i % 977}, "
                f"token usage: 0.{i % 90 + 10}, accept len: {1.5 + (i % 7) / 10:.2f}, accept "
                f"rate: 0.{50 + i % 40}, cuda graph: True, gen throughput (token/s): "
                f"{52.0 + (i % 31) / 3:.2f}, #queue-req: {i % 3}, "
            )
        elif kind < 14:
            yield (
                f"[{stamp} TP0] Prefill batch, #new-seq: 1, #new-token: {512 + i % 100}, "
                f"#cached-token: {i % 64}, token usage: 0.12, #running-req: 8, #queue-req: 0, "
                "cuda graph: False, input throughput (token/s): 10234.55"
            )
        elif kind < 19:
            path = "/v1/chat/completions" if kind % 2 else "/health"
            method = "POST" if kind % 2 else "GET"
            client = f"127.0.0.1:{40000 + i % 20000}"
            yield f'[{stamp}] INFO:     {client} - "{method} {path} HTTP/1.1" 200 OK'
        elif i % 2000 == 19:
            yield "".join(f"\rFetching 4 files: {25 * n:3d}%|██  | {n}/4 [00:01]" for n in range(5))
        else:
            yield f"[{stamp}] Using default chat sampling params from model generation config"


def _vllm_startup() -> Iterator[str]:
    api, core = "(APIServer pid=1)", "(EngineCore_DP0 pid=2)"
    yield f"{api} INFO 03-01 00:00:00 [api_server.py:1] vLLM API server version 0.11.0"
    yield f"{api} INFO 03-01 00:00:01 [utils.py:1] non-default args: {{'model': '/m/qwen3'}}"
    yield f"{api} INFO 03-01 00:00:05 [model.py:1] Resolved architecture: Qwen3ForCausalLM"
    for tp in range(TP):
        yield (
            f"(Worker_TP{tp} pid={10 + tp}) INFO 03-01 00:00:20 [parallel_state.py:1] "
            f"world_size={TP} rank={tp} local_rank={tp} backend=nccl"
        )
    yield f"{core} INFO 03-01 00:01:30 [gpu_model_runner.py:1] Model loading took 15.3 GiB"
    yield f"{core} INFO 03-01 00:01:50 [kv_cache_utils.py:1] GPU KV cache size: 1,187,654 tokens"
    yield f"{core} INFO 03-01 00:02:20 [gpu_model_runner.py:1] Graph capturing finished in 30 secs"
    yield (
        f"{core} INFO 03-01 00:02:21 [core.py:1] init engine (profile, create kv cache, warmup "
        "model) took 61.2 seconds"
    )
    yield f"{api} INFO:     Application startup complete."


def _vllm_serving(count: int) -> Iterator[str]:
    for i in range(count):
        second = 141 + i // 50
        kind = i % 100
        if kind == 0:
            yield (
                f"(APIServer pid=1) INFO 03-01 {_stamp(second)[11:]} [loggers.py:1] Engine 000: "
                f"Avg prompt throughput: 1024.0 tokens/s, Avg generation throughput: "
                f"{2400 + i % 97}.5 tokens/s, Running: 12 reqs, Waiting: 0 reqs, GPU KV cache "
                "usage: 3.1%, Prefix cache hit rate: 0.0%"
            )
        else:
            path = "/health" if kind % 10 == 5 else "/v1/chat/completions"
            method = "GET" if kind % 10 == 5 else "POST"
            client = f"127.0.0.1:{40000 + i % 20000}"
            yield f'(APIServer pid=1) INFO:     {client} - "{method} {path} HTTP/1.1" 200 OK'


def make_log(lines: int, engine: str = "sglang") -> bytes:
    """A log of about ``lines`` lines: the start-up, then a server at work."""
    head = list(_startup() if engine == "sglang" else _vllm_startup())
    serving = _serving if engine == "sglang" else _vllm_serving
    return ("\n".join([*head, *serving(lines - len(head))]) + "\n").encode()


def engine_seconds(data: bytes) -> tuple[float, int]:
    """Seconds to read ``data`` through LogEngine in ``CHUNK`` pieces, and the lines it counted."""
    engine = LogEngine(clock=time.monotonic)
    start = time.process_time()
    for offset in range(0, len(data), CHUNK):
        engine.feed(data[offset : offset + CHUNK])
    snapshot = engine.finish().snapshot
    return time.process_time() - start, snapshot.lines


def baseline_seconds(data: bytes, pattern: re.Pattern[str] = _BASELINE) -> float:
    """Seconds to decode the same bytes and run one regex match per line."""
    start = time.process_time()
    match = pattern.match
    for offset in range(0, len(data), CHUNK):
        for line in data[offset : offset + CHUNK].decode("utf-8", "replace").split("\n"):
            match(line)
    return time.process_time() - start


def measure(lines: int, rounds: int = 3, engine_name: str = "sglang") -> None:
    """Best of ``rounds``, engine and baseline interleaved so that both see the same load."""
    data = make_log(lines, engine_name)
    pattern = _BASELINE if engine_name == "sglang" else _VLLM_BASELINE
    engine, baseline, counted = float("inf"), float("inf"), 0
    for _ in range(rounds):
        seconds, counted = engine_seconds(data)
        engine = min(engine, seconds)
        baseline = min(baseline, baseline_seconds(data, pattern))
    print(
        f"{counted:>9,} lines {len(data) / 1e6:7.1f} MB | engine {counted / engine:>11,.0f} lines/s"
        f" ({engine:5.2f} s) | re.match {counted / baseline:>11,.0f} lines/s"
        f" ({baseline:5.2f} s) | engine/re time {engine / baseline:4.1f}x"
    )


def main(argv: list[str]) -> int:
    engine = "vllm" if "--vllm" in argv else "sglang"
    sizes = [int(arg) for arg in argv if arg != "--vllm"] or [250_000, 1_000_000]
    for size in sizes:
        measure(size, engine_name=engine)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
