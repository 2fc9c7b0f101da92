"""A server that stopped after its ready line is STOPPED in the app and in ``bringup wait``.

The same log goes to the monitor (headless, through the real engine and judge) and to the real
``bringup wait --local --log`` command: both must say STOPPED, and the wait must exit non-zero.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from textual.pilot import Pilot

from tests.conftest import REPO
from tests.ui.monitor_factory import READY_HEALTH, make_monitor
from tui.app.monitor.monitor_app import MonitorApp
from tui.app.monitor.view_model import ConnectionState
from tui.app.widgets.health_badge import VerdictBadge
from tui.commands.wait import EXIT_FAILED
from tui.engine.startup.vocabulary import Verdict

CORPUS_LOG = "021_vllm_v0170-qwen25-7b-serve-ready-shutdown.log"
READY_LINE = b"Application startup complete."
_API = "(APIServer pid=4242) INFO 05-04 10:{} [{}] {}\n"
_CORE = "(EngineCore_DP0 pid=4300) INFO 05-04 10:{} [{}] {}\n"
MINIMAL_VLLM_LOG = "".join(
    [
        _API.format("00:01", "utils.py:302", "vLLM version 0.17.0"),
        _API.format("00:01", "utils.py:238", "non-default args: {'model': 'Qwen/Qwen2.5-7B'}"),
        _CORE.format(
            "00:09", "gpu_model_runner.py:4255", "Starting to load model Qwen/Qwen2.5-7B..."
        ),
        _CORE.format(
            "01:40",
            "gpu_model_runner.py:4338",
            "Model loading took 14.4 GiB memory and 90.2 seconds",
        ),
        _CORE.format("02:05", "kv_cache_utils.py:1314", "GPU KV cache size: 782,800 tokens"),
        _CORE.format(
            "02:15", "gpu_model_runner.py:5360", "Graph capturing finished in 9 secs, took 3.19 GiB"
        ),
        _API.format(
            "02:19", "api_server.py:500", "Starting vLLM API server 0 on http://127.0.0.1:8000"
        ),
        "(APIServer pid=4242) INFO:     Started server process [4242]\n",
        "(APIServer pid=4242) INFO:     Waiting for application startup.\n",
        "(APIServer pid=4242) INFO:     Application startup complete.\n",
        '(APIServer pid=4242) INFO:     127.0.0.1:44056 - "GET /health HTTP/1.1" 200 OK\n',
        _API.format("31:56", "launcher.py:122", "Shutting down FastAPI HTTP server."),
        "(APIServer pid=4242) INFO:     Shutting down\n",
        "(APIServer pid=4242) INFO:     Waiting for application shutdown.\n",
        "(APIServer pid=4242) INFO:     Application shutdown complete.\n",
    ]
).encode()


def _log_bytes(source: str, request: pytest.FixtureRequest) -> bytes:
    if source == "minimal":
        return MINIMAL_VLLM_LOG
    shared: Path = request.getfixturevalue("shared")
    return (shared / "corpus" / "logs" / CORPUS_LOG).read_bytes()


async def _app_verdict(app: MonitorApp, pilot: Pilot[int]) -> Verdict:
    app.state.touch()
    app.flush()
    await pilot.pause()
    return app.screen.query_one(VerdictBadge).verdict


def _wait(log: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    command = [sys.executable, "-m", "tui", "wait", "--local", "--log", str(log), "--timeout", "60"]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=120, cwd=REPO)


@pytest.mark.parametrize("source", ["corpus", "minimal"])
async def test_a_server_stopped_after_ready_is_stopped_in_the_app_and_in_wait(
    source: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    data = _log_bytes(source, request)
    ready_end = data.index(b"\n", data.index(READY_LINE)) + 1
    app, _ = make_monitor()
    async with app.run_test(size=(160, 48)) as pilot:
        app.state.set_connection(ConnectionState.CONNECTED)
        app.state.set_health(READY_HEALTH)
        app.state.feed(data[:ready_end])
        assert await _app_verdict(app, pilot) is Verdict.READY
        app.state.feed(data[ready_end:])
        app.state.finish()
        assert await _app_verdict(app, pilot) is Verdict.STOPPED

    log = tmp_path / "server.log"
    log.write_bytes(data)
    result = _wait(log)
    lines = result.stdout.splitlines()
    assert result.returncode == EXIT_FAILED, result.stdout + result.stderr
    assert any("server stopped" in line for line in lines), result.stdout
    assert "STOPPED: the server stopped after it was ready" in lines[-1], result.stdout
    assert not any(" READY:" in line for line in lines), result.stdout
