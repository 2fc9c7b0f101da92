"""``bringup wait --json ... | head -1`` ends with 0 and nothing on standard error; SIGINT and
SIGTERM end a headless wait with 130 and 143, without a traceback."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO
from tui.commands.exit_codes import ExitStatus

STARTED = "[2025-01-01 00:00:00] server_args=ServerArgs(model_path='m', tp_size=1)\n"


def wait_command(log: Path, *flags: str) -> list[str]:
    return [sys.executable, "-m", "tui", "wait", "--local", "--log", str(log), "--log-only", *flags]


def test_wait_json_into_head_exits_0_with_nothing_on_stderr(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text(STARTED)  # never ready: the verdict comes after head has gone
    command = wait_command(log, "--json", "--timeout", "2s")
    wait = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO)
    assert wait.stdout is not None
    head = subprocess.Popen(["head", "-1"], stdin=wait.stdout, stdout=subprocess.PIPE)
    wait.stdout.close()  # only head reads the pipe now
    first, _ = head.communicate(timeout=60)
    _, err = wait.communicate(timeout=60)
    assert first.startswith(b'{"schema_version": 1, "t": ')
    assert (wait.returncode, err.decode()) == (ExitStatus.OK, "")


@pytest.mark.parametrize(
    ("number", "code"),
    [(signal.SIGINT, ExitStatus.INTERRUPTED), (signal.SIGTERM, ExitStatus.TERMINATED)],
)
def test_a_signal_ends_the_wait_with_its_status_and_no_traceback(
    tmp_path: Path, number: int, code: int
) -> None:
    log = tmp_path / "server.log"
    log.write_text(STARTED)
    command = wait_command(log, "--timeout", "5m")
    wait = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO)
    assert wait.stdout is not None
    assert b"connected" in wait.stdout.readline() + wait.stdout.readline()
    wait.send_signal(number)
    _, err = wait.communicate(timeout=60)
    assert wait.returncode == code
    assert "Traceback" not in err.decode()
