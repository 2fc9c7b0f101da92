"""The host's kernel log read over the SSH connection for NVIDIA faults, with the simulator's
fake ``dmesg`` (``python -m tui.sim.fake_dmesg``) standing in for the kernel's."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.sshd import TestServer
from tui.io.kernel_log.kernel_log_read import interpret, kernel_log_argv, read_kernel_log
from tui.io.transport.ssh import SshTransport, connect
from tui.sim.fake_dmesg import install

NO_JOURNAL = "bringup-no-such-journalctl"


@pytest.fixture
async def ssh(ssh_server: TestServer) -> AsyncIterator[SshTransport]:
    transport = SshTransport(await connect(ssh_server.target()))
    yield transport
    await transport.close()


async def test_an_xid_is_read_over_ssh(ssh: SshTransport, tmp_path: Path) -> None:
    shim = install(tmp_path / "bin", ["--xid", "79"])
    report = await read_kernel_log(ssh, ((NO_JOURNAL, "-k"), (str(shim),)))
    assert report.permitted
    assert report.source == "dmesg"
    assert [fault.code for fault in report.faults] == [79]
    assert "Xid 79 on PCI:0000:3b:00: GPU has fallen off the bus" in report.summary


async def test_a_kernel_log_that_may_not_be_read_says_so(ssh: SshTransport, tmp_path: Path) -> None:
    shim = install(tmp_path / "bin", ["--denied"])
    report = await read_kernel_log(ssh, ((NO_JOURNAL, "-k"), (str(shim),)))
    assert not report.permitted
    assert "cannot read the kernel log of" in report.summary
    assert "Operation not permitted" in report.summary
    assert "dmesg_restrict" in report.summary

    assert f"{NO_JOURNAL} -k: not installed" in report.summary


async def test_configured_commands_are_tried_in_order(ssh: SshTransport, tmp_path: Path) -> None:
    """A configured command with options runs as given; the first that may be read wins."""
    denied = install(tmp_path / "denied", ["--denied"])
    shim = install(tmp_path / "bin", ["--xid", "48"])
    report = await read_kernel_log(ssh, ((str(denied), "--ctime"), (str(shim), "-T")))
    assert report.permitted
    assert report.source == "dmesg -T"
    assert [fault.code for fault in report.faults] == [48]


async def test_a_hostile_command_is_one_quoted_word(ssh: SshTransport, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    hostile = f"x; touch {marker}; $(touch {marker}) `touch {marker}`"
    report = await read_kernel_log(ssh, ((hostile, "-k"),))
    assert not report.permitted
    assert "not installed" in report.summary
    assert not marker.exists()


def test_every_word_is_quoted_in_the_script() -> None:
    argv = kernel_log_argv((("/tmp/x; rm -rf /", "-k"), ("dmesg",)), lines=50)
    assert argv[:2] == ["sh", "-c"]
    assert argv[-1] == "50"
    assert "'/tmp/x; rm -rf /'" in argv[2]
    with pytest.raises(ValueError, match="needs a program"):
        kernel_log_argv(((),))


def test_a_clean_log_and_hostile_output() -> None:
    clean = interpret(0, b"source: journalctl -k\n", b"", host="gpu-a")
    assert clean.summary == "kernel log of gpu-a (journalctl -k): no NVIDIA Xid, SXid or bus errors"
    hostile = interpret(
        0, b"source: dmesg\nNVRM: Xid (PCI:0000:3b:00): 13, \x1b[31m[bold]x[/bold]\n", b"", host="h"
    )
    assert "\x1b" not in hostile.summary
