"""Every ``--json`` line of every command validates against its schema in docs/schemas/, and
a vLLM log followed without ``--port`` is polled on vLLM's 8000.

The commands run as a user runs them, against the simulator on uvicorn (SGLang on a free port;
vLLM on its default 8000 when that port is free here), a local launch and a saved log.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]
import pytest

from tests.conftest import REPO
from tests.io.launch_support import kill_group
from tests.net import free_port
from tests.simserver import FAST, Sim, SimFactory
from tui.commands.exit_codes import ExitStatus

SCHEMAS = REPO / "docs" / "schemas"
VLLM_PORT = 8000
LOG = (
    "[2025-01-01 00:00:00] server_args=ServerArgs(model_path='m', tp_size=1)\n"
    "[2025-01-01 00:00:09] The server is fired up and ready to roll!\n"
)


def validator(command: str) -> Any:
    schema = json.loads((SCHEMAS / f"{command}.schema.json").read_text(encoding="utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def documents(stdout: str, whole: bool) -> list[Any]:
    """The JSON a command printed: one document, or one per line."""
    return [json.loads(stdout)] if whole else [json.loads(line) for line in stdout.splitlines()]


def bringup(tmp: Path, *argv: str, expect: int = ExitStatus.OK) -> str:
    env = {**os.environ, "BRINGUP_DATA_DIR": str(tmp / "data")}
    env["BRINGUP_CONFIG"] = str(tmp / "config.toml")
    done = subprocess.run(
        [sys.executable, "-m", "tui", *argv], cwd=REPO, env=env, capture_output=True, text=True,
        timeout=180, check=False,
    )  # fmt: skip
    assert done.returncode == expect, done.stdout[-2000:] + done.stderr[-2000:]
    return done.stdout


def check(command: str, stdout: str, whole: bool = True) -> list[dict[str, Any]]:
    found = documents(stdout, whole)
    assert found, f"{command} printed no JSON"
    check_schema = validator(command)
    for record in found:
        check_schema.validate(record)
        assert record["schema_version"] == 1
        assert isinstance(record["t"], float)
    return found


@pytest.fixture
def config(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "config.toml"
    logs = tmp_path / "logs"
    path.write_text(
        f'[profiles.sleepy]\nlog_dir = "{logs}"\nport = {free_port()}\n'
        '[profiles.sleepy.launch]\ncommand = "sh -c \'sleep 60\'"\ngrace_period = "5s"\n'
    )
    yield path
    state = logs / ".bringup"
    for pid_file in state.glob("*.pid") if state.is_dir() else []:
        kill_group(int(pid_file.read_text().split()[0]))


def test_wait_bench_stats_history_and_runs_follow_their_schemas(
    start_sim: SimFactory, tmp_path: Path, config: Path
) -> None:
    sim = start_sim(["--time-scale", FAST, "--enable-metrics", "--ttft-ms", "5"])
    sim.wait_for("Uvicorn running")
    waited = bringup(
        tmp_path, "wait", "--local", "--log", str(sim.log), "--port", str(sim.port), "--json"
    )
    events = check("wait", waited, whole=False)
    assert events[-1]["verdict"] == "READY"
    assert any(e.get("log_time") for e in events), "the log's own times are given"
    bench = bringup(tmp_path, "bench", "--url", sim.url, "--json", "--concurrency", "1",
                    "--num-prompts", "2", "--warmup", "0", "--output-len", "4")  # fmt: skip
    check("bench", bench)
    check("stats", bringup(tmp_path, "stats", "--url", sim.url, "--json", "--count", "1"), False)
    check("history", bringup(tmp_path, "history", "--json"))
    (exported,) = check("runs", bringup(tmp_path, "runs", "--json"))
    assert exported["benchmarks"] or exported["runs"]


def test_replay_launch_and_kill_follow_their_schemas(tmp_path: Path, config: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text(LOG)
    check("replay", bringup(tmp_path, "replay", str(log), "--json"))
    (launched,) = check("launch", bringup(tmp_path, "launch", "sleepy", "--json"))
    assert launched["started"][0]["pid"] > 0
    (killed,) = check("kill", bringup(tmp_path, "kill", "sleepy", "--json", "--grace", "5s"))
    assert killed["ok"] is True
    (refused,) = check("restart", bringup(tmp_path, "restart", "nobody", "--json", expect=4))
    assert "nobody" in refused["error"]


def _free(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


@pytest.mark.skipif(not _free(VLLM_PORT), reason="port 8000 is taken on this machine")
def test_a_vllm_log_without_a_port_is_ready_through_8000(
    start_sim: SimFactory, tmp_path: Path
) -> None:
    sim = Sim(tmp_path, ["--engine", "vllm", "--time-scale", FAST], port=VLLM_PORT)
    start_sim.started.append(sim)
    events = check(
        "wait",
        bringup(tmp_path, "wait", "--local", "--log", str(sim.log), "--json", "--timeout", "2m"),
        whole=False,
    )
    chosen = [e for e in events if e["event"] == "health_port_chosen"]
    assert [(e["port"], e["engine"]) for e in chosen] == [(VLLM_PORT, "vllm")]
    health = [e for e in events if e["event"] == "health_changed"]
    assert health[-1]["state"] == "ready"
    assert events[-1]["verdict"] == "READY"
