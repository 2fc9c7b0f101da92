"""``bringup launch``, ``kill`` and ``restart`` from a configuration file, on this machine."""

from __future__ import annotations

import argparse
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.io.launch_support import kill_group, live_group_members
from tests.net import free_port
from tui.cli import main
from tui.commands.watch import watch_plan
from tui.config import load_config

CONFIG = """
default_profile = "sleepy"

[profiles.sleepy]
log_dir = "{log_dir}"
port = {port}

[profiles.sleepy.launch]
command = "sh -c 'echo serving on {{port}}; sleep 60'"
grace_period = "15s"

[profiles.watcher]
log = "/var/log/server.log"
read_only = true

[profiles.broken.launch]
command = ["serve", "--draft", "{{drafter}}"]
"""


@pytest.fixture
def config(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "config.toml"
    path.write_text(CONFIG.format(log_dir=tmp_path / "logs", port=free_port()))
    yield path
    state = tmp_path / "logs" / ".bringup"
    for pid_file in state.glob("*.pid") if state.is_dir() else []:
        kill_group(int(pid_file.read_text().split()[0]))


def current(config: Path) -> dict[str, object]:
    link = config.parent / "logs" / ".bringup" / "sleepy-current.json"
    data: dict[str, object] = json.loads(link.read_text())
    return data


def test_launch_refuse_kill_and_restart(config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["launch", "--config", str(config)]) == 0
    out = capsys.readouterr().out
    assert "started run sleepy-" in out
    assert "sleepy-latest.log" in out
    first = current(config)
    assert main(["launch", "sleepy", "--config", str(config)]) == 1
    out = capsys.readouterr().out
    assert "refused: the previous run" in out
    assert "use --force" in out

    assert main(["restart", "--config", str(config), "--grace", "15s"]) == 0
    out = capsys.readouterr().out
    assert "stopped: exited 143 (SIGTERM)" in out
    assert "port released" in out
    second = current(config)
    assert second["previous_run"] == first["run_id"]

    assert main(["kill", "--config", str(config)]) == 0
    assert "stopped" in capsys.readouterr().out
    assert isinstance(second["pgid"], int)
    assert live_group_members(second["pgid"]) == []
    assert main(["kill", "--config", str(config)]) == 0
    assert "already stopped" in capsys.readouterr().out


def test_a_run_whose_pid_went_to_a_stranger_ends_and_a_new_launch_starts(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["launch", "--config", str(config)]) == 0
    first = current(config)
    pid_file = config.parent / "logs" / ".bringup" / f"{first['run_id']}.pid"
    _pid, start, boot = pid_file.read_text().split()
    kill_group(int(_pid))  # the run dies without writing its exit status
    stranger = subprocess.Popen(["sleep", "60"], start_new_session=True)
    try:
        pid_file.write_text(f"{stranger.pid} {start} {boot}\n")
        capsys.readouterr()
        assert main(["kill", "--config", str(config)]) == 0
        out = capsys.readouterr().out
        assert "nothing left to stop" in out
        assert f"process id {stranger.pid} now belongs to another process" in out
        assert stranger.poll() is None
        assert main(["launch", "--config", str(config)]) == 0
        assert "started run sleepy-" in capsys.readouterr().out
        assert current(config)["previous_run"] == first["run_id"]
    finally:
        stranger.kill()
        stranger.wait()


def test_read_only_and_invalid_profiles_are_refused(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for command in ("launch", "kill", "restart"):
        assert main([command, "watcher", "--config", str(config)]) == 1
        assert "read-only" in capsys.readouterr().err
    assert main(["launch", "broken", "--config", str(config)]) == 4
    err = capsys.readouterr().err
    assert "config.toml: profiles.broken: launch.command[2]" in err
    assert "no launch.drafter" in err
    assert main(["launch", "missing", "--config", str(config)]) == 4
    assert "no such profile" in capsys.readouterr().err


def test_watch_follows_the_launched_log_and_honours_read_only(config: Path) -> None:
    args = argparse.Namespace(
        profile="sleepy",
        local=False,
        host=None,
        engine=None,
        port=None,
        log=None,
        theme=None,
        read_only=False,
    )
    plan = watch_plan(args, load_config(config))
    assert plan.log == str(config.parent / "logs" / "sleepy-latest.log")
    assert not plan.profile.read_only
    args.read_only = True
    assert watch_plan(args, load_config(config)).profile.read_only
