"""``bringup stats`` against the simulator under a ``bringup bench`` load: the accept length and
the throughput it prints are the simulator's own, and an accept length that collapses raises
the alarm within two scrapes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO
from tests.simserver import FAST, Sim, SimFactory

pytestmark = pytest.mark.slow

DECODE = 100.0
"""Slow enough for the benchmark client to keep up on a loaded machine: the server cannot
stream faster than its client reads."""
ACCEPT = 3.0
CONCURRENCY = 4
PACE = ["--time-scale", FAST, "--decode-tok-s", str(DECODE), "--ttft-ms", "5",
        "--accept-len", str(ACCEPT), "--max-running", str(CONCURRENCY)]  # fmt: skip
SGLANG = [*PACE, "--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "d/e",
          "--enable-metrics"]  # fmt: skip
SPEC = '{"method": "eagle3", "model": "d/e", "num_speculative_tokens": 3}'
VLLM = ["--engine", "vllm", "serve", "m", "--speculative-config", SPEC, *PACE]


def _env(tmp: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO), "BRINGUP_DATA_DIR": str(tmp)}


def _bench(sim: Sim, tmp: Path, prompts: int, output_len: int) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "tui", "bench", "--url", sim.url, "--no-save", "--json",
               "--concurrency", str(CONCURRENCY), "--num-prompts", str(prompts), "--warmup", "0",
               "--input-len", "16", "--output-len", str(output_len)]  # fmt: skip
    return subprocess.Popen(
        command, cwd=REPO, env=_env(tmp), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )


def _stats(sim: Sim, tmp: Path, count: int, interval: str = "1s") -> list[dict[str, Any]]:
    command = [sys.executable, "-m", "tui", "stats", "--url", sim.url, "--json",
               "--interval", interval, "--count", str(count)]  # fmt: skip
    done = subprocess.run(
        command, cwd=REPO, env=_env(tmp), capture_output=True, text=True, timeout=120, check=True
    )
    return [json.loads(line) for line in done.stdout.splitlines()]


def _wait_for_load(sim: Sim) -> None:
    deadline = time.monotonic() + 60
    while f"#running-req: {CONCURRENCY}" not in sim.text() and time.monotonic() < deadline:
        time.sleep(0.1)


def test_stats_print_the_simulators_accept_length_and_throughput(
    start_sim: SimFactory, tmp_path: Path
) -> None:
    sim = start_sim(SGLANG)
    sim.wait_for("The server is fired up and ready to roll!")
    bench = _bench(sim, tmp_path, prompts=CONCURRENCY, output_len=2000)
    try:
        _wait_for_load(sim)
        reports = _stats(sim, tmp_path, count=5)
    finally:
        bench.kill()
        bench.wait()
    last = reports[-1]["last_10s"]
    assert reports[0]["engine"] == "sglang"
    assert last["seconds"] >= 3.0
    assert last["accept_length"] == pytest.approx(ACCEPT, rel=0.05)
    # Every slot decodes at --decode-tok-s: the server makes CONCURRENCY times that.
    assert last["tok_s"] == pytest.approx(CONCURRENCY * DECODE, rel=0.05)
    assert last["running"] == pytest.approx(CONCURRENCY, rel=0.05)


def test_stats_raise_the_collapse_alarm_within_two_scrapes(
    start_sim: SimFactory, tmp_path: Path
) -> None:
    # The collapse comes late enough for a slow machine to start ``bringup stats`` before it.
    sim = start_sim([*VLLM, "--scenario", "accept-collapse", "--collapse-after", "10"])
    sim.wait_for("Application startup complete.")
    bench = _bench(sim, tmp_path, prompts=CONCURRENCY, output_len=3000)
    try:
        reports = _stats(sim, tmp_path, count=16)
    finally:
        bench.kill()
        bench.wait()
    lengths = [report["interval"]["accept_length"] for report in reports]
    raised = [
        index
        for index, report in enumerate(reports)
        if "accept-floor" in {alarm["kind"] for alarm in report["alarms"]}
    ]
    steady = [i for i, length in enumerate(lengths) if length and length > ACCEPT * 0.95]
    assert steady, lengths
    before = max(steady)
    assert raised, lengths
    assert before < raised[0] <= before + 2, lengths
    alarm = next(a for a in reports[raised[0]]["alarms"] if a["kind"] == "accept-floor")
    # The first interval under the floor may still hold some steps from before the collapse.
    assert alarm["figure"] == "accept length"
    assert 1.0 <= alarm["value"] < 1.5
    assert alarm["text"].endswith(" over the last 1 s (below the floor 1.5)")
