"""Stall detection and the start-up estimate against the simulated server.

Runs ``python -m tui.sim`` a few times with ``--scenario ok`` (each start-up is recorded into a
throwaway history), then once each with ``cuda-graph-hang`` and ``slow-rank``, following every
log with the real ``LogEngine`` and ``time.monotonic`` as the injected clock, and prints:

- how far the estimate from the first ``ok`` runs was from the last ``ok`` run's start-up;
- when the hung rank was flagged STALLED, in simulated seconds into its CUDA-graph stage, against
  the bound ``1.5 x usual + floor`` and the simulated scheduler watchdog;
- when the slow rank was flagged LAGGING, and that it was never STALLED.

The stall floor and lag are scaled with ``--time-scale`` so that the figures read in simulated
seconds. Usage: ``python bench/stall.py [--time-scale 0.1] [--ok-runs 4] [--tp 4]``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.fixtures import free_port
from tui.engine.judge.stall import RankHealth, StallPolicy, assess
from tui.engine.logs.log_engine import LogEngine
from tui.engine.startup.snapshot import Snapshot
from tui.engine.startup.vocabulary import Outcome, Stage
from tui.engine.timing.estimate import Expectations, RunRecord, expectations_for
from tui.engine.timing.fingerprint import Fingerprint, fingerprint_of
from tui.io.store.history_store import connect, record_startup, runs

POLL = 0.02
FLOOR = 60.0
LAG = 30.0


@dataclass
class Watch:
    """What one followed start-up showed, in real seconds from the injected clock."""

    snapshot: Snapshot = field(default_factory=Snapshot)
    stalled_at: dict[str, float] = field(default_factory=dict)
    lagging_at: dict[str, float] = field(default_factory=dict)
    graph_started_at: dict[str, float] = field(default_factory=dict)
    load_started_at: dict[str, float] = field(default_factory=dict)
    failed_at: float | None = None


@contextlib.contextmanager
def _simulator(args: argparse.Namespace, scenario: str, seed: int, log: Path) -> Iterator[None]:
    argv = [
        sys.executable, "-m", "tui.sim", "--model-path", "bench/model", "--tp", str(args.tp),
        "--port", str(free_port()), "--time-scale", str(args.time_scale), "--seed", str(seed),
        "--scenario", scenario, "--log-file", str(log),
    ]  # fmt: skip
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        yield
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def follow(
    args: argparse.Namespace,
    scenario: str,
    seed: int,
    expectations: Expectations | None,
    policy: StallPolicy,
) -> Watch:
    """Run one simulated start-up and watch it until it is ready, failed or timed out."""
    watch = Watch()
    engine = LogEngine(clock=time.monotonic)
    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "server.log"
        with _simulator(args, scenario, seed, log):
            deadline = time.monotonic() + args.limit
            offset = 0
            while time.monotonic() < deadline:
                time.sleep(POLL)
                data = log.read_bytes()[offset:] if log.exists() else b""
                offset += len(data)
                watch.snapshot = engine.feed(data).snapshot if data else engine.snapshot
                _observe(watch, expectations, policy)
                if watch.snapshot.outcome is not Outcome.INCOMPLETE:
                    break
    return watch


def _observe(watch: Watch, expectations: Expectations | None, policy: StallPolicy) -> None:
    now = time.monotonic()
    if watch.snapshot.outcome is Outcome.FAILED and watch.failed_at is None:
        watch.failed_at = now
    for rank in watch.snapshot.ranks:
        starts = {
            Stage.CUDA_GRAPH: watch.graph_started_at,
            Stage.WEIGHT_LOADING: watch.load_started_at,
        }
        if rank.stage in starts and not rank.draft:
            starts[rank.stage].setdefault(rank.tag, rank.stage_started_at)
    if expectations is None:
        return
    for status in assess(watch.snapshot, expectations, now, policy):
        if status.health is RankHealth.STALLED:
            watch.stalled_at.setdefault(status.tag, now)
        elif status.health is RankHealth.LAGGING:
            watch.lagging_at.setdefault(status.tag, now)


def _fingerprint(snapshot: Snapshot) -> Fingerprint:
    """The fingerprint ``bringup wait --local`` gives the same server (no GPU type known)."""
    return fingerprint_of(snapshot.server, host="local")


def _ok_runs(args: argparse.Namespace, policy: StallPolicy) -> tuple[Fingerprint, list[float]]:
    """Run the ``ok`` scenario ``--ok-runs`` times, recording each into the history."""
    fingerprint = Fingerprint()
    totals: list[float] = []
    for seed in range(args.ok_runs):
        watch = follow(args, "ok", seed, None, policy)
        fingerprint = _fingerprint(watch.snapshot)
        with closing(connect()) as db:
            record = record_startup(db, fingerprint, watch.snapshot, recorded_at=float(seed))
        total = record.total_seconds if record else None
        print(f"ok run {seed + 1}: outcome {watch.snapshot.outcome.value}, "
              f"start-up {_sim(total, args.time_scale)} simulated s")  # fmt: skip
        if total is not None:
            totals.append(total)
    return fingerprint, totals


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--time-scale", type=float, default=0.1)
    parser.add_argument("--ok-runs", type=int, default=4)
    parser.add_argument("--tp", type=int, default=4)
    parser.add_argument("--limit", type=float, default=300.0, help="real seconds per run")
    args = parser.parse_args()
    scale = args.time_scale
    policy = StallPolicy(floor=FLOOR * scale, lag=LAG * scale)
    os.environ.setdefault("PYTHONPATH", str(Path(__file__).resolve().parents[1]))
    with tempfile.TemporaryDirectory() as data:
        os.environ["BRINGUP_DATA_DIR"] = data
        fingerprint, totals = _ok_runs(args, policy)
        with closing(connect()) as db:
            history = runs(db)
        _report_estimate(history[:-1], fingerprint, totals, scale)
        expectations = expectations_for(fingerprint, history)
        _report_hang(follow(args, "cuda-graph-hang", 99, expectations, policy), expectations, scale)
        _report_wait(args)
        _report_slow(follow(args, "slow-rank", 98, expectations, policy), scale)
    return 0


def _report_wait(args: argparse.Namespace) -> None:
    """``bringup wait --fail-on-stall`` on a hung start, with the history recorded above."""
    scale = args.time_scale
    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "server.log"
        command = [
            sys.executable, "-m", "tui", "wait", "--local", "--log", str(log), "--json",
            "--fail-on-stall", "--stall-floor", f"{FLOOR * scale}s", "--timeout", "15m",
        ]  # fmt: skip
        with _simulator(args, "cuda-graph-hang", 97, log):
            began = time.time()
            result = subprocess.run(command, capture_output=True, text=True, check=False)
    records = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    graph = [
        r["t"] for r in records if r["event"] == "stage_entered" and r["stage"] == "cuda_graph"
    ]
    stalled = [r["t"] for r in records if r["event"] == "rank_stalled"]
    verdict = records[-1] if records else {}
    into = stalled[0] - min(graph) if graph and stalled else None
    print(f"bringup wait --fail-on-stall: exit {result.returncode}, verdict "
          f"{verdict.get('verdict')}, first rank_stalled {_sim(into, scale)} simulated s into "
          f"CUDA graphs, {time.time() - began:.1f} real s after launch")  # fmt: skip


def _sim(seconds: float | None, scale: float) -> str:
    return "-" if seconds is None else f"{seconds / scale:.1f}"


def _report_estimate(
    earlier: list[RunRecord], fingerprint: Fingerprint, totals: list[float], scale: float
) -> None:
    if len(totals) < 2:
        print("estimate: not enough ok runs finished")
        return
    predicted = expectations_for(fingerprint, earlier).total.median
    actual = totals[-1]
    error = abs(predicted - actual) / actual
    print(f"estimate from {len(totals) - 1} ok runs: {_sim(predicted, scale)} simulated s; "
          f"run {len(totals)} took {_sim(actual, scale)}; error {error:.1%}")  # fmt: skip


def _report_hang(watch: Watch, expectations: Expectations, scale: float) -> None:
    usual = expectations.stage(Stage.CUDA_GRAPH)
    median = usual.median if usual else float("nan")
    bound = 1.5 * median + FLOOR * scale
    print(f"cuda-graph-hang: usual CUDA-graph stage {_sim(median, scale)} simulated s, "
          f"bound 1.5 x usual + floor = {_sim(bound, scale)}")  # fmt: skip
    start = min(watch.graph_started_at.values(), default=None)
    for tag, flagged in sorted(watch.stalled_at.items()):
        into = None if start is None else flagged - start
        print(f"  {tag}: STALLED {_sim(into, scale)} simulated s into CUDA graphs")
    fired = None if start is None or watch.failed_at is None else watch.failed_at - start
    print(f"  scheduler watchdog line seen {_sim(fired, scale)} simulated s into CUDA graphs; "
          f"outcome {watch.snapshot.outcome.value}")  # fmt: skip


def _report_slow(watch: Watch, scale: float) -> None:
    print("slow-rank:")
    for tag, flagged in sorted(watch.lagging_at.items()):
        start = watch.load_started_at.get(tag)
        into = None if start is None else flagged - start
        print(f"  {tag}: LAGGING {_sim(into, scale)} simulated s into weight loading")
    stalled = ", ".join(sorted(watch.stalled_at)) or "none"
    print(f"  ranks ever STALLED: {stalled}; outcome {watch.snapshot.outcome.value}")


if __name__ == "__main__":
    raise SystemExit(main())
