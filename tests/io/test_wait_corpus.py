"""``bringup wait`` on real server logs written while it follows them: the outcome is right."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path
from typing import Any

from tui.commands.wait import WaitPlan
from tui.commands.wait_watch import wait_for_server
from tui.engine.logs.log_engine import LogEngine

EXPECTED = {"ready": (0, "READY"), "failed": (1, "FAILED"), "incomplete": (6, "TIMEOUT")}


def stops(data: bytes) -> bool:
    """The log ends with the server shutting down (after its ready line, for a ``ready`` log)."""
    engine = LogEngine()
    engine.feed(data)
    engine.finish()
    return engine.snapshot.stopped


def one_per_kind(manifest: list[dict[str, Any]], logs: Path) -> list[dict[str, Any]]:
    """The first log of each (engine, outcome) pair, skipping ``ready`` logs that end with a
    shutdown: a server that stopped after its ready line is STOPPED
    (tests/ui/test_stopped_after_ready.py)."""
    chosen: dict[tuple[str, str], dict[str, Any]] = {}
    for entry in manifest:
        key = (entry["engine"], entry["outcome"])
        if key in chosen:
            continue
        if entry["outcome"] != "ready" or not stops((logs / entry["file"]).read_bytes()):
            chosen[key] = entry
    return list(chosen.values())


def append(target: Path, data: bytes) -> None:
    with target.open("ab") as handle:
        handle.write(data)


async def append_slowly(data: bytes, target: Path) -> None:
    for start in range(0, len(data), 8192):
        append(target, data[start : start + 8192])
        await asyncio.sleep(0.002)


async def wait_on(data: bytes, target: Path, timeout: float) -> tuple[int, dict[str, Any]]:
    out = io.StringIO()
    plan = WaitPlan(None, str(target), None, "auto", timeout, json=True)
    writer = asyncio.create_task(append_slowly(data, target))
    code = await wait_for_server(plan, out)
    writer.cancel()
    return code, json.loads(out.getvalue().splitlines()[-1])


async def test_each_kind_of_real_log_gets_its_outcome(shared: Path, tmp_path: Path) -> None:
    manifest = json.loads((shared / "corpus" / "manifest.json").read_text())
    for entry in one_per_kind(manifest, shared / "corpus" / "logs"):
        target = tmp_path / entry["file"]
        timeout = 2.0 if entry["outcome"] == "incomplete" else 30.0
        data = (shared / "corpus" / "logs" / entry["file"]).read_bytes()
        code, verdict = await wait_on(data, target, timeout)
        assert (code, verdict["verdict"]) == EXPECTED[entry["outcome"]], entry["file"]
