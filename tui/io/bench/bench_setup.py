"""Where and how the app benchmarks a server: the profile's ``[bench]`` table and the host."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from tui.config import BenchConfig
from tui.io.transport.host_session import HostSession


@dataclass(frozen=True, slots=True)
class BenchOptions:
    """The profile's side of the benchmark: its ``[bench]`` table and where results go."""

    config: BenchConfig = field(default_factory=BenchConfig)
    profile: str | None = None
    data_dir: Path | None = None
    venv: str | None = None
    conda_env: str | None = None
    api_key: str | None = None
    """Sent as a bearer token (the profile's ``api_key_env``, else ``$OPENAI_API_KEY``)."""


DEMO_BENCH = BenchOptions(
    BenchConfig(num_prompts=4, input_len=64, output_len=64, concurrency=(1, 4))
)
"""The demo's workload: two levels that finish in seconds against the simulated server."""


@dataclass(frozen=True, slots=True)
class BenchSetup:
    """Where the server is: the host session (port forward, commands) and the port on the host."""

    session: HostSession
    port: int
    engine: str = "auto"
    options: BenchOptions = field(default_factory=BenchOptions)
    host: str | None = None

    @property
    def address(self) -> str:
        """The server's address as it is stored with each result."""
        return f"http://{self.host or 'localhost'}:{self.port}"
