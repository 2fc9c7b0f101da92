"""What ``bringup launch``, ``kill`` and ``restart`` print with ``--json``: one document.

``{"schema_version", "t", "command", "profile", "ok", "exit_code", "lines", ...}`` with the
nodes started (``started``), the refusals, the errors and each node's kill (``killed``); a
Slurm profile adds ``job_id``; a command that could not act has ``error``. The schema is
docs/schemas/launch.schema.json. Host text is kept as it came (JSON escapes it).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Sequence
from typing import Any

from tui.commands.json_time import SCHEMA_VERSION
from tui.io.launch.launch_kill import NodeKill
from tui.io.launch.launch_profile import kill_lines, launch_lines
from tui.io.launch.launcher import LaunchResult


def document(command: str, profile: str | None, code: int, **fields: Any) -> dict[str, Any]:
    """The document's head; ``fields`` add to it."""
    head: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "t": round(time.time(), 6),
        "command": command,
        "profile": profile,
        "ok": code == 0,
        "exit_code": code,
    }
    return {**head, **fields}


def launch_fields(result: LaunchResult) -> dict[str, Any]:
    """A launch's nodes, refusals and errors."""
    started = [
        {
            "node": node.plan.node_rank,
            "host": node.plan.host,
            "run_id": node.plan.run_id,
            "pid": node.identity.pid,
            "log": node.plan.paths.log,
            "latest_log": node.plan.paths.latest_log,
        }
        for node in result.started
    ]
    refusals = [
        {"kind": r.kind.value, "host": r.host, "message": r.message, "forceable": r.kind.forceable}
        for r in result.refusals
    ]
    return {
        "started": started,
        "refusals": refusals,
        "errors": list(result.errors),
        "forced": result.forced,
        "rolled_back": kill_fields(result.rolled_back),
        "lines": launch_lines(result),
    }


def kill_fields(kills: Sequence[NodeKill]) -> list[dict[str, Any]]:
    """Each node's kill: what happened, what survived the grace period, what was released."""
    return [
        {
            "host": kill.host,
            "outcome": kill.outcome.value,
            "message": kill.message,
            "run_id": kill.run_id,
            "after_grace": [{"pid": p.pid, "name": p.name} for p in kill.after_grace],
            "remaining": [{"pid": p.pid, "name": p.name} for p in kill.remaining],
            "port_released": kill.port_released,
            "gpu_released": kill.gpu_released,
        }
        for kill in kills
    ]


def killed_document(profile: str, code: int, kills: Sequence[NodeKill]) -> dict[str, Any]:
    return document("kill", profile, code, killed=kill_fields(kills), lines=kill_lines(kills))


def emit(record: dict[str, Any]) -> None:
    """Print the document on standard output."""
    sys.stdout.write(json.dumps(record, ensure_ascii=True, default=str) + "\n")
    sys.stdout.flush()
