"""``bringup demo``: a simulated GPU host on loopback, reached over SSH like a real one.

``DemoHost`` starts the embedded SSH server (throwaway keys in a private temporary folder),
connects to it with the ordinary SSH transport, and launches the simulated server through that
connection in a session of its own (``setsid``), logging to a file the monitor then tails over
the same connection. Leaving the context (after the app has restored the terminal) kills the
simulated server's whole process group, stops the SSH server and removes every temporary file,
all within a fraction of a second, so the shell prompt comes back at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import shutil
import signal
import socket
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from tui.engine.servers import registry
from tui.io.gpu.gpu_telemetry import TelemetrySettings
from tui.io.transport.embedded_sshd import EmbeddedSshServer
from tui.io.transport.host_session import HostSession, SshConnector
from tui.io.transport.ssh import SshTarget

DEMO_MODEL = "moonshotai/Kimi-K2.5"
DEMO_DRAFTER = "lightseekorg/kimi-k2.5-eagle3"
PID_WAIT_SECONDS = 15.0
STOP_WAIT_SECONDS = 5.0
_ROOT = Path(__file__).resolve().parents[3]


@dataclass(frozen=True, slots=True)
class DemoOptions:
    """What the simulated server does: engine, scenario, speed and size."""

    engine: str = registry.default().name
    scenario: str = "ok"
    time_scale: float = 0.05
    tp_size: int = 8
    collapse_after: float = 15.0
    """``--scenario accept-collapse``: seconds after the first request (the demo's own
    benchmark) when the accept length falls to 1."""


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def sim_argv(options: DemoOptions, port: int, folder: Path) -> list[str]:
    """The simulated server's command line: a TP8 speculative launch, as ``sglang serve``;
    its pid file and simulated GPU state live in the demo's folder."""
    return [
        sys.executable, "-m", "tui.sim",
        "--model-path", DEMO_MODEL,
        "--tp-size", str(options.tp_size),
        "--speculative-algorithm", "EAGLE3",
        "--speculative-draft-model-path", DEMO_DRAFTER,
        "--port", str(port),
        "--engine", options.engine,
        "--scenario", options.scenario,
        "--collapse-after", str(options.collapse_after),
        "--enable-metrics",
        "--time-scale", str(options.time_scale),
        "--pid-file", str(folder / "server.pid"),
        "--state-file", str(folder / "gpus.json"),
    ]  # fmt: skip


def launch_script(argv: list[str], log: Path) -> str:
    """Shell text that starts ``argv`` detached in its own session, output to ``log``."""
    root = shlex.quote(str(_ROOT))
    return (
        f"cd {root} && PYTHONPATH={root} setsid {shlex.join(argv)}"
        f" > {shlex.quote(str(log))} 2>&1 < /dev/null &"
    )


class DemoHost:
    """The embedded SSH server, the connection to it and the simulated server it launched."""

    def __init__(self, options: DemoOptions) -> None:
        self.options = options
        self.folder = Path(tempfile.mkdtemp(prefix="bringup-demo-"))
        self.log_path = self.folder / "server.log"
        self.pid_file = self.folder / "server.pid"
        self.port = free_port()
        self.server = EmbeddedSshServer()
        self.session: HostSession | None = None
        self.sim_pid: int | None = None

    @property
    def state_file(self) -> Path:
        """Where the simulated server writes its GPUs' memory and utilisation."""
        return self.folder / "gpus.json"

    def telemetry(self) -> TelemetrySettings:
        """The simulated ``nvidia-smi``, reading the simulated server's GPU state."""
        command = ("env", f"PYTHONPATH={_ROOT}", sys.executable, "-m", "tui.sim.nvidia_smi",
                   "--state-file", str(self.state_file))  # fmt: skip
        return TelemetrySettings(command=command)

    @property
    def label(self) -> str:
        return "simulated-gpu-host"

    async def __aenter__(self) -> DemoHost:
        try:
            await self.start()
        except BaseException:
            await self.stop()
            raise
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()

    async def start(self) -> None:
        info = await self.server.start()
        target = SshTarget(info.alias, config_path=info.ssh_config, use_agent=False)
        self.session = HostSession(SshConnector(target))
        await self.session.start()
        self.log_path.touch()
        argv = sim_argv(self.options, self.port, self.folder)
        result = await self.session.run(["sh", "-c", launch_script(argv, self.log_path)])
        if not result.ok:
            raise RuntimeError(f"the simulated server did not start: {result.stderr!r}")
        self.sim_pid = await self._wait_for_pid()

    async def _wait_for_pid(self) -> int:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + PID_WAIT_SECONDS
        while loop.time() < deadline:
            with contextlib.suppress(OSError, ValueError):
                return int(self.pid_file.read_text().strip())
            await asyncio.sleep(0.05)
        raise RuntimeError(f"the simulated server wrote no pid file within {PID_WAIT_SECONDS} s")

    async def stop(self) -> None:
        """Stop everything this demo started; safe to call more than once."""
        await self._stop_sim()
        if self.session is not None:
            await self.session.close()
            self.session = None
        await self.server.stop()
        shutil.rmtree(self.folder, ignore_errors=True)

    def abandon(self) -> None:
        """The terminal is gone and the process is about to end: stop the simulated server and
        remove every file now, without the event loop (what is in-process dies with it)."""
        pid, self.sim_pid = self.sim_pid, None
        if pid is None:  # launched, but its pid not read yet
            with contextlib.suppress(OSError, ValueError):
                pid = int(self.pid_file.read_text().strip())
        if pid is not None:
            _kill_group_now(pid)
        # The SSH server's key folder exists before its ``info`` does (it is made first).
        keys = getattr(self.server, "_dir", None)
        if isinstance(keys, Path):
            shutil.rmtree(keys, ignore_errors=True)
        shutil.rmtree(self.folder, ignore_errors=True)

    async def _stop_sim(self) -> None:
        """End the simulated server at once: the terminal is already restored and the user
        waits for the prompt, and a simulation has nothing to drain. Its whole process group
        gets SIGKILL here (the host is this machine), which no process can ignore or outlive;
        waiting for the kernel to tear the processes down would only keep the prompt away."""
        pid, self.sim_pid = self.sim_pid, None
        if pid is None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)


def _kill_group_now(group: int) -> None:
    """SIGTERM the group, give it a moment, then SIGKILL whatever is left."""
    for number, wait in ((signal.SIGTERM, STOP_WAIT_SECONDS), (signal.SIGKILL, 1.0)):
        try:
            os.killpg(group, number)
        except (ProcessLookupError, PermissionError):
            return
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            try:
                os.killpg(group, 0)
            except ProcessLookupError:
                return
            time.sleep(0.05)
