"""How close the benchmark's figures are to what the simulator was told to do.

Starts ``python -m tui.sim`` with a known TTFT, decode speed and accept length, runs closed-loop
levels (concurrency 1, 8, 32) and open-loop levels (4 and 16 requests/s, Poisson) through the
benchmark client, and prints each figure beside the simulator's truth:

- TTFT: ``--ttft-ms`` after admission (``--max-running`` is above every level, so nothing
  queues). The client's TTFT also holds what happens before the sim's clock starts: sending,
  transport, HTTP handling, and in a burst the wait behind the other requests in both processes.
  Three rows: raw; less the level's no-op round trip (an estimate: the median of separate
  requests, once per level); and less each request's own admission delay, measured (the sim
  reports when it admitted the request, ``sim_admitted_at``, on the same wall clock as the
  client's send time): the median over requests of ``ttft - delay``. The last is the one that
  accounts for the sim's overhead; the round-trip row is kept for comparison.
- TPOT: token ``m`` is due at ``first + (m - 1) / decode``, so ``1 / decode``.
- output throughput: closed loop, ``c x N / (ttft + (N - 1) / decode)``; open loop, all tokens
  over the time from the first arrival to the last arrival plus one request's length (the
  arrival times are drawn with the same seed as the client draws them). Compared raw; with the
  median no-op round trip added to each request's length (closed loop; the estimate); with the
  measured median admission delay added to it; with the measured mean admission delay added to
  it (the honest one for a throughput: a level's duration is a sum of request lengths, and a
  burst's first requests wait much longer than the median); and in a closed loop also with the
  mean time from a request's last token to the end of its response (the stream's ``[DONE]`` and
  closing, which a worker waits for before it sends the next request).
- accept length: ``--accept-len``.
- E2E: ``ttft + (N - 1) / decode``, beside the sim's own ``e2e_latency`` (its stream's start to
  its last chunk), so that a sim late on a busy machine is told apart from the client's share.

    python bench/sim_accuracy.py [--ttft-ms 400] [--decode-tok-s 100] [--accept-len 2.5]
        [--levels 1,8,32,r4,r16]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
from dataclasses import dataclass
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


def _truth_tok_s(
    level: LoadLevel, count: int, tokens: int, args: argparse.Namespace, before_ms: float = 0.0
) -> float:
    """The true output throughput, ``before_ms`` added to each request's length."""
    length = (float(args.ttft_ms) + before_ms) / 1000 + (tokens - 1) / float(args.decode_tok_s)
    if level.request_rate is None:
        return level.concurrency * tokens / length
    span = arrival_times(count, level, 0)[-1] + length
    return count * tokens / span


def _row(name: str, ours: float | None, truth: float) -> str:
    if ours is None:
        return f"  {name:<26} {'-':>9} {truth:>9.2f}"
    return f"  {name:<26} {ours:>9.2f} {truth:>9.2f} {(ours - truth) / truth * 100:>+7.2f}%"


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def _mean(values: list[float]) -> float | None:
    return statistics.fmean(values) if values else None


@dataclass(frozen=True, slots=True)
class Admission:
    """What the sim's admission stamps say of a level (milliseconds; None: no stamps)."""

    stamped: int
    median_delay: float | None
    mean_delay: float | None
    median_ttft_less_delay: float | None
    mean_close: float | None
    """The mean time from a request's last token to the end of its response."""


def _admission(report: LevelReport) -> Admission:
    delays, less = [], []
    for record in report.records:
        delay, ttft = record.admission_delay, record.ttft
        if delay is None or ttft is None or not record.success:
            continue
        delays.append(delay * 1000)
        less.append((ttft - delay) * 1000)
    closes = [(r.ended_at - r.sent_at - r.latency) * 1000 for r in report.records if r.success]
    return Admission(len(delays), _median(delays), _mean(delays), _median(less), _mean(closes))


def _throughput_rows(
    report: LevelReport, ours: float | None, trip: float | None, seen: Admission, tokens: int,
    args: argparse.Namespace,
) -> None:  # fmt: skip
    """Output throughput against the truth, then against it with measured overheads in each
    request's length: the round trip (an estimate), the median and the mean admission delay
    (a level's duration is a sum of request lengths, so the mean is what it adds up to), and
    in a closed loop also the stream's close, which a worker waits for before its next send."""
    level, count = report.level, len(report.records)
    closed = level.request_rate is None

    def row(name: str, before_ms: float) -> None:
        print(_row(name, ours, _truth_tok_s(level, count, tokens, args, before_ms)))

    row("output throughput (tok/s)", 0.0)
    if closed and trip is not None:
        row("  with the round trip", trip)
    if seen.median_delay is not None:
        row("  with median admission", seen.median_delay)
    if seen.mean_delay is not None:
        row("  with mean admission", seen.mean_delay)
        if closed and seen.mean_close is not None:
            row("  and mean close", seen.mean_delay + seen.mean_close)


def _show(report: LevelReport, tokens: int, args: argparse.Namespace) -> None:
    figures = level_figures(report)
    trip = figures.server.median_round_trip_ms if figures.server else None
    ttft = figures.ttft_ms.median
    seen = _admission(report)
    delays = "-" if seen.median_delay is None or seen.mean_delay is None else (
        f"{seen.median_delay:.2f} ms median, {seen.mean_delay:.2f} ms mean")  # fmt: skip
    print(f"{report.level.label}: {figures.completed} requests, {tokens} tokens each, "
          f"round trip {trip or 0:.2f} ms, admission delay {delays} "
          f"({seen.stamped} stamped)")  # fmt: skip
    print(f"  {'figure':<26} {'ours':>9} {'truth':>9} {'error':>8}")
    print(_row("TTFT median (ms)", ttft, args.ttft_ms))
    less = None if ttft is None or trip is None else ttft - trip
    print(_row("TTFT - round trip (ms)", less, args.ttft_ms))
    print(_row("TTFT - own admission (ms)", seen.median_ttft_less_delay, args.ttft_ms))
    print(_row("TPOT median (ms)", figures.tpot_ms.median, 1000 / args.decode_tok_s))
    _throughput_rows(report, figures.output_throughput, trip, seen, tokens, args)
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
