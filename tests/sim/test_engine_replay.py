"""The log engine reads the simulator's logs as it reads a real server's.

Every scenario runs once (all at the same time, to keep this quick); each finished log is fed
through ``LogEngine`` and must give the stages, outcome and failure kind the scenario means.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.simserver import FAST, READY, Sim, SimFactory
from tui.engine.logs.log_engine import LogEngine
from tui.engine.startup.snapshot import Snapshot
from tui.engine.startup.vocabulary import FailureKind, Outcome, Stage

FLAGS = [
    "--tp",
    "4",
    "--time-scale",
    FAST,
    "--fail-rank",
    "2",
    "--speculative-algorithm",
    "EAGLE3",
    "--speculative-draft-model-path",
    "d/eagle3",
    "--accept-len",
    "3.0",
]
ENDINGS = {
    "ok": READY,
    "slow-rank": READY,
    "health-lies": "Scheduler hit an exception",
}
FAILURES = {
    "rank-crash": (FailureKind.TRACEBACK_OTHER, Stage.WEIGHT_LOADING),
    "oom-kv-cache": (FailureKind.OOM, Stage.KV_CACHE),
    "nccl-timeout": (FailureKind.NCCL, Stage.DISTRIBUTED_INIT),
    "cuda-graph-hang": (FailureKind.HANG, Stage.CUDA_GRAPH),
    "port-in-use": (FailureKind.PORT_IN_USE, None),
    "warmup-fail": (FailureKind.TRACEBACK_OTHER, Stage.WARMUP),
}


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, bytes]]:
    factory = SimFactory(tmp_path_factory.mktemp("replay"))
    sims = {name: factory([*FLAGS, "--scenario", name]) for name in [*ENDINGS, *FAILURES]}
    try:
        for name, sim in sims.items():
            if name in ENDINGS:
                sim.wait_for(ENDINGS[name], timeout=90)
            else:
                sim.wait_exit(timeout=90)
        _serve_one_request(sims["ok"])
        for sim in sims.values():
            if sim.proc.poll() is None:
                sim.terminate()
        yield {name: sim.log.read_bytes() for name, sim in sims.items()}
    finally:
        factory.close()


def _serve_one_request(sim: Sim) -> None:
    body = {"text": "hello", "sampling_params": {"max_new_tokens": 400}}
    httpx.post(f"{sim.url}/generate", json=body, timeout=60).raise_for_status()
    deadline = time.monotonic() + 10
    while "Decode batch" not in sim.text() and time.monotonic() < deadline:
        time.sleep(0.05)


def _replay(data: bytes) -> Snapshot:
    engine = LogEngine(engine="auto")
    engine.feed(data)
    return engine.finish().snapshot


def test_a_healthy_start_reads_as_ready_then_serving(logs: dict[str, bytes]) -> None:
    snap = _replay(logs["ok"])
    assert snap.server.engine == "sglang"
    assert snap.outcome is Outcome.READY
    assert snap.ready_line_seen
    assert snap.last_stage is Stage.SERVING
    assert (snap.server.tp_size, snap.server.speculative_algorithm) == (4, "EAGLE3")
    assert {rank.tag for rank in snap.ranks} >= {"TP0", "TP1", "TP2", "TP3"}
    assert snap.failure is None
    assert snap.decode.accept_len
    assert all(2.5 <= value <= 3.5 for value in snap.decode.accept_len)


def test_chunked_feeding_gives_the_same_verdict(logs: dict[str, bytes]) -> None:
    data = logs["cuda-graph-hang"]
    engine = LogEngine(engine="auto")
    for start in range(0, len(data), 97):
        engine.feed(data[start : start + 97])
    chunked = engine.finish().snapshot
    whole = _replay(data)
    assert chunked.failure is not None
    assert whole.failure is not None
    assert (chunked.outcome, chunked.failure.kind) == (whole.outcome, whole.failure.kind)


def test_a_slow_rank_still_reads_as_ready(logs: dict[str, bytes]) -> None:
    assert _replay(logs["slow-rank"]).outcome is Outcome.READY


def test_health_lies_is_a_failure_after_ready_in_the_log(logs: dict[str, bytes]) -> None:
    snap = _replay(logs["health-lies"])
    assert snap.ready_line_seen
    assert snap.failure is not None
    assert snap.failure.kind is FailureKind.TRACEBACK_OTHER


@pytest.mark.parametrize("scenario", sorted(FAILURES))
def test_failures_read_with_their_kind_and_stage(logs: dict[str, bytes], scenario: str) -> None:
    snap = _replay(logs[scenario])
    kind, stage = FAILURES[scenario]
    assert snap.outcome is Outcome.FAILED
    assert snap.failure is not None
    assert snap.failure.kind is kind
    if stage is not None:
        assert snap.failure.stage is stage
    assert not snap.ready_line_seen


def test_replay_needs_no_network(logs: dict[str, bytes], tmp_path: Path) -> None:
    saved = tmp_path / "server.log"
    saved.write_bytes(logs["oom-kv-cache"])
    failure = _replay(saved.read_bytes()).failure
    assert failure is not None
    assert failure.kind is FailureKind.OOM
