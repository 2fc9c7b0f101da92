"""What the benchmarks set up around the code they measure, in one place.

- ``free_port()``: a loopback port nothing listened on a moment ago;
- ``start_sim(port, flags)``: ``python -m tui.sim`` in a process of its own, its output dropped;
- ``wait_answering(url, path)``: poll until the server answers ``path`` with 200;
- ``embedded_ssh_target()``: the embedded SSH server in another process (so that its share of
  the CPU is not the measured process's), and the target that reaches it.

A script that runs as ``python bench/NAME.py`` puts the checkout on ``sys.path`` before it
imports this module.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx

from tui.io.transport.ssh import SshTarget

REPO = Path(__file__).resolve().parents[1]

SSH_SERVER = """
import asyncio, json, sys
from tui.io.transport.embedded_sshd import EmbeddedSshServer

async def main():
    async with EmbeddedSshServer() as server:
        info = server.info
        print(json.dumps({"alias": info.alias, "config": str(info.ssh_config)}), flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)

asyncio.run(main())
"""
"""Serves until its stdin closes; prints the alias and the ssh_config that reach it first."""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_sim(port: int, flags: list[str]) -> subprocess.Popen[bytes]:
    """The simulator on ``port`` with ``flags``, from the checkout, its output dropped."""
    command = [sys.executable, "-m", "tui.sim", "--port", str(port), *flags]
    return subprocess.Popen(
        command, cwd=REPO, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip


def wait_answering(
    url: str, path: str, *, body: dict[str, Any] | None = None, timeout: float = 120.0
) -> None:
    """Poll ``url + path`` (a GET, or a POST of ``body``) until it answers 200; exit the
    benchmark with a message after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(httpx.HTTPError):
            if body is None:
                answer = httpx.get(f"{url}{path}", timeout=2.0)
            else:
                answer = httpx.post(f"{url}{path}", json=body, timeout=2.0)
            if answer.status_code == 200:
                return
        time.sleep(0.2)
    raise SystemExit(f"the server at {url} did not answer {path} within {timeout:.0f}s")


@contextlib.asynccontextmanager
async def embedded_ssh_target() -> AsyncIterator[SshTarget]:
    """The embedded SSH server in a process of its own for the block, and its target."""
    server = await asyncio.create_subprocess_exec(
        sys.executable, "-c", SSH_SERVER, stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, cwd=REPO,
    )  # fmt: skip
    try:
        assert server.stdout is not None
        info = json.loads(await server.stdout.readline())
        yield SshTarget(info["alias"], config_path=Path(info["config"]))
    finally:
        server.terminate()
        await server.wait()
