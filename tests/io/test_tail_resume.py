"""After a lost link the tail resumes at its offset, or explains why it starts over (SSH)."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Callable
from pathlib import Path

from tests.io.helpers import Collected, eventually
from tests.sshd import TestServer
from tui.io.tail.log_tail import LogTail, TailOptions
from tui.io.transport.link_events import MarkerKind
from tui.io.transport.ssh import SshTransport, connect
from tui.io.transport.transport import LinkLost


def real(path: Path) -> str:
    """``path`` with every symbolic link resolved, as the host's ``readlink -f`` prints it."""
    return os.path.realpath(path)


FAST = TailOptions(probe_interval=0.3, wait_interval=0.1)
A = b"[2025-01-01 00:00:00 TP0] before the link dropped\n" * 20
B = b"[2025-01-01 00:05:00 TP0] the new file\n" * 3


async def follow_once(
    server: TestServer, log_tail: LogTail, got: Collected, until: Callable[[], bool]
) -> None:
    """Follow on a fresh connection until ``until()`` holds, then drop that connection."""
    transport = SshTransport(await connect(server.target()))

    async def consume() -> None:
        with contextlib.suppress(LinkLost):
            async for item in log_tail.follow(transport):
                got.add(item)

    task = asyncio.create_task(consume())
    try:
        await eventually(until, state=got)
    finally:
        server.drop_connections()
        await asyncio.wait_for(task, 30)
        await transport.close()


def second_file_is(got: Collected, data: bytes) -> bool:
    return len(got.segments) == 2 and got.current == data


async def test_an_unchanged_file_is_resumed_at_the_offset(
    ssh_server: TestServer, tmp_path: Path
) -> None:
    log = tmp_path / "server.log"
    log.write_bytes(A)
    log_tail, got = LogTail(str(log), options=FAST), Collected()
    await follow_once(ssh_server, log_tail, got, lambda: got.current == A)
    with log.open("ab") as handle:
        handle.write(B)
    await follow_once(ssh_server, log_tail, got, lambda: got.current == A + B)
    assert got.kinds == [MarkerKind.RESUMED]
    assert got.gaps == []
    assert got.markers[0].detail == f"resumed at byte {len(A)}"
    assert got.offsets_ok


async def test_a_rotation_while_disconnected_recovers_the_unread_bytes(
    ssh_server: TestServer, tmp_path: Path
) -> None:
    log = tmp_path / "server.log"
    log.write_bytes(A)
    log_tail, got = LogTail(str(log), options=FAST), Collected()
    await follow_once(ssh_server, log_tail, got, lambda: got.current == A)
    with log.open("ab") as handle:
        handle.write(b"written while we were away\n")
    os.rename(log, tmp_path / "server.log.1")
    log.write_bytes(B)
    await follow_once(ssh_server, log_tail, got, lambda: second_file_is(got, B))
    assert [bytes(s) for s in got.segments] == [A + b"written while we were away\n", B]
    assert got.kinds == [MarkerKind.ROTATED]
    assert "27 unread bytes were read" in got.markers[0].detail
    assert got.gaps == []


async def test_a_truncation_while_disconnected_starts_over(
    ssh_server: TestServer, tmp_path: Path
) -> None:
    log = tmp_path / "server.log"
    log.write_bytes(A)
    log_tail, got = LogTail(str(log), options=FAST), Collected()
    await follow_once(ssh_server, log_tail, got, lambda: got.current == A)
    with log.open("ab") as handle:
        handle.write(b"[2025-01-01 00:04:00 TP0] written while the link was down\n" * 50)
    log.write_bytes(B)
    await follow_once(ssh_server, log_tail, got, lambda: second_file_is(got, B))
    assert got.kinds == [MarkerKind.TRUNCATED]
    assert [gap.size for gap in got.gaps] == [None]
    assert f"after byte {len(A)} while the link was down" in got.gaps[0].reason
    assert got.order == ["bytes", "gap", MarkerKind.TRUNCATED, "bytes"]


async def test_a_rewrite_while_disconnected_is_detected_by_its_first_bytes(
    ssh_server: TestServer, tmp_path: Path
) -> None:
    log = tmp_path / "server.log"
    log.write_bytes(B)
    log_tail, got = LogTail(str(log), options=FAST), Collected()
    await follow_once(ssh_server, log_tail, got, lambda: got.current == B)
    log.write_bytes(A)
    await follow_once(ssh_server, log_tail, got, lambda: second_file_is(got, A))
    assert got.kinds == [MarkerKind.REWRITTEN]
    assert [gap.size for gap in got.gaps] == [None]
    assert got.order == ["bytes", "gap", MarkerKind.REWRITTEN, "bytes"]


async def test_a_start_offset_skips_what_was_already_read(
    ssh_server: TestServer, tmp_path: Path
) -> None:
    log = tmp_path / "server.log"
    log.write_bytes(A + B)
    log_tail, got = LogTail(str(log), start_offset=len(A), options=FAST), Collected()
    got.segments[-1] += A
    await follow_once(ssh_server, log_tail, got, lambda: got.current == A + B)
    assert got.markers == []
    assert got.offsets_ok


async def test_a_log_symlink_switched_while_disconnected_is_named(
    ssh_server: TestServer, tmp_path: Path
) -> None:
    first, second, log = tmp_path / "run-1.log", tmp_path / "run-2.log", tmp_path / "server.log"
    first.write_bytes(A)
    log.symlink_to(first.name)
    log_tail, got = LogTail(str(log), options=FAST), Collected()
    await follow_once(ssh_server, log_tail, got, lambda: got.current == A)
    with first.open("ab") as handle:
        handle.write(b"written to the old target while we were away\n")
    second.write_bytes(B)
    fresh = tmp_path / "server.log.new"
    fresh.symlink_to(second.name)
    os.replace(fresh, log)
    await follow_once(ssh_server, log_tail, got, lambda: second_file_is(got, B))
    assert [bytes(s) for s in got.segments] == [
        A + b"written to the old target while we were away\n",
        B,
    ]
    assert got.kinds == [MarkerKind.RELINKED]
    assert f"now points to {real(second)}" in got.markers[0].detail
    assert got.gaps == []
