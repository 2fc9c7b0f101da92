"""A healthy start as a real process: refused port, 503 until warm, SIGTERM, lagging ranks."""

from __future__ import annotations

import re
import socket
import time

import httpx
import pytest

from tests.simserver import FAST, READY, SimFactory, all_gone

TP2 = ["--tp", "2", "--time-scale", FAST]


def test_ok_start_serves_then_sigterm_exits_zero_and_frees_everything(
    start_sim: SimFactory,
) -> None:
    sim = start_sim(
        [*TP2, "--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "d/eagle3"]
    )
    pids = sim.rank_pids()
    assert sim.pid_file.read_text().strip() == str(sim.proc.pid)
    text = sim.wait_for(READY)
    for needle in (
        "[",
        "Init parallel begin.",
        "Capture draft extend CUDA graph end.",
        "Engine startup timings (s): ",
        "INFO:     Uvicorn running on http://127.0.0.1:",
        '"GET /model_info HTTP/1.1" 200 OK',
        '"POST /generate HTTP/1.1" 200 OK',
    ):
        assert needle in text
    assert text.index("Engine startup timings") < text.index("Started server process")
    assert httpx.get(f"{sim.url}/health", timeout=5).status_code == 200
    assert sim.terminate() == 0
    text = sim.text()
    assert "SIGTERM received. signum=15" in text
    assert "INFO:     Application shutdown complete." in text
    assert re.search(r"kill_process_tree called: parent_pid=\d+, include_parent=False", text)
    assert all_gone(pids)
    assert not sim.pid_file.exists()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", sim.port))


def test_port_refuses_connections_until_the_ranks_are_ready(start_sim: SimFactory) -> None:
    sim = start_sim(["--tp", "2", "--time-scale", "0.005"])
    sim.wait_for("Load weight begin.")
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{sim.url}/health", timeout=2)
    sim.wait_for(READY)


def test_health_is_503_until_the_warmup_succeeds(start_sim: SimFactory) -> None:
    sim = start_sim(["--time-scale", "0.004"])
    codes: list[int] = []
    deadline = time.monotonic() + 60
    with httpx.Client(timeout=5) as client:
        while time.monotonic() < deadline and 200 not in codes:
            code = _status(client, f"{sim.url}/health")
            if code is None:
                time.sleep(0.01)
            else:
                codes.append(code)
    assert codes
    assert codes[0] == 503
    assert codes[-1] == 200
    text = sim.wait_for(READY)
    assert '"GET /health HTTP/1.1" 503 Service Unavailable' in text
    assert text.index("503 Service Unavailable") < text.index(READY)


def _status(client: httpx.Client, url: str) -> int | None:
    try:
        return client.get(url).status_code
    except httpx.TransportError:
        return None


def test_slow_rank_lags_but_the_server_gets_ready(start_sim: SimFactory) -> None:
    sim = start_sim(
        ["--tp", "4", "--time-scale", FAST, "--scenario", "slow-rank", "--fail-rank", "1"]
    )
    text = sim.wait_for(READY)
    ends = re.findall(r"\[[\d: -]+ (TP\d)\] Load weight end\. elapsed=([\d.]+) s", text)
    assert ends[-1][0] == "TP1"
    assert float(ends[-1][1]) > 2 * max(float(sec) for tag, sec in ends[:-1])


def test_health_lies_after_the_scheduler_dies(start_sim: SimFactory) -> None:
    sim = start_sim([*TP2, "--scenario", "health-lies"])
    text = sim.wait_for(READY)
    text = sim.wait_for("RuntimeError: CUDA error: an illegal memory access was encountered")
    assert text.index(READY) < text.index("Scheduler hit an exception")
    assert httpx.get(f"{sim.url}/health", timeout=5).status_code == 200
    with pytest.raises(httpx.ReadTimeout):
        httpx.post(f"{sim.url}/generate", json={"text": "hi"}, timeout=1.0)
    assert sim.proc.poll() is None
    assert sim.terminate() == 0


def test_multi_node_worker_answers_a_dummy_health(start_sim: SimFactory) -> None:
    worker = start_sim(
        [
            "--tp",
            "4",
            "--nnodes",
            "2",
            "--node-rank",
            "1",
            "--dist-init-addr",
            "127.0.0.1:5000",
            "--time-scale",
            FAST,
        ]
    )
    text = worker.wait_for(
        f"Dummy health check server started in background thread at 127.0.0.1:{worker.port}"
    )
    assert {"TP2", "TP3"} == set(re.findall(r"\[[\d: -]+ (TP\d)\]", text))
    assert "Capturing batches" not in text
    assert "Engine startup timings" not in text
    assert httpx.get(f"{worker.url}/health", timeout=5).status_code == 200
    assert READY not in worker.text()
    assert worker.terminate() == 0
