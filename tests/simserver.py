"""The simulator for tests: ``python -m tui.sim`` as a real subprocess on a free loopback port.

``SimFactory(tmp)`` starts simulators and kills them all at ``close()``; the ``start_sim``
fixture (a plugin of ``tests/conftest.py``, so every test can ask for it) is one per test.
``running_sim(tmp, flags)`` starts one and waits for its ready line, for a module-scoped
fixture::

    from tests.simserver import FAST, Sim, running_sim
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.net import free_port

READY = "The server is fired up and ready to roll!"
"""The line SGLang (and the simulator as SGLang) logs once it serves."""

FAST = "0.002"


class Sim:
    """One ``python -m tui.sim`` process, its log file and its address."""

    def __init__(
        self, tmp: Path, args: list[str], port: int | None = None, env: dict[str, str] | None = None
    ) -> None:
        self.port = port or free_port()
        self.log = tmp / f"sim-{self.port}.log"
        self.pid_file = tmp / f"sim-{self.port}.pid"
        self.state_file = tmp / f"sim-{self.port}.gpus.json"
        command = [
            sys.executable,
            "-m",
            "tui.sim",
            *args,
            "--port",
            str(self.port),
            "--log-file",
            str(self.log),
            "--pid-file",
            str(self.pid_file),
            "--state-file",
            str(self.state_file),
        ]
        self.proc = subprocess.Popen(
            command,
            cwd=REPO,
            stdin=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
            env={**os.environ, **(env or {})},
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def text(self) -> str:
        try:
            return self.log.read_bytes().decode("utf-8", "replace")
        except FileNotFoundError:
            return ""

    def wait_for(self, needle: str, timeout: float = 30.0) -> str:
        """Wait until ``needle`` is in the log; fail with the log's tail otherwise."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            text = self.text()
            if needle in text:
                return text
            if self.proc.poll() is not None:
                text = self.text()
                if needle in text:
                    return text
                break
            time.sleep(0.02)
        pytest.fail(f"{needle!r} not in the log (exit {self.proc.poll()}):\n{self.text()[-3000:]}")

    def wait_exit(self, timeout: float = 30.0) -> int:
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            pytest.fail(f"the simulator did not exit:\n{self.text()[-3000:]}")

    def rank_pids(self) -> list[int]:
        """The pids of the rank processes, from the GPU state file the simulator writes."""
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                pids = [int(gpu["pid"]) for gpu in json.loads(self.state_file.read_text())["gpus"]]
            except (OSError, ValueError, KeyError):
                pids = []
            if pids and all(pids):
                return pids
            time.sleep(0.02)
        pytest.fail("the simulator never wrote its GPU state")

    def terminate(self) -> int:
        self.proc.send_signal(signal.SIGTERM)
        return self.wait_exit()

    def kill(self) -> None:
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=10)
        if self.proc.stderr is not None:
            self.proc.stderr.close()


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def all_gone(pids: list[int], timeout: float = 10.0) -> bool:
    """Whether every process in ``pids`` ended (waiting up to ``timeout``)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not any(alive(pid) for pid in pids):
            return True
        time.sleep(0.05)
    return False


class SimFactory:
    """Starts simulators in one test's temporary folder and kills them all at the end."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.started: list[Sim] = []

    def __call__(
        self, args: list[str], port: int | None = None, env: dict[str, str] | None = None
    ) -> Sim:
        sim = Sim(self.tmp, args, port, env)
        self.started.append(sim)
        return sim

    def close(self) -> None:
        for sim in self.started:
            sim.kill()


@contextlib.contextmanager
def running_sim(
    tmp: Path, args: list[str], *, env: dict[str, str] | None = None, ready: str = READY
) -> Iterator[Sim]:
    """A simulator started with ``args`` that has logged ``ready``, killed when the block ends."""
    factory = SimFactory(tmp)
    try:
        server = factory(args, env=env)
        server.wait_for(ready)
        yield server
    finally:
        factory.close()


@pytest.fixture
def start_sim(tmp_path: Path) -> Iterator[SimFactory]:
    """``start_sim([flags])`` runs a simulator; every one is killed at teardown."""
    factory = SimFactory(tmp_path)
    yield factory
    factory.close()
