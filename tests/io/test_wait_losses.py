"""``bringup wait --json`` says when log bytes were lost: a gap event where they were."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from tests.io.helpers import eventually
from tests.sshd import TestServer, frozen, proc_stats
from tui.commands.wait import WaitPlan
from tui.commands.wait_watch import wait_for_server

FIRST = (
    b"[2025-01-01 00:00:00] server_args=ServerArgs(model_path='m', tp_size=1)\n"
    b"[2025-01-01 00:00:01] Load weight begin. avail mem=78.50 GB\n"
)
AWAY = b"[2025-01-01 00:00:05] Load weight end. written while the link was down\n" * 40
AGAIN = b"[2025-01-01 00:10:00] server_args=ServerArgs(model_path='m', tp_size=1)\n"
READY = b"[2025-01-01 00:10:09] The server is fired up and ready to roll!\n"


def records(out: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.getvalue().splitlines()]


def append(path: Path, data: bytes) -> None:
    with path.open("ab") as handle:
        handle.write(data)


def tails_of(log: Path) -> list[int]:
    """The host's ``tail`` processes following ``log`` (under its per-tail spelling)."""
    found = []
    for pid, _fields in proc_stats():
        with contextlib.suppress(OSError):
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            named = [a for a in argv if a.endswith(log.name.encode())]
            if argv[0] == b"tail" and named and os.path.normpath(named[-1]) == str(log).encode():
                found.append(pid)
    return found


async def wait_across_a_loss(
    ssh_server: TestServer, log: Path, lose: Callable[[], Awaitable[None]]
) -> tuple[int, list[dict[str, Any]]]:
    """Run ``bringup wait --json`` on ``log`` (which holds ``FIRST``) through weight loading, let
    ``lose`` make bytes go missing, write the ready line once the gap event is out, and return
    the exit code and the records."""
    wait = WaitPlan(
        ssh_server.alias, str(log), None, "auto", 60, json=True, ssh_config=ssh_server.ssh_config
    )
    out = io.StringIO()
    task = asyncio.create_task(wait_for_server(wait, out))
    try:
        await eventually(
            lambda: any(r.get("stage") == "weight_loading" for r in records(out)), state=out
        )
        await lose()
        await eventually(lambda: any(r["event"] == "gap" for r in records(out)), state=out)
        append(log, READY)
        code = await asyncio.wait_for(task, 60)
    finally:
        task.cancel()
    return code, records(out)


async def test_a_truncation_while_the_link_is_down_is_a_gap_event(
    ssh_server: TestServer, tmp_path: Path
) -> None:
    log = tmp_path / "server.log"
    log.write_bytes(FIRST)

    async def lose() -> None:
        ssh_server.drop_connections()
        append(log, AWAY)
        log.write_bytes(AGAIN)

    code, got = await wait_across_a_loss(ssh_server, log, lose)
    assert code == 0
    names = [r["event"] for r in got]
    gap = got[names.index("gap")]
    assert gap["size"] is None
    assert "while the link was down" in gap["reason"]
    after = got[names.index("gap") + 1]
    assert (after["event"], after["kind"], after["new_file"]) == ("marker", "truncated", True)
    assert names.index("connection_lost") < names.index("gap") < names.index("verdict")


async def test_a_stuck_tail_across_a_rewrite_is_a_gap_event(
    ssh_server: TestServer, tmp_path: Path
) -> None:
    log = tmp_path / "server.log"
    log.write_bytes(FIRST)

    async def lose() -> None:
        stuck = tails_of(log)
        assert len(stuck) == 1
        with frozen(stuck):
            append(log, AWAY)
            await asyncio.sleep(3)  # a few of the once-a-second checks see the file grow
            log.write_bytes(AGAIN)

    code, got = await wait_across_a_loss(ssh_server, log, lose)
    assert code == 0
    names = [r["event"] for r in got]
    gap = got[names.index("gap")]
    assert gap["size"] is None
    assert f"at least {len(AWAY)} unread bytes" in gap["reason"]
    assert got[names.index("gap") + 1]["new_file"] is True
    assert "connection_lost" not in names
