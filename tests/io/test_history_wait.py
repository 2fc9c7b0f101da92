"""``bringup wait`` with the start-up history: a hung rank fails the wait, a finished start is
recorded. The server is the simulator (a real process writing a real log), the log is followed
on this machine, and the history is a real sqlite file in ``$BRINGUP_DATA_DIR``."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from tests.net import free_port
from tui.cli import main
from tui.commands.wait import WaitPlan
from tui.commands.wait_watch import wait_for_server
from tui.engine.judge.stall import StallPolicy
from tui.engine.startup.vocabulary import Outcome, Stage
from tui.engine.timing.estimate import RunRecord, StageSample
from tui.engine.timing.fingerprint import Fingerprint
from tui.io.store.history_store import add_run, connect, runs

SCALE = 0.01
MODEL = "Qwen/Qwen3-8B"
# What the simulator's stages take at --time-scale 1, as the log engine measures them (the
# CUDA-graph stage lasts until the ready marker); short stages are given at least a second.
USUAL = {
    Stage.DISTRIBUTED_INIT: 6.0, Stage.WEIGHT_LOADING: 330.0, Stage.KV_CACHE: 3.0,
    Stage.CUDA_GRAPH: 160.0,
}  # fmt: skip

pytestmark = pytest.mark.slow


@pytest.fixture
def simulator() -> Iterator[list[subprocess.Popen[bytes]]]:
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for process in started:
        process.kill()
        process.wait()


def start_sim(started: list[subprocess.Popen[bytes]], log: Path, *flags: str) -> None:
    command = [
        sys.executable, "-m", "tui.sim", "--model-path", MODEL, "--tp-size", "2",
        "--port", str(free_port()), "--time-scale", str(SCALE), "--log-file", str(log), *flags,
    ]  # fmt: skip
    started.append(subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))


def seed_history(runs_count: int = 3) -> None:
    """Ready runs of the same model (another host, so they count as similar runs)."""
    fingerprint = Fingerprint(engine="sglang", model=MODEL, tp=2, host="elsewhere")
    with closing(connect()) as db:
        for i in range(runs_count):
            samples = tuple(
                StageSample(tag, stage, False, max(seconds * SCALE, 1.0))
                for stage, seconds in USUAL.items()
                for tag in ("TP0", "TP1")
            )
            add_run(db, RunRecord(fingerprint, Outcome.READY, 520 * SCALE, samples, float(i)))


async def run_wait(log: Path, **options: Any) -> tuple[int, list[dict[str, Any]]]:
    plan = WaitPlan(None, str(log), None, "auto", 60.0, json=True, **options)
    out = io.StringIO()
    code = await wait_for_server(plan, out)
    return code, [json.loads(line) for line in out.getvalue().splitlines()]


async def test_a_hung_rank_fails_the_wait_with_fail_on_stall(
    tmp_path: Path, simulator: list[subprocess.Popen[bytes]]
) -> None:
    seed_history()
    log = tmp_path / "server.log"
    # The simulated watchdog is pushed far out: the wait must end on the stall alone.
    start_sim(simulator, log, "--scenario", "cuda-graph-hang", "--watchdog-timeout", "100000")
    code, records = await run_wait(log, fail_on_stall=True, stall=StallPolicy(floor=1.0))
    assert code == 1
    assert records[-1]["verdict"] == "STALLED"
    stalled = [r for r in records if r["event"] == "rank_stalled"]
    assert stalled
    assert {r["stage"] for r in stalled} == {"cuda_graph"}
    assert stalled[0]["in_stage"] > stalled[0]["threshold"]
    assert "CUDA graphs" in stalled[0]["reason"]
    assert not [r for r in records if r["event"] == "failure_detected"]
    with closing(connect()) as db:
        assert len(runs(db)) == 3


async def test_a_finished_start_is_recorded_and_listed(
    tmp_path: Path, simulator: list[subprocess.Popen[bytes]], capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "server.log"
    start_sim(simulator, log)
    code, records = await run_wait(log, profile="qwen")
    assert code == 0, records[-1]
    with closing(connect()) as db:
        (record,) = runs(db, profile="qwen")
    assert record.outcome is Outcome.READY
    assert record.fingerprint.model == MODEL
    assert record.fingerprint.tp == 2
    assert record.total_seconds is not None
    assert {s.rank for s in record.samples} >= {"TP0", "TP1"}
    assert (Stage.WEIGHT_LOADING, False) in record.stage_seconds()
    assert main(["history", "qwen", "--json"]) == 0
    (entry,) = json.loads(capsys.readouterr().out)["fingerprints"]
    assert entry["outcomes"] == {"ready": 1}
