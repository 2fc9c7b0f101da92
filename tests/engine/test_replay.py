"""``bringup replay``: the report (JSON and text) and the command's exits."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.engine.engine_helpers import fixed_clock, sglang_lines
from tui.engine.logs.replay_report import replay_chunks, report_json, report_text

LOG = (
    sglang_lines("server_args=ServerArgs(model_path='/m', tp_size=2)", rank="")
    + sglang_lines(
        "Load weight begin. avail mem=70.00 GB",
        "Scheduler hit an exception: Traceback (most recent call last):",
        rank="TP1",
        second=1,
    )
    + "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1 GiB\n"
    + "\x1b]0;owned\x07\x1b[2J[@click=app.quit]x[/]\n"
)
KEYS = {
    "engine", "lines", "ranks", "outcome", "last_stage", "failure", "stages",
    "startup_seconds", "decode", "runs_before",
}  # fmt: skip


def _bringup(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "tui", *args],
        cwd=REPO,
        input=stdin,
        capture_output=True,
        check=False,
        timeout=60,
    )


def test_json_report_has_the_documented_shape() -> None:
    report = report_json(replay_chunks([LOG.encode()], clock=fixed_clock))
    assert set(report) == KEYS
    assert report["engine"] == "sglang"
    assert report["lines"] == 5
    assert report["ranks"] == ["main", "TP1"]
    assert (report["outcome"], report["last_stage"]) == ("failed", "weight_loading")
    failure = report["failure"]
    assert (failure["kind"], failure["rank"], failure["line"]) == ("oom", "TP1", 3)
    assert "CUDA out of memory" in failure["excerpt"]
    assert report["stages"]["TP1"][-1] == {
        "stage": "weight_loading",
        "start": "2026-01-01 00:00:01",
        "seconds": None,
        "draft": False,
    }
    assert report["startup_seconds"] is None
    assert report["decode"] == {
        "lines": 0,
        "gen_throughput": [],
        "accept_len": [],
        "accept_rate": [],
    }


def test_text_report_is_plain_and_safe() -> None:
    text = report_text(replay_chunks([LOG.encode()], clock=fixed_clock))
    assert "outcome   FAILED (furthest stage: weight loading)" in text
    assert "failure   CUDA out of memory on TP1 at line 3 during weight loading" in text
    assert "oom" not in text
    assert "                 weight loading           2026-01-01 00:00:01" in text
    assert "TP1              process start" in text
    assert "\x1b" not in text


def test_command_prints_one_json_object_from_a_file(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_bytes(LOG.encode())
    result = _bringup("replay", str(log), "--json")
    assert result.returncode == 0, result.stderr
    assert set(json.loads(result.stdout)) == KEYS | {"schema_version", "t"}


def test_command_reads_stdin_and_forced_engine() -> None:
    result = _bringup("replay", "-", "--engine", "vllm", stdin=LOG.encode())
    assert result.returncode == 0, result.stderr
    assert b"engine    vllm" in result.stdout
    assert b"\x1b" not in result.stdout


@pytest.mark.parametrize("where", ["missing.log", "."])
def test_command_exits_4_naming_an_unreadable_file(tmp_path: Path, where: str) -> None:
    path = tmp_path / where
    result = _bringup("replay", str(path))
    assert result.returncode == 4
    assert str(path).encode() in result.stderr
    assert result.stdout == b""


def test_several_runs_report_the_last(tmp_path: Path) -> None:
    relaunched = LOG + sglang_lines(
        "server_args=ServerArgs(model_path='/m', tp_size=2)", rank="", second=30
    )
    report = report_json(replay_chunks([relaunched.encode()], clock=fixed_clock))
    assert report["runs_before"] == 1
    assert report["failure"] is None
    assert report["outcome"] == "incomplete"
    assert "this is the last of 2 runs" in report_text(
        replay_chunks([relaunched.encode()], clock=fixed_clock)
    )
