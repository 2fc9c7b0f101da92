"""``py-spy dump`` of one rank, found by process title inside the run's process group."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from tests.sshd import TestServer
from tui.io.stacks.stack_dump import dump_argv, dump_stacks, interpret, rank_titles
from tui.io.transport.local import LocalTransport
from tui.io.transport.ssh import SshTransport, connect

SLEEPER = "import time\ndef waiting_for_nccl():\n    time.sleep(60)\nwaiting_for_nccl()\n"
PY_SPY = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
needs_py_spy = pytest.mark.skipif(not Path(PY_SPY).exists(), reason="py-spy is not installed")


# A fake server: it starts two titled ranks in its own process group, prints their pids, waits.
LAUNCHER = f"""
import subprocess, sys
code = {SLEEPER!r}
ranks = [subprocess.Popen([f"sglang::scheduler_TP{{i}}", "-c", code], executable=sys.executable)
         for i in (2, 3)]
print(" ".join(str(rank.pid) for rank in ranks), flush=True)
ranks[0].wait()
"""


def _wait_for_title(pid: int, title: str) -> None:
    cmdline = Path(f"/proc/{pid}/cmdline")
    for _ in range(500):
        if cmdline.read_bytes().split(b"\0")[0] == title.encode():
            return
        time.sleep(0.01)
    raise AssertionError(f"process {pid} never showed {title!r}")


@pytest.fixture
def server_group() -> Iterator[int]:
    """The fake server's process group, plus a decoy ``TP3`` rank in a group of its own."""
    leader = subprocess.Popen(
        [sys.executable, "-c", LAUNCHER], stdout=subprocess.PIPE, start_new_session=True
    )
    decoy = subprocess.Popen(
        ["sglang::scheduler_TP3", "-c", SLEEPER], executable=sys.executable, start_new_session=True
    )
    try:
        assert leader.stdout is not None
        pids = [int(pid) for pid in leader.stdout.readline().split()]
        for pid, title in zip(
            pids, ("sglang::scheduler_TP2", "sglang::scheduler_TP3"), strict=True
        ):
            _wait_for_title(pid, title)
        _wait_for_title(decoy.pid, "sglang::scheduler_TP3")
        yield leader.pid
    finally:
        for process in (leader, decoy):
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        if leader.stdout is not None:
            leader.stdout.close()


@pytest.fixture
async def ssh(ssh_server: TestServer) -> AsyncIterator[SshTransport]:
    transport = SshTransport(await connect(ssh_server.target()))
    yield transport
    await transport.close()


def test_titles_follow_each_engine() -> None:
    assert rank_titles("sglang", "DP0 TP3 EP3") == ("sglang::scheduler_DP0_TP3_EP3",)
    assert rank_titles("sglang", "main") == ("sglang::scheduler",)
    assert rank_titles("vllm", "Worker_TP0") == ("VLLM::Worker_TP0",)
    assert len(rank_titles("unknown", "TP1")) == 2


def test_hostile_titles_are_arguments_not_shell_text() -> None:
    argv = dump_argv(42, ["x'; rm -rf / #"], py_spy="$(reboot)")
    assert argv[-2:] == ["$(reboot)", "x'; rm -rf / #"]
    assert "rm -rf" not in argv[2]
    assert "reboot" not in argv[2]
    with pytest.raises(ValueError, match="process group"):
        dump_argv(1, ["t"])
    with pytest.raises(ValueError, match="no process title"):
        dump_argv(42, [])


@needs_py_spy
async def test_dumps_the_rank_of_this_run_only(server_group: int) -> None:
    dump = await dump_stacks(
        LocalTransport(), process_group=server_group, engine="sglang", tag="TP3", py_spy=PY_SPY
    )
    if not dump.ok and "ptrace" in dump.message:
        pytest.skip(f"this machine forbids ptrace: {dump.message}")
    assert dump.ok, dump.message
    assert "waiting_for_nccl" in dump.text
    dumped_pid = int(dump.text.split("--pid ")[1].split()[0])
    assert os.getpgid(dumped_pid) == server_group


@needs_py_spy
async def test_dumps_over_a_real_ssh_connection(server_group: int, ssh: SshTransport) -> None:
    dump = await dump_stacks(
        ssh, process_group=server_group, engine="sglang", tag="TP2", py_spy=PY_SPY
    )
    if not dump.ok and "ptrace" in dump.message:
        pytest.skip(f"this machine forbids ptrace: {dump.message}")
    assert dump.ok, dump.message
    assert "waiting_for_nccl" in dump.text
    assert "(sglang::scheduler_TP2)" in dump.text


@needs_py_spy
async def test_a_rank_not_in_the_group_is_reported(server_group: int) -> None:
    dump = await dump_stacks(
        LocalTransport(), process_group=server_group, engine="sglang", tag="TP5", py_spy=PY_SPY
    )
    assert not dump.ok
    assert "no process of TP5" in dump.message
    assert "sglang::scheduler_TP5" in dump.message


async def test_missing_py_spy_degrades_with_a_clear_message(
    server_group: int, ssh: SshTransport
) -> None:
    dump = await dump_stacks(
        ssh, process_group=server_group, engine="sglang", tag="TP3", py_spy="no-such-py-spy"
    )
    assert not dump.ok
    assert dump.message == (
        f"py-spy is not installed on {ssh.label}: run 'pip install py-spy' there to dump stacks"
    )


def test_remote_output_is_cleaned_and_failures_explained() -> None:
    dump = interpret(0, b"Thread 1\x1b]52;c;evil\x07 (idle)\n\xff", b"", tag="TP0")
    assert dump.ok
    assert "\x1b" not in dump.text
    assert "\x07" not in dump.text
    denied = interpret(1, b"", b"Error: Permission denied (os error 13)\n", tag="TP0")
    assert not denied.ok
    assert "ptrace" in denied.message


async def test_a_lost_link_is_a_message_not_an_exception(ssh_server: TestServer) -> None:
    transport = SshTransport(await connect(ssh_server.target()))
    await transport.close()
    dump = await dump_stacks(transport, process_group=42, engine="sglang", tag="TP0")
    assert not dump.ok
    assert dump.message.startswith("cannot dump the stacks of TP0")
