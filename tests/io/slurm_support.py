"""Helpers for the Slurm tests: a configuration with a Slurm profile, and the job's processes
as /proc shows them."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path

from tests.conftest import REPO

SIM = [
    sys.executable, "-m", "tui.sim", "--tp", "4", "--nnodes", "{nnodes}",
    "--node-rank", "{node_rank}", "--dist-init-addr", "{dist_init_addr}",
    "--time-scale", "0.02", "--state-file", "{log_dir}/gpu-{node_rank}.json",
]  # fmt: skip
"""The simulated server as a node's task (the port is added per node: both nodes share this
machine, and node 1 answers a dummy ``/health`` on a port of its own)."""


def toml_list(items: list[str]) -> str:
    return "[" + ", ".join(_toml_text(item) for item in items) + "]"


def _toml_text(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


def sim_command(port: int, *extra: str) -> list[str]:
    """The simulator on ``port`` for node 0 and ``port + 1 + rank`` for the others."""
    script = (
        'port=$1; shift; [ "$BRINGUP_NODE_RANK" = 0 ] || port=$((port + 1 + BRINGUP_NODE_RANK)); '
        'exec "$@" --port "$port"'
    )
    return ["sh", "-c", script, "sh", str(port), *SIM, *extra]


def slurm_config(
    path: Path,
    log_dir: Path,
    command: list[str],
    *,
    nodes: int = 2,
    port: int = 30000,
    slurm: str = "",
    extra: str = "",
    login: str | None = None,
) -> Path:
    """Write a configuration whose profile ``big`` submits ``command`` to Slurm."""
    login_line = f"login = {_toml_text(login)}\n" if login else ""
    path.write_text(
        f'default_profile = "big"\n\n[profiles.big]\nscheduler = "slurm"\n'
        f"log_dir = {_toml_text(str(log_dir))}\nport = {port}\n{extra}\n"
        f"[profiles.big.launch]\ncommand = {toml_list(command)}\n"
        f'cwd = {_toml_text(str(REPO))}\ngrace_period = "10s"\n\n'
        f"[profiles.big.slurm]\nnodes = {nodes}\n{login_line}{slurm}\n"
    )
    return path


def processes_with(marker: str) -> list[tuple[int, list[str]]]:
    """Live processes with ``marker`` as one of their arguments (pid, argv)."""
    found: list[tuple[int, list[str]]] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            raw = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        argv = [part.decode(errors="replace") for part in raw.split(b"\0")[:-1]]
        if state not in ("Z", "X") and marker in argv:
            found.append((int(entry.name), argv))
    return found


def processes_of(log_dir: Path) -> list[tuple[int, list[str]]]:
    """Live simulator processes whose state file is under ``log_dir`` (the job's tasks)."""
    folder = str(log_dir) + "/"
    return [
        (pid, argv)
        for pid, argv in processes_with("--state-file")
        if any(part.startswith(folder) for part in argv)
    ]


def eventually(check: Callable[[], object], timeout: float = 30.0, every: float = 0.2) -> object:
    """``check()``'s first truthy value within ``timeout`` seconds (AssertionError if none)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(every)
    raise AssertionError(f"not true within {timeout} s: {check}")
