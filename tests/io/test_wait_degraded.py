"""``bringup wait``, a real subprocess over the loopback SSH server, keeps READY through a blip.

The simulator answers ``/health`` 503 twice once the wait's test generation was served. With
``--settle`` the wait keeps watching after READY (longer than the 10 s between polls of a
serving server): it reports the verdict going DEGRADED and READY again, and still exits 0 with
READY.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO
from tests.simserver import FAST, SimFactory
from tests.sshd import TestServer
from tui.commands.wait import EXIT_READY, WaitPlan, register, wait_plan
from tui.commands.wait_output import describe
from tui.engine.judge.judge import VerdictChanged
from tui.engine.startup.vocabulary import Verdict


@pytest.fixture
def sims(tmp_path: Path) -> Iterator[SimFactory]:
    factory = SimFactory(tmp_path)
    yield factory
    factory.close()


def _wait(
    server: TestServer, log: Path, port: int, *flags: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "tui", "wait", "--host", server.alias, "--ssh-config",
               str(server.ssh_config), "--log", str(log), "--port", str(port), "--engine",
               "sglang", "--json", "--timeout", "90s", *flags]  # fmt: skip
    environment = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    return subprocess.run(
        command, capture_output=True, text=True, env=environment, timeout=150, cwd=REPO
    )


def _verdicts(records: list[dict[str, Any]]) -> list[str]:
    return [r["verdict"] for r in records if r["event"] == "verdict_changed"]


def test_wait_reports_degraded_then_ready_and_keeps_its_exit(
    ssh_server: TestServer, sims: SimFactory
) -> None:
    sim = sims(["--tp", "2", "--time-scale", FAST, "--health-503", "2"])
    result = _wait(ssh_server, sim.log, sim.port, "--settle", "16s")  # past one serving poll
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert result.returncode == EXIT_READY, result.stdout + result.stderr
    verdicts = _verdicts(records)
    ready = verdicts.index("READY")
    assert verdicts[ready:] == ["READY", "DEGRADED", "READY"], verdicts
    degraded = next(r for r in records if r.get("verdict") == "DEGRADED")
    assert degraded["previous"] == "READY"
    assert degraded["reason"].startswith("health 503 for ")
    health = [r["state"] for r in records if r["event"] == "health_changed"]
    assert "starting" in health[health.index("ready") :]
    final = records[-1]
    assert (final["event"], final["verdict"], final["exit_code"]) == ("verdict", "READY", 0)


def test_wait_without_settle_ends_ready_as_before(ssh_server: TestServer, sims: SimFactory) -> None:
    sim = sims(["--tp", "2", "--time-scale", FAST])
    result = _wait(ssh_server, sim.log, sim.port)
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert result.returncode == EXIT_READY, result.stdout + result.stderr
    assert _verdicts(records)[-1] == "READY"
    assert records[-1]["verdict"] == "READY"


def test_wait_sends_the_api_key_a_keyed_server_wants(
    ssh_server: TestServer, sims: SimFactory
) -> None:
    """The test generation is behind the key (SGLang guards every route but ``/health*`` and
    ``/metrics``): with ``$OPENAI_API_KEY`` the wait ends READY, without it it cannot."""
    sim = sims(["--tp", "2", "--time-scale", FAST, "--api-key", "s3cret"])
    keyed = _wait(ssh_server, sim.log, sim.port, env={"OPENAI_API_KEY": "s3cret"})
    assert keyed.returncode == EXIT_READY, keyed.stdout + keyed.stderr
    bare = _wait(ssh_server, sim.log, sim.port, "--timeout", "8s", env={"OPENAI_API_KEY": ""})
    assert bare.returncode != EXIT_READY, bare.stdout
    records = [json.loads(line) for line in bare.stdout.splitlines()]
    assert "READY" not in _verdicts(records)


def _plan(tmp_path: Path, *argv: str) -> WaitPlan:
    config = tmp_path / "config.toml"
    config.write_text('[profiles.h200]\nlog = "/var/log/s.log"\nport = 30000\n'
                      'api_key_env = "H200_KEY"\n'
                      '[profiles.h200.serving]\nhealth_grace = "5s"\n'
                      '[profiles.h200.monitor]\nhealth_interval = "2s"\n'
                      'health_interval_serving = "30s"\n')  # fmt: skip
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    return wait_plan(parser.parse_args(["wait", "h200", "--config", str(config), *argv]))


def test_the_grace_comes_from_the_profile_and_the_settle_from_the_command_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("H200_KEY", "k-h200")
    assert _plan(tmp_path).api_key == "k-h200"  # the profile's api_key_env, as watch and bench
    plan = _plan(tmp_path, "--settle", "3s")
    assert (plan.health_grace, plan.settle) == (5.0, 3.0)
    assert (plan.health_interval, plan.health_interval_serving) == (2.0, 30.0)
    assert _plan(tmp_path).settle == 0.5
    with pytest.raises(ValueError, match="--settle"):
        _plan(tmp_path, "--settle", "soon")


def test_a_verdict_change_is_one_plain_line_with_its_reason_made_safe() -> None:
    change = VerdictChanged(Verdict.DEGRADED, "health error (\x1b]0;x\x07boom) for 2 s", None)
    line = describe(change)
    assert line is not None
    assert line.startswith("verdict DEGRADED (health error (")
    assert "\x1b" not in line
    assert "\x07" not in line
