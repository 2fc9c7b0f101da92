"""One host as the launcher sees it: each host script run through a transport, its output read.

Link failures and timeouts become :class:`NodeError` with the host's name in the message, so
the launcher can report per node instead of failing as a whole.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from tui.engine.launch.launch_plan import NodePlan
from tui.engine.launch.launch_report import HostFacts, Identity, parse_facts
from tui.engine.logs.sanitize import sanitize_line
from tui.io.launch import remote_scripts as scripts
from tui.io.transport.transport import CommandResult, TransportError

SCRIPT_TIMEOUT = 60.0
"""Seconds any one host script may take (the launch script waits up to 10 s for the start)."""


class Runner(Protocol):
    """The part of a transport the launcher needs."""

    async def run(
        self, argv: Sequence[str], *, stdin: bytes = b"", timeout: float | None = None
    ) -> CommandResult: ...


class NodeError(Exception):
    """A host could not be asked (link lost, timeout, a script that failed outright)."""


@dataclass(frozen=True, slots=True)
class Node:
    """A host name for messages, the transport that reaches it and the ``nvidia-smi`` to run
    there (an argument list; it reaches the host scripts as positional parameters)."""

    host: str
    runner: Runner
    nvidia_smi: tuple[str, ...] = ("nvidia-smi",)

    async def _run(self, name: str, body: str, args: Sequence[str | int | None]) -> HostFacts:
        argv = scripts.script(name, body, args)
        try:
            result = await self.runner.run(argv, timeout=SCRIPT_TIMEOUT)
        except (TransportError, OSError, TimeoutError) as exc:
            raise NodeError(f"{self.host}: {sanitize_line(str(exc), 200)}") from exc
        facts = parse_facts(result.stdout.decode("utf-8", "replace"))
        if result.status not in (0, 1, 17) or (result.status == 1 and not facts.errors):
            detail = sanitize_line(result.stderr.decode("utf-8", "replace").strip(), 300)
            raise NodeError(f"{self.host}: {name} script exited {result.status}: {detail}")
        return facts

    async def home(self) -> HostFacts:
        """The login's home folder and the host's boot id."""
        facts = await self._run("home", scripts.HOME, [])
        if not facts.home:
            raise NodeError(f"{self.host}: could not read $HOME")
        return facts

    async def preflight(self, plan: NodePlan) -> HostFacts:
        """Port listeners, GPU processes, the previous run and the model path."""
        args = [plan.port, plan.paths.state_dir, plan.stem, plan.model_path, plan.cwd]
        return await self._run("preflight", scripts.PREFLIGHT, [*args, *self.nvidia_smi])

    async def start(self, plan: NodePlan, record_json: str) -> HostFacts:
        """Create the log and record, then start the command in its own process group."""
        paths = plan.paths
        env = [f"{name}={value}" for name, value in plan.env]
        args: list[str | int | None] = [
            paths.log,
            paths.latest_log,
            paths.state_dir,
            paths.record,
            paths.current,
            paths.pid_file,
            paths.exit_file,
            record_json,
            plan.cwd,
            plan.venv,
            plan.conda_env,
            scripts.WRAPPER,
            "env",
            "--",
        ]
        args += env
        args += plan.argv
        return await self._run("launch", scripts.LAUNCH, args)

    async def probe(self, state_dir: str, stem: str, run_id: str | None = None) -> HostFacts:
        """The run ``run_id`` (default: the newest run of ``stem``): record, status, processes."""
        return await self._run("probe", scripts.PROBE, [state_dir, run_id, stem])

    async def signal(self, identity: Identity, signal_name: str) -> HostFacts:
        """Send ``signal_name`` to the run's process group, after checking it is still the run's."""
        args: list[str | int | None] = [identity.pid, identity.start, identity.boot, signal_name]
        return await self._run("signal", scripts.SIGNAL, args)

    async def state(self, port: int | None, pgid: int | None) -> HostFacts:
        """Who listens on ``port``, which processes use GPUs, what is left of group ``pgid``."""
        return await self._run("state", scripts.STATE, [port, pgid, *self.nvidia_smi])

    async def write(self, path: str, text: str) -> None:
        """Replace the file at ``path`` with ``text`` (written beside it, then renamed)."""
        facts = await self._run("write", scripts.WRITE, [path, text])
        if facts.errors:
            raise NodeError(f"{self.host}: {facts.errors[0]}")
