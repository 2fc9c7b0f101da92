"""``bringup wait`` against the simulated server over a real SSH server: every exit status.

The simulator is a real HTTP server on 127.0.0.1 whose log goes to a file; ``bringup wait``
reaches both through the SSH server, as it would a GPU host.
"""

from __future__ import annotations

import argparse
import io
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO
from tests.net import free_port
from tests.sshd import TestServer
from tui.commands.wait import WaitPlan, wait_plan
from tui.commands.wait_output import describe
from tui.commands.wait_watch import wait_for_server
from tui.engine.startup.log_events import FailureDetected
from tui.engine.startup.vocabulary import FailureKind

SCALE = "0.002"


@pytest.fixture
def processes() -> Iterator[list[subprocess.Popen[bytes]]]:
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for process in started:
        process.kill()
        process.wait()


def start_sim(started: list[subprocess.Popen[bytes]], log: Path, port: int, *flags: str) -> None:
    command = [sys.executable, "-m", "tui.sim", "--port", str(port), "--time-scale", SCALE]
    command += ["--log-file", str(log), *flags]
    started.append(subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))


def plan(server: TestServer, log: Path | None, port: int | None, timeout: float = 60) -> WaitPlan:
    return WaitPlan(
        server.alias, str(log) if log else None, port, "auto", timeout, json=True,
        ssh_config=server.ssh_config,
    )  # fmt: skip


async def run_wait(wait: WaitPlan) -> tuple[int, list[dict[str, Any]]]:
    out = io.StringIO()
    code = await wait_for_server(wait, out)
    return code, [json.loads(line) for line in out.getvalue().splitlines()]


async def test_a_healthy_start_is_ready_over_ssh(
    ssh_server: TestServer, tmp_path: Path, processes: list[subprocess.Popen[bytes]]
) -> None:
    log, port = tmp_path / "server.log", free_port()
    start_sim(processes, log, port, "--tp-size", "2")
    code, records = await run_wait(plan(ssh_server, log, port))
    assert code == 0
    names = [r["event"] for r in records]
    assert names[-1] == "verdict"
    assert records[-1]["verdict"] == "READY"
    assert "ready_line_seen" in names
    assert {"TP0", "TP1"} <= {r["rank"] for r in records if r["event"] == "stage_entered"}
    health = [r for r in records if r["event"] == "health_changed"]
    assert health[-1]["state"] == "ready"
    assert health[-1]["generation_ms"] is not None
    assert all(isinstance(r["t"], float) for r in records)


async def test_a_crashed_rank_fails(
    ssh_server: TestServer, tmp_path: Path, processes: list[subprocess.Popen[bytes]]
) -> None:
    log, port = tmp_path / "server.log", free_port()
    start_sim(processes, log, port, "--tp-size", "2", "--scenario", "rank-crash")
    code, records = await run_wait(plan(ssh_server, log, port))
    assert code == 1
    assert records[-1]["verdict"] == "FAILED"
    assert any(r["event"] == "failure_detected" for r in records)


async def test_a_start_that_never_finishes_times_out(
    ssh_server: TestServer, tmp_path: Path
) -> None:
    log = tmp_path / "server.log"
    log.write_text("[2025-01-01 00:00:00] server_args=ServerArgs(model_path='m', tp_size=1)\n")
    code, records = await run_wait(plan(ssh_server, log, None, timeout=1.5))
    assert code == 6
    assert records[-1]["verdict"] == "TIMEOUT"


async def test_a_log_that_does_not_exist_yet_is_waited_for(
    ssh_server: TestServer, tmp_path: Path
) -> None:
    code, records = await run_wait(plan(ssh_server, tmp_path / "later.log", None, timeout=1.5))
    assert code == 6
    assert any(r["event"] == "marker" and r["kind"] == "waiting" for r in records)


