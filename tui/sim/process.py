"""The server's process tree: one small child process per rank (plus helpers), and its end.

Children run ``python -m tui.sim.rank`` and sit idle until told to fail; they exit when the
main process's pipe closes, so they die with it however it dies. Each carries the process title
the engine gives it (SGLang ``sglang::scheduler_TP3``, vLLM ``VLLM::Worker_TP0``) as its
``argv[0]``, so tools that find ranks by title (``ps``, ``py-spy``) find these.
``kill_tree`` is what SGLang's ``kill_process_tree`` does: SIGKILL every child, then
(optionally) the main process.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import tui
from tui.sim.config import VLLM_ENGINE

_PACKAGE_ROOT = str(Path(tui.__file__).resolve().parents[1])


@dataclass(slots=True)
class Child:
    """One child process and what it stands for."""

    name: str
    tag: str | None
    popen: subprocess.Popen[bytes]
    released: bool = False

    @property
    def pid(self) -> int:
        return self.popen.pid


class ProcessTree:
    """Spawns, commands, watches and kills the children of the simulated server."""

    def __init__(self) -> None:
        self.children: list[Child] = []

    def spawn(self, name: str, tag: str | None = None, title: str | None = None) -> Child:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            part for part in (_PACKAGE_ROOT, env.get("PYTHONPATH", "")) if part
        )
        popen = subprocess.Popen(
            [title or sys.executable, "-m", "tui.sim.rank"],
            executable=sys.executable,
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            env=env,
        )
        child = Child(name, tag, popen)
        self.children.append(child)
        return child

    def tell(self, index: int, command: str) -> None:
        """Send a command; after anything but ``abort`` its exit is expected."""
        if not 0 <= index < len(self.children):
            return
        child = self.children[index]
        child.released = command != "abort"
        stdin = child.popen.stdin
        if stdin is None:
            return
        try:
            stdin.write(command.encode() + b"\n")
            stdin.flush()
        except (BrokenPipeError, OSError):
            return

    def crashed(self) -> Child | None:
        """The first child that died without being told to."""
        for child in self.children:
            if not child.released and child.popen.poll() is not None:
                child.released = True
                return child
        return None

    def pid_of(self, tag: str) -> int:
        """The pid of the child that logs as ``tag`` (the main pid when none does)."""
        for child in self.children:
            if child.tag == tag:
                return child.pid
        return os.getpid()

    def kill_all(self) -> None:
        """SIGKILL every child and reap it."""
        for child in self.children:
            child.released = True
            if child.popen.poll() is None:
                try:
                    child.popen.kill()
                except ProcessLookupError:
                    continue
        for child in self.children:
            _reap(child)


def process_title(engine: str, name: str, tag: str | None) -> str:
    """The title the engine sets on a child: SGLang names a scheduler after its rank tags."""
    if engine == VLLM_ENGINE:
        return f"VLLM::{name}"
    if tag is not None and name.startswith("scheduler"):
        return "sglang::scheduler_" + "_".join(tag.split())
    return f"sglang::{name}"


def _reap(child: Child) -> None:
    try:
        child.popen.wait(timeout=5)
    except subprocess.TimeoutExpired:
        return


def kill_self() -> None:
    """Die as ``kill_process_tree`` leaves the main process: by SIGKILL (exit 137)."""
    os.kill(os.getpid(), signal.SIGKILL)
