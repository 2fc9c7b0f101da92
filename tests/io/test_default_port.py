"""The health port when none is given: the engine's default, named or read from the log.

``bringup wait`` reports the port it polls (``health_port_chosen``); ``bringup watch`` asks
``watch_port.default_port`` before it builds the monitor.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from tui.commands.wait import WaitPlan
from tui.commands.wait_watch import wait_for_server
from tui.commands.watch_port import default_port
from tui.io.transport.host_session import HostSession, LocalConnector

VLLM = (
    "(APIServer pid=720) INFO 12-01 22:54:50 [api_server.py:1792] vLLM server version 0.33.0, "
    "serving model Qwen/Qwen3-8B\n"
    "(APIServer pid=720) INFO 12-01 22:54:50 [utils.py:238] non-default args: "
    "{'model_tag': 'Qwen/Qwen3-8B', 'model': 'Qwen/Qwen3-8B'}\n"
)
SGLANG = "[2025-01-01 00:00:00] server_args=ServerArgs(model_path='m', tp_size=1)\n"


@pytest.mark.parametrize(
    ("text", "engine", "expected"),
    [
        (VLLM, "auto", (8000, "vllm")),
        (SGLANG, "auto", (30000, "sglang")),
        ("", "auto", (30000, "sglang")),
        (SGLANG, "vllm", (8000, "vllm")),
    ],
)
async def test_watch_polls_the_default_port_of_the_engine(
    tmp_path: Path, text: str, engine: str, expected: tuple[int, str]
) -> None:
    log = tmp_path / "server.log"
    log.write_text(text)
    session = HostSession(LocalConnector())
    assert await default_port(session, str(log), engine) == expected
    assert session.closed


async def test_a_missing_log_leaves_the_default_engines_port(tmp_path: Path) -> None:
    session = HostSession(LocalConnector())
    assert await default_port(session, str(tmp_path / "later.log"), "auto") == (30000, "sglang")


async def test_wait_reports_that_a_vllm_log_is_polled_on_8000(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text(VLLM)
    plan = WaitPlan(None, str(log), None, "auto", 1.5, json=True, detect_port=True)
    out = io.StringIO()
    await wait_for_server(plan, out)
    records = [json.loads(line) for line in out.getvalue().splitlines()]
    chosen = [r for r in records if r["event"] == "health_port_chosen"]
    assert [(r["port"], r["engine"]) for r in chosen] == [(8000, "vllm")]
    detected = [r["event"] for r in records].index("engine_detected")
    assert [r["event"] for r in records].index("health_port_chosen") > detected


@pytest.mark.parametrize(("text", "port"), [(VLLM, 8000), (SGLANG, 30000)])
def test_the_watch_command_hands_the_monitor_the_engines_port(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, port: int
) -> None:
    from tui.app.monitor import app_runner, monitor_build
    from tui.cli import main

    log = tmp_path / "server.log"
    log.write_text(text)
    handed: list[int | None] = []

    def build_app(session: object, settings: monitor_build.WatchSettings, **_: object) -> object:
        handed.append(settings.port)
        return object()

    async def run_app(app: object, guard: object = None) -> int:
        return 0

    monkeypatch.setattr(monitor_build, "build_app", build_app)
    monkeypatch.setattr(app_runner, "run_app", run_app)
    assert main(["watch", "--local", "--log", str(log)]) == 0
    assert handed == [port]
