"""Each scenario run as a real process: its log, its exit status and its process tree."""

from __future__ import annotations

import os
import re
import signal
import socket
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from tests.simserver import FAST, READY, SimFactory, all_gone

TP2 = ["--tp", "2", "--time-scale", FAST]


FAILURES = {
    "rank-crash": [
        "Scheduler hit an exception: Traceback (most recent call last):",
        "Received sigquit from a child process. It usually means the child failed.",
    ],
    "oom-kv-cache": [
        "Not enough memory. Please try to increase --mem-fraction-static.",
        "Received sigquit from a child process.",
    ],
    "nccl-timeout": [
        "ProcessGroupNCCL.cpp",
        "Watchdog caught collective operation timeout",
        "crashed with exit code -6. Triggering SIGQUIT for cleanup...",
        "Received sigquit from a child process.",
    ],
    "cuda-graph-hang": [
        "Scheduler watchdog timeout (self.watchdog_timeout=",
        "Received sigquit from a child process.",
    ],
    "warmup-fail": [
        '"POST /generate HTTP/1.1" 500 Internal Server Error',
        "Initialization failed. warmup error: Traceback",
    ],
}


@dataclass(frozen=True, slots=True)
class Ended:
    """How one simulated server ended."""

    code: int
    text: str
    port: int
    ranks_gone: bool


@pytest.fixture(scope="module")
def ended(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Ended]]:
    """Every failure scenario, run at the same time (the machine is small, the runs short)."""
    factory = SimFactory(tmp_path_factory.mktemp("failures"))
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen(1)
        sims = {name: factory([*TP2, "--scenario", name]) for name in FAILURES}
        sims["cuda-oom"] = factory(
            [*TP2, "--scenario", "oom-kv-cache", "--mem-fraction-static", "0.95"]
        )
        sims["port-in-use"] = factory([*TP2, "--scenario", "port-in-use"])
        sims["port-held"] = factory(TP2, port=holder.getsockname()[1])
        try:
            pids = {name: sim.rank_pids() for name, sim in sims.items()}
            codes = {name: sim.wait_exit(timeout=90) for name, sim in sims.items()}
            yield {
                name: Ended(codes[name], sim.text(), sim.port, all_gone(pids[name]))
                for name, sim in sims.items()
            }
        finally:
            factory.close()


@pytest.mark.parametrize("scenario", sorted(FAILURES))
def test_failures_kill_the_tree_like_sglang(ended: dict[str, Ended], scenario: str) -> None:
    run = ended[scenario]
    assert run.code == -9
    for needle in FAILURES[scenario]:
        assert needle in run.text
    assert re.search(r"kill_process_tree called: parent_pid=\d+, include_parent=True", run.text)
    assert READY not in run.text
    assert run.ranks_gone


def test_cuda_oom_when_the_memory_fraction_is_too_high(ended: dict[str, Ended]) -> None:
    assert ended["cuda-oom"].code == -9
    assert "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate" in ended["cuda-oom"].text


@pytest.mark.parametrize("name", ["port-in-use", "port-held"])
def test_port_in_use_fails_after_loading_with_uvicorn_error(
    ended: dict[str, Ended], name: str
) -> None:
    run = ended[name]
    assert run.code == 3
    assert "Capture target decode CUDA graph end." in run.text
    assert (
        f"ERROR:    [Errno 98] error while attempting to bind on address ('127.0.0.1', "
        f"{run.port}): address already in use"
    ) in run.text
    assert re.search(r"kill_process_tree called: parent_pid=\d+, include_parent=False", run.text)
    assert run.ranks_gone


def test_invalid_flags_exit_two_with_a_message(start_sim: SimFactory) -> None:
    sim = start_sim(["--tp", "3", "--nnodes", "2"])
    assert sim.wait_exit() == 2
    assert sim.proc.stderr is not None
    assert b"cannot be split evenly over --nnodes 2" in sim.proc.stderr.read()


def test_ranks_die_with_a_killed_main_process(start_sim: SimFactory) -> None:
    sim = start_sim(["--tp", "2", "--time-scale", "0.01"])
    pids = sim.rank_pids()
    sim.proc.send_signal(signal.SIGKILL)
    assert sim.wait_exit() == -9
    assert all_gone(pids)


def test_a_rank_killed_from_outside_takes_the_server_down(start_sim: SimFactory) -> None:
    sim = start_sim(["--tp", "2", "--time-scale", "0.01"])
    pids = sim.rank_pids()
    os.kill(pids[1], signal.SIGKILL)
    assert sim.wait_exit() == -9
    text = sim.text()
    assert f"Subprocess scheduler_1 (pid={pids[1]}) crashed with exit code -9." in text
    assert "Received sigquit from a child process." in text
    assert all_gone(pids)
