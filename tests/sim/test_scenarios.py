"""Each scenario run as a real process: its log, its exit status and its process tree."""

from __future__ import annotations

import os
import re
import signal
import socket

import pytest

from tests.sim.conftest import FAST, SimFactory, all_gone

READY = "The server is fired up and ready to roll!"
TP2 = ["--tp", "2", "--time-scale", FAST]


@pytest.mark.parametrize(
    ("scenario", "needles"),
    [
        ("rank-crash", ["Scheduler hit an exception: Traceback (most recent call last):",
                        "Received sigquit from a child process. It usually means the child "
                        "failed."]),
        ("oom-kv-cache", ["Not enough memory. Please try to increase --mem-fraction-static.",
                          "Received sigquit from a child process."]),
        ("nccl-timeout", ["ProcessGroupNCCL.cpp", "Watchdog caught collective operation timeout",
                          "crashed with exit code -6. Triggering SIGQUIT for cleanup...",
                          "Received sigquit from a child process."]),
        ("cuda-graph-hang", ["Scheduler watchdog timeout (self.watchdog_timeout=",
                             "Received sigquit from a child process."]),
        ("warmup-fail", ['"POST /generate HTTP/1.1" 500 Internal Server Error',
                         "Initialization failed. warmup error: Traceback"]),
    ],
)
def test_failures_kill_the_tree_like_sglang(start_sim: SimFactory, scenario: str,
                                            needles: list[str]) -> None:
    sim = start_sim([*TP2, "--scenario", scenario])
    pids = sim.rank_pids()
    assert sim.wait_exit() == -9
    text = sim.text()
    for needle in needles:
        assert needle in text
    assert re.search(r"kill_process_tree called: parent_pid=\d+, include_parent=True", text)
    assert READY not in text
    assert all_gone(pids)


def test_cuda_oom_when_the_memory_fraction_is_too_high(start_sim: SimFactory) -> None:
    sim = start_sim([*TP2, "--scenario", "oom-kv-cache", "--mem-fraction-static", "0.95"])
    assert sim.wait_exit() == -9
    assert "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate" in sim.text()


@pytest.mark.parametrize("held_by_test", [True, False])
def test_port_in_use_fails_after_loading_with_uvicorn_error(
    start_sim: SimFactory, held_by_test: bool
) -> None:
    with socket.socket() as holder:
        scenario = "ok"
        if held_by_test:
            holder.bind(("127.0.0.1", 0))
            holder.listen(1)
            port = holder.getsockname()[1]
        else:
            scenario, port = "port-in-use", None
        sim = start_sim([*TP2, "--scenario", scenario], port=port)
        assert sim.wait_exit() == 3
    text = sim.text()
    assert "Capture target decode CUDA graph end." in text
    assert (f"ERROR:    [Errno 98] error while attempting to bind on address ('127.0.0.1', "
            f"{sim.port}): address already in use") in text
    assert re.search(r"kill_process_tree called: parent_pid=\d+, include_parent=False", text)


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
