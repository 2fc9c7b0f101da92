"""How fast the log engine reads a long SGLang log, next to a plain regex scan.

Generates a realistic log in memory (a TP8 start with tqdm ``\\r`` bars, then mostly Decode and
Prefill batch lines and uvicorn access lines, with an occasional redrawn bar), feeds it through
``LogEngine.feed`` in chunks of the size ``bringup replay`` reads (256 KiB; sanitize, grammar,
start-up model) and prints lines per second of CPU time (``time.process_time``, so that other
work on a shared machine does not count). The baseline decodes the same bytes and runs one
``re.match`` per line. Two sizes show whether the cost grows linearly.

    python -m bench.replay            # 250k and 1M lines
    python -m bench.replay 100000     # one size
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Iterator

from tui.commands.replay import CHUNK
from tui.engine.feed import LogEngine

TP = 8
_BASELINE = re.compile(r"\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)((?: [A-Z_]+\d+)*)\] (.*)")


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


def make_log(lines: int) -> bytes:
    """A log of about ``lines`` lines: the start-up, then a server at work."""
    head = list(_startup())
    return ("\n".join([*head, *_serving(lines - len(head))]) + "\n").encode()


def engine_seconds(data: bytes) -> tuple[float, int]:
    """Seconds to read ``data`` through LogEngine in ``CHUNK`` pieces, and the lines it counted."""
    engine = LogEngine(clock=time.monotonic)
    start = time.process_time()
    for offset in range(0, len(data), CHUNK):
        engine.feed(data[offset : offset + CHUNK])
    snapshot = engine.finish().snapshot
    return time.process_time() - start, snapshot.lines


def baseline_seconds(data: bytes) -> float:
    """Seconds to decode the same bytes and run one regex match per line."""
    start = time.process_time()
    match = _BASELINE.match
    for offset in range(0, len(data), CHUNK):
        for line in data[offset : offset + CHUNK].decode("utf-8", "replace").split("\n"):
            match(line)
    return time.process_time() - start


def measure(lines: int, rounds: int = 3) -> None:
    """Best of ``rounds``, engine and baseline interleaved so that both see the same load."""
    data = make_log(lines)
    engine, baseline, counted = float("inf"), float("inf"), 0
    for _ in range(rounds):
        seconds, counted = engine_seconds(data)
        engine = min(engine, seconds)
        baseline = min(baseline, baseline_seconds(data))
    print(
        f"{counted:>9,} lines {len(data) / 1e6:7.1f} MB | engine {counted / engine:>11,.0f} lines/s"
        f" ({engine:5.2f} s) | re.match {counted / baseline:>11,.0f} lines/s"
        f" ({baseline:5.2f} s) | engine/re time {engine / baseline:4.1f}x"
    )


def main(argv: list[str]) -> int:
    sizes = [int(arg) for arg in argv] or [250_000, 1_000_000]
    for size in sizes:
        measure(size)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
