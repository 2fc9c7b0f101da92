"""The engine's own benchmark tool reaches the server where the host sees it: 127.0.0.1, or a
Slurm job's node 0 (its ``NodeAddr``) when the session's forwards were placed there."""

from __future__ import annotations

from tui.config import BenchConfig
from tui.engine.bench.load_plan import LoadLevel
from tui.io.bench.official_run import OfficialSetup, official_command
from tui.io.transport.host_session import HostSession, LocalConnector


def _host_after(argv: list[str]) -> str:
    return argv[argv.index("--host") + 1]


def test_the_tool_reaches_the_placed_node_zero() -> None:
    session = HostSession(LocalConnector())
    settings = BenchConfig(num_prompts=2, concurrency=(1,))
    plain = official_command(OfficialSetup(session, "sglang", 30000), settings, LoadLevel(1))
    assert _host_after(plain) == "127.0.0.1"
    session.place_api("10.1.2.3")
    setup = OfficialSetup(session, "sglang", 30000, host=session.api_host)
    assert _host_after(official_command(setup, settings, LoadLevel(1))) == "10.1.2.3"
