"""The local transport runs commands directly, streams output and stops process groups."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tui.io.transport.local import LocalTransport
from tui.io.transport.transport import CommandTimedOut


async def test_run_returns_status_and_both_streams() -> None:
    result = await LocalTransport().run(["sh", "-c", "echo out; echo err >&2; exit 4"])
    assert (result.status, result.stdout, result.stderr) == (4, b"out\n", b"err\n")
    assert not result.ok


async def test_run_passes_standard_input() -> None:
    result = await LocalTransport().run(["cat"], stdin=b"abc\x00\xff")
    assert result.stdout == b"abc\x00\xff"


async def test_a_missing_program_is_a_failed_command_not_an_exception() -> None:
    result = await LocalTransport().run(["/nonexistent/program"])
    assert result.status == 127


async def test_run_timeout_stops_the_command() -> None:
    with pytest.raises(CommandTimedOut):
        await LocalTransport().run(["sleep", "30"], timeout=0.2)


async def test_a_cancelled_run_stops_the_command_and_its_children(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    script = f"sleep 300 & echo $! > {pidfile}; wait"
    task = asyncio.create_task(LocalTransport().run(["sh", "-c", script]))
    for _ in range(200):
        if pidfile.exists() and pidfile.read_text().strip():
            break
        await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await _ends(int(pidfile.read_text()))


async def test_stream_reads_chunks_until_the_end() -> None:
    transport = LocalTransport()
    script = "printf a; sleep 0.05; printf b >&2; printf c"
    stream = await transport.open_stream(["sh", "-c", script])
    received = b""
    while chunk := await stream.read():
        received += chunk
    assert received == b"ac"
    assert await stream.close() == 0
    assert stream.stderr_text() == "b"


async def test_closing_the_transport_stops_streams_and_their_children(tmp_path: Path) -> None:
    transport = LocalTransport()
    pidfile = tmp_path / "pid"
    stream = await transport.open_stream(
        ["sh", "-c", f"sleep 300 & echo $! > {pidfile}; echo go; wait"]
    )
    assert await stream.read() == b"go\n"
    await transport.close()
    assert await _ends(int(pidfile.read_text()))


async def _ends(pid: int) -> bool:
    """Wait up to 2.5 s for ``pid`` to exit; True when it did."""
    for _ in range(50):
        if _gone(pid):
            return True
        await asyncio.sleep(0.05)
    return _gone(pid)


def _gone(pid: int) -> bool:
    """True once ``pid`` has exited (a zombie waiting for its parent counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.split(") ")[1].startswith("Z")


async def test_forward_is_the_identity() -> None:
    assert await LocalTransport().forward("127.0.0.1", 30000) == 30000