async def test_an_unknown_host_key_is_unreachable_with_its_fingerprint(
    ssh_server: TestServer, tmp_path: Path
) -> None:
    empty = tmp_path / "known_hosts"
    empty.write_text("")
    wait = plan(ssh_server, tmp_path / "server.log", None)
    wait = WaitPlan(**{**_fields(wait), "known_hosts": empty})
    code, records = await run_wait(wait)
    assert code == 3
    failed = [r for r in records if r["event"] == "connection_failed"]
    assert failed[0]["kind"] == "host-key"
    assert "SHA256:" in failed[0]["reason"]
    assert "ssh-keyscan" in failed[0]["hint"]


def _fields(wait: WaitPlan) -> dict[str, Any]:
    return {name: getattr(wait, name) for name in WaitPlan.__slots__}


def test_the_command_exits_3_when_the_port_is_closed(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "tui", "wait", "--host", f"127.0.0.1:{free_port()}"]
    command += ["--log", "/var/log/x.log", "--timeout", "30s", "--json"]
    (tmp_path / "config").write_text("")
    command += ["--ssh-config", str(tmp_path / "config")]
    result = subprocess.run(command, capture_output=True, text=True, cwd=REPO, check=False)
    assert result.returncode == 3, result.stderr
    verdict = json.loads(result.stdout.splitlines()[-1])
    assert verdict["verdict"] == "UNREACHABLE"


def test_the_command_follows_a_local_log_in_plain_text(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_bytes(
        b"[2025-01-01 00:00:00] server_args=ServerArgs(model_path='m', tp_size=1)\n"
        b"[2025-01-01 00:00:01] \x1b]0;evil title\x07Load weight begin. avail mem=78.50 GB\n"
        b"[2025-01-01 00:00:09] The server is fired up and ready to roll!\n"
    )
    command = [sys.executable, "-m", "tui", "wait", "--log", str(log), "--timeout", "30s"]
    command += ["--log-only"]
    result = subprocess.run(command, capture_output=True, text=True, cwd=REPO, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "READY: ready (log only: no port checked)" in result.stdout.splitlines()[-1]
    assert "\x1b" not in result.stdout


def test_a_failure_line_names_the_kind_by_its_code_and_in_words() -> None:
    failure = FailureDetected(7, "TP0", None, FailureKind.OOM, "torch.OutOfMemoryError: boom")
    assert describe(failure) == "FAILURE oom (CUDA out of memory): torch.OutOfMemoryError: boom"


@pytest.mark.parametrize(
    ("argv", "problem"),
    [
        (["--log", "x", "--timeout", "soon"], "--timeout"),
        (["--host", "h"], "nothing to wait for"),
    ],
)
def test_unusable_arguments_are_named(argv: list[str], problem: str) -> None:
    namespace = argparse.Namespace(
        profile=None, config=None, host=None, local=False, log=None, port=None, engine=None,
        timeout="15m", ssh_config=None, known_hosts=None, accept_new=False, json=False,
        plain=False,
    )  # fmt: skip
    for flag, value in zip(argv[::2], argv[1::2], strict=True):
        setattr(namespace, flag.lstrip("-").replace("-", "_"), value)
    with pytest.raises(ValueError, match=problem):
        wait_plan(namespace)


async def test_an_unexpected_error_ends_the_wait_instead_of_hanging(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from tui.commands.wait_watch import Watcher

    async def broken(self: Watcher, session: object, path: str) -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr(Watcher, "follow", broken)
    log = tmp_path / "server.log"
    log.write_text("")
    code, records = await run_wait(WaitPlan(None, str(log), None, "auto", 60, json=True))
    assert code == 5, "its own status, not the invalid configuration's 4"
    assert records[-1]["verdict"] == "ERROR"
    assert "a bug" in records[-1]["detail"]
    printed = capsys.readouterr().err
    assert "Traceback (most recent call last)" in printed
    assert 'raise RuntimeError("a bug")' in printed
