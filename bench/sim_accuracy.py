"""How close the benchmark's figures are to what the simulator was told to do.

Starts ``python -m tui.sim`` with a known TTFT, decode speed and accept length, runs closed-loop
levels (concurrency 1, 8, 32) and open-loop levels (4 and 16 requests/s, Poisson) through the
benchmark client, and prints each figure beside the simulator's truth:

- TTFT: ``--ttft-ms`` after admission (``--max-running`` is above every level, so nothing
  queues); the client's TTFT also holds the transport and HTTP handling before the sim's clock
  starts, which the level's no-op round trip measures, so both raw and less the round trip
  are shown.
- TPOT: token ``m`` is due at ``first + (m - 1) / decode``, so ``1 / decode``.
- output throughput: closed loop, ``c x N / (ttft + (N - 1) / decode)``; open loop, all tokens
  over the time from the first arrival to the last arrival plus one request's length (the
  arrival times are drawn with the same seed as the client draws them).
- accept length: ``--accept-len``.
- E2E: ``ttft + (N - 1) / decode``, beside the sim's own ``e2e_latency`` (its stream's start to
  its last chunk), so that a sim late on a busy machine is told apart from the client's share.

    python bench/sim_accuracy.py [--ttft-ms 400] [--decode-tok-s 100] [--accept-len 2.5]
        [--levels 1,8,32,r4,r16]
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.fixtures import free_port, start_sim, wait_answering
from tui.engine.bench.load_plan import LoadLevel, arrival_times
from tui.io.bench.bench_client import BenchClient, LevelReport, Workload, level_figures


def _start(port: int, args: argparse.Namespace) -> subprocess.Popen[bytes]:
    return start_sim(port, [
        "--time-scale", "0.002", "--ttft-ms", str(args.ttft_ms),
        "--decode-tok-s", str(args.decode_tok_s), "--accept-len", str(args.accept_len),
        "--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "d/eagle3",
        "--max-running", "512",
    ])  # fmt: skip


def _truth_tok_s(level: LoadLevel, count: int, tokens: int, args: argparse.Namespace) -> float:
    length = float(args.ttft_ms) / 1000 + (tokens - 1) / float(args.decode_tok_s)
    if level.request_rate is None:
        return level.concurrency * tokens / length
    span = arrival_times(count, level, 0)[-1] + length
    return count * tokens / span


def _row(name: str, ours: float | None, truth: float) -> str:
    if ours is None:
        return f"  {name:<26} {'-':>9} {truth:>9.2f}"
    return f"  {name:<26} {ours:>9.2f} {truth:>9.2f} {(ours - truth) / truth * 100:>+7.2f}%"


def trip_or_zero(trip: float | None) -> float:
    return trip or 0.0


def _show(report: LevelReport, tokens: int, args: argparse.Namespace) -> None:
    figures = level_figures(report)
    trip = figures.server.median_round_trip_ms if figures.server else None
    ttft = figures.ttft_ms.median
    print(f"{report.level.label}: {figures.completed} requests, {tokens} tokens each, "
          f"round trip {trip or 0:.2f} ms")  # fmt: skip
    print(f"  {'figure':<26} {'ours':>9} {'truth':>9} {'error':>8}")
    print(_row("TTFT median (ms)", ttft, args.ttft_ms))
    less = None if ttft is None or trip is None else ttft - trip
    print(_row("TTFT - round trip (ms)", less, args.ttft_ms))
    print(_row("TPOT median (ms)", figures.tpot_ms.median, 1000 / args.decode_tok_s))
    count = len(report.records)
    truth = _truth_tok_s(report.level, count, tokens, args)
    print(_row("output throughput (tok/s)", figures.output_throughput, truth))
    if report.level.request_rate is None and less is not None:
        # The same truth with the client's measured wait before the sim's clock starts (the
        # round trip: sending, HTTP handling, the burst's queue in the client and server).
        paced = (
            report.level.concurrency
            * tokens
            / ((args.ttft_ms + trip_or_zero(trip)) / 1000 + (tokens - 1) / args.decode_tok_s)
        )
        print(_row("  with the round trip", figures.output_throughput, paced))
    print(_row("accept length", figures.accept_length, args.accept_len))
    # The sim's own clock: its ``e2e_latency`` runs from the start of its stream to the last
    # chunk it sent. Where it is longer than the truth the sim itself was late (a busy machine);
    # where ours is longer than the sim's, the rest is transport and the client.
    e2e = (tokens - 1) / args.decode_tok_s * 1000 + args.ttft_ms
    own = sorted(r.server_latency * 1000 for r in report.records if r.server_latency is not None)
    ours = figures.e2el_ms.median
    if own:
        sim = own[len(own) // 2]
        print(_row("E2E median (ms)", ours, e2e))
        print(_row("  the sim's own E2E (ms)", sim, e2e))
        if ours is not None:
            label = "  ours less the sim's"
            print(f"  {label:<26} {ours - sim:>9.2f} ms")


def _levels(text: str) -> tuple[LoadLevel, ...]:
    """``1,8,32,r4,r16``: closed-loop concurrencies, and open-loop rates after an ``r``."""
    found = []
    for item in text.split(","):
        item = item.strip()
        found.append(
            LoadLevel(0, float(item[1:])) if item.startswith("r") else LoadLevel(int(item))
        )
    return tuple(found)


async def _run(url: str, args: argparse.Namespace) -> None:
    levels = _levels(args.levels)
    workload = Workload(("hello world",), output_len=args.tokens, levels=levels,
                        per_level_default=True, warmup_requests=1)  # fmt: skip
    async with BenchClient(url, workload) as client:
        for report in await client.run():
            _show(report, args.tokens, args)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ttft-ms", type=float, default=400.0)
    parser.add_argument("--decode-tok-s", type=float, default=100.0)
    parser.add_argument("--accept-len", type=float, default=2.5)
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument(
        "--levels",
        default="1,8,32,r4,r16",
        help="concurrencies, and request rates after an r (default 1,8,32,r4,r16)",
    )
    args = parser.parse_args()
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    server = _start(port, args)
    try:
        wait_answering(url, "/health")
        asyncio.run(_run(url, args))
    finally:
        server.terminate()
        server.wait(timeout=20)


if __name__ == "__main__":
    main()
