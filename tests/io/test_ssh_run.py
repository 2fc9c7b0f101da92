"""``SshTransport.run`` over a real sshd: a command that ends before reading its input is a
finished command with its exit status, never a lost link."""

from __future__ import annotations

import asyncio

from tests.sshd import TestServer
from tui.io.transport.ssh import SshTransport, _send_input, connect


async def test_commands_that_exit_before_reading_input_report_their_status(
    ssh_server: TestServer,
) -> None:
    transport = SshTransport(await connect(ssh_server.target()))
    try:
        argv = ["sh", "-c", "exit 3"]
        results = await asyncio.gather(
            *(transport.run(argv, stdin=b"x" * (1 << 20)) for _ in range(8)),
            *(transport.run(["nonexistent-command-for-test"]) for _ in range(8)),
        )
    finally:
        await transport.close()
    assert [result.status for result in results] == [3] * 8 + [127] * 8


async def test_input_for_a_command_whose_channel_already_closed_is_dropped(
    ssh_server: TestServer,
) -> None:
    """The race the test above may or may not hit, made certain: the command has ended and its
    channel is closed before its input is given (asyncssh then refuses any write)."""
    link = await connect(ssh_server.target())
    try:
        process = await link.conn.create_process("exit 3", encoding=None)
        await process.wait_closed()
        _send_input(process, b"x" * 1024)
        result = await process.wait()
    finally:
        link.close()
        await link.wait_closed()
    assert result.exit_status == 3
