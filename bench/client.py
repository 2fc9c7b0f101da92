"""How fast the benchmark client can go: requests and streamed chunks per second, per core.

The server runs in a separate process so that it does not share the client's interpreter:

- ``--target raw`` (default): a minimal asyncio HTTP server that streams SGLang-shaped
  ``/generate`` chunks (one token each) as fast as it can write them;
- ``--target sim``: the simulated server (``python -m tui.sim``) with a very high token rate.

For each concurrency level it prints the requests and chunks the client handled per second of
wall time and per second of the client's own CPU time (the per-core figure). Usage::

    python bench/client.py [--target raw|sim] [--requests 200] [--tokens 256] [--levels 1,8,32]
    python bench/client.py --levels 64,inf     # c=64 closed loop, then every request at once

A level is a concurrency, or ``inf`` for an open-loop level at an infinite request rate.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.fixtures import free_port, start_sim, wait_answering
from tui.engine.bench.load_plan import LoadLevel
from tui.io.bench.bench_client import BenchClient, Workload


async def _serve_one(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            length = next(
                (int(line.split(b":")[1]) for line in head.split(b"\r\n")
                 if line.lower().startswith(b"content-length:")), 0,
            )  # fmt: skip
            body = json.loads(await reader.readexactly(length)) if length else {}
            tokens = int(body.get("sampling_params", {}).get("max_new_tokens", 16))
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                         b"transfer-encoding: chunked\r\n\r\n")  # fmt: skip
            for count in range(1, tokens + 1):
                event = json.dumps({"text": "w " * count, "meta_info": {
                    "completion_tokens": count, "prompt_tokens": 8}})  # fmt: skip
                data = f"data: {event}\n\n".encode()
                writer.write(b"%x\r\n%s\r\n" % (len(data), data))
                await writer.drain()
            done = b"data: [DONE]\n\n"
            writer.write(b"%x\r\n%s\r\n0\r\n\r\n" % (len(done), done))
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        writer.close()


async def serve_raw(port: int) -> None:
    """The minimal streaming server (run in its own process with ``--serve-raw PORT``)."""
    server = await asyncio.start_server(_serve_one, "127.0.0.1", port)
    async with server:
        await server.serve_forever()


SIM_FLAGS = ["--time-scale", "0.001", "--decode-tok-s", "100000", "--ttft-ms", "0",
                    "--accept-len", "1", "--max-running", "1024"]  # fmt: skip


def _start_server(target: str, port: int) -> subprocess.Popen[bytes]:
    if target == "sim":
        return start_sim(port, SIM_FLAGS)
    command = [sys.executable, __file__, "--serve-raw", str(port)]
    return subprocess.Popen(command, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _level(text: str) -> LoadLevel:
    return LoadLevel(0, float("inf")) if text == "inf" else LoadLevel(int(text))


async def _measure(
    url: str, requests: int, tokens: int, level: LoadLevel
) -> tuple[float, float, int]:
    # No warm-up: its full-length requests would cost CPU time without counting as chunks (the
    # level's no-op round trips open the connections first).
    workload = Workload(tuple(["hello"] * requests), output_len=tokens, levels=(level,),
                        warmup_requests=0)  # fmt: skip
    async with BenchClient(url, workload) as client:
        cpu = time.process_time()
        (report,) = await client.run()
        cpu = time.process_time() - cpu
    chunks = sum(len(record.chunks) for record in report.records)
    return report.result.duration, cpu, chunks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", choices=("raw", "sim"), default="raw")
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--tokens", type=int, default=256)
    parser.add_argument("--levels", default="1,8,32")
    parser.add_argument("--serve-raw", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_raw:
        asyncio.run(serve_raw(args.serve_raw))
        return
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    server = _start_server(args.target, port)
    try:
        wait_answering(url, "/generate", body={"sampling_params": {"max_new_tokens": 1}})
        print(f"target={args.target} requests={args.requests} tokens/request={args.tokens}")
        print(f"{'conc':>5} {'wall s':>7} {'req/s':>8} {'chunks/s':>9} {'client cpu s':>12} "
              f"{'chunks/cpu-s':>12}")  # fmt: skip
        for level in (_level(part) for part in args.levels.split(",")):
            wall, cpu, chunks = asyncio.run(_measure(url, args.requests, args.tokens, level))
            name = "inf" if level.request_rate else str(level.concurrency)
            print(f"{name:>5} {wall:>7.2f} {args.requests / wall:>8.1f} {chunks / wall:>9.0f} "
                  f"{cpu:>12.2f} {chunks / cpu:>12.0f}")  # fmt: skip
    finally:
        server.terminate()
        server.wait(timeout=10)


if __name__ == "__main__":
    main()
