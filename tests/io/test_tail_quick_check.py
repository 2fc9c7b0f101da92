"""The file checker answers a check of a file nobody wrote since the last one with its quick key
(device, inode, size, modification time) and one ``stat``; any change gives the whole
description again, over the real SSH server."""

from __future__ import annotations

import os
from pathlib import Path

from tui.io.tail.tail_probe import Prober
from tui.io.transport.host_session import HostSession

TEXT = b"[2025-01-01 00:00:00 TP0] Decode batch, #running-req: 1\n" * 4


async def test_an_unchanged_file_is_answered_by_its_quick_key(
    session: HostSession, tmp_path: Path
) -> None:
    log = tmp_path / "server.log"
    log.write_bytes(TEXT)
    prober = Prober(await session.transport(), str(log), 10.0)
    try:
        first = await prober.ask(16, len(TEXT) - 16, 16)
        assert first is not None
        assert first.head == TEXT[:16]
        assert first.window == TEXT[-16:]
        assert await prober.ask(16, len(TEXT) - 16, 16) is first  # 'same': the last report

        before = os.stat(log).st_mtime_ns
        rewritten = b"X" * len(TEXT)  # rewritten in place to the same size: the time moves
        log.write_bytes(rewritten)
        os.utime(log, ns=(before + 10**9, before + 10**9))
        again = await prober.ask(16, len(TEXT) - 16, 16)
        assert again is not None
        assert again is not first
        assert (again.head, again.window, again.size) == (b"X" * 16, b"X" * 16, len(TEXT))

        moved = await prober.ask(16, len(TEXT) - 8, 8)  # another question: asked in full
        assert moved is not None
        assert moved.window == b"X" * 8

        log.unlink()
        assert await prober.ask(16, len(TEXT) - 8, 8) is None
        log.write_bytes(TEXT)
        back = await prober.ask(16, len(TEXT) - 8, 8)
        assert back is not None
        assert back.head == TEXT[:16]
    finally:
        await prober.close()
