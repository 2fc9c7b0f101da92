"""The one exit-status table, command by command: a bad flag, a bad configuration, an
unreachable host and a closed standard output, each checked against ``ExitStatus``.

Every command of ``tui.cli.COMMANDS`` is in each table, with the reason when a case does not
apply to it. The host is 127.0.0.1 on a port nothing listens on.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.net import free_port
from tui.cli import COMMANDS, main
from tui.commands.exit_codes import ExitStatus, exit_table, markdown_table

NAMES = [name for name, _ in COMMANDS]

BAD_FLAG: dict[str, list[str]] = {name: [name, "--no-such-flag"] for name in NAMES}
BAD_FLAG["sim"] = ["sim", "--tp-size", "two"]  # the simulator accepts unknown flags, as servers do

BAD_CONFIG: dict[str, list[str] | str] = {
    "init": "writes the configuration, never reads it",
    "replay": ["replay", "{missing}"],  # an unreadable input file counts with the configuration
    "history": ["history"],
    "bench": ["bench", "far"],
    "stats": ["stats", "far"],
    "runs": ["runs"],
    "launch": ["launch", "far"],
    "kill": ["kill", "far"],
    "restart": ["restart", "far"],
    "sim": "reads no configuration",
    "watch": ["watch", "far"],
    "demo": "reads no configuration",
    "wait": ["wait", "far"],
    "completion": "reads no configuration (profile names are completed from it when it loads)",
}

UNREACHABLE: dict[str, list[str] | str] = {
    "init": "connects to nothing",
    "replay": "connects to nothing",
    "history": "connects to nothing",
    "bench": ["bench", "far"],
    "stats": ["stats", "far"],
    "runs": "connects to nothing",
    "launch": ["launch", "far"],
    "kill": ["kill", "far"],
    "restart": ["restart", "far"],
    "sim": "connects to nothing",
    "watch": "the monitor shows the refused connection and goes on until quit",
    "demo": "its host is started by itself",
    "wait": ["wait", "far", "--timeout", "30s"],
    "completion": "connects to nothing",
}

CLOSED_STDOUT: dict[str, list[str]] = {name: [name, "--help"] for name in NAMES}
CLOSED_STDOUT |= {
    "init": ["init", "--path", "{tmp}/new.toml"],
    "replay": ["replay", "{log}", "--json"],
    "history": ["history", "--json"],
    "runs": ["runs", "--json"],
    "wait": ["wait", "--local", "--log", "{log}", "--log-only", "--json"],
    "completion": ["completion", "bash"],
}

LOG = (
    "[2025-01-01 00:00:00] server_args=ServerArgs(model_path='m', tp_size=1)\n"
    "[2025-01-01 00:00:09] The server is fired up and ready to roll!\n"
)


@pytest.fixture
def places(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """A configuration whose profile ``far`` is on a dead port, and a short server log."""
    empty = tmp_path / "ssh_config"
    empty.write_text("")
    known = tmp_path / "known_hosts"
    known.write_text("")
    config = tmp_path / "config.toml"
    config.write_text(
        f'[profiles.far]\nhosts = ["127.0.0.1:{free_port()}"]\nport = 30000\n'
        f'log = "/var/log/server.log"\nssh_config = "{empty}"\nknown_hosts = "{known}"\n'
        '[profiles.far.launch]\ncommand = "serve"\n'
    )
    log = tmp_path / "server.log"
    log.write_text(LOG)
    monkeypatch.setenv("BRINGUP_CONFIG", str(config))
    return {"tmp": str(tmp_path), "log": str(log), "missing": str(tmp_path / "missing.log")}


def status(argv: list[str], places: dict[str, str]) -> int:
    """The exit status of ``bringup argv``, run in this process."""
    try:
        return main([arg.format(**places) for arg in argv])
    except SystemExit as leaving:
        return int(leaving.code or 0)


@pytest.mark.parametrize("name", NAMES)
def test_a_bad_flag_is_a_usage_error(name: str, places: dict[str, str]) -> None:
    assert status(BAD_FLAG[name], places) == ExitStatus.USAGE


@pytest.mark.parametrize("name", NAMES)
def test_a_bad_configuration_is_invalid_configuration(
    name: str, places: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    case = BAD_CONFIG[name]
    if isinstance(case, str):
        pytest.skip(case)
    bad = tmp_path / "config.toml"
    bad.write_text('[profiles.far]\nhosts = ["a"]\nport = "thirty"\n')
    assert status(case, places) == ExitStatus.CONFIG
    err = capsys.readouterr().err
    assert ("config.toml" in err) or ("missing.log" in err), err


@pytest.mark.parametrize("name", NAMES)
def test_an_unreachable_host_is_unreachable(
    name: str, places: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    case = UNREACHABLE[name]
    if isinstance(case, str):
        pytest.skip(case)
    assert status(case, places) == ExitStatus.UNREACHABLE
    assert "Traceback" not in capsys.readouterr().err


@pytest.mark.parametrize("name", NAMES)
def test_a_closed_stdout_ends_quietly_with_0(name: str, places: dict[str, str]) -> None:
    argv = [arg.format(**places) for arg in CLOSED_STDOUT[name]]
    env = {**os.environ, "BRINGUP_CONFIG": os.environ["BRINGUP_CONFIG"]}
    command = [sys.executable, "-m", "tui", *argv]
    reader, writer = os.pipe()
    os.close(reader)  # nobody will read: the first write fails with EPIPE
    try:
        result = subprocess.run(
            command, stdout=writer, stderr=subprocess.PIPE, cwd=REPO, env=env, timeout=120,
            check=False,
        )  # fmt: skip
    finally:
        os.close(writer)
    assert (result.returncode, result.stderr.decode()) == (ExitStatus.OK, "")


def test_every_help_shows_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    for name in NAMES:
        assert status([name, "--help"], {}) == ExitStatus.OK
        assert exit_table() in capsys.readouterr().out, name


def test_the_readme_shows_the_table() -> None:
    assert markdown_table() in (REPO / "README.md").read_text(encoding="utf-8")


def test_version_answers_to_both_spellings(capsys: pytest.CaptureFixture[str]) -> None:
    for flag in ("-V", "--version"):
        with pytest.raises(SystemExit) as leaving:
            main([flag])
        assert leaving.value.code == 0
        assert capsys.readouterr().out.startswith("bringup ")


def test_an_unexpected_error_is_5_with_its_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import tui.commands.history as history

    def broken(args: object) -> int:
        raise RuntimeError("a bug")

    monkeypatch.setattr(history, "run", broken)
    assert main(["history"]) == ExitStatus.ERROR
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err
    assert "RuntimeError: a bug" in err


FAILED_LOG = (
    "[2025-01-01 00:00:00] server_args=ServerArgs(model_path='/m', tp_size=2)\n"
    "[2025-01-01 00:00:01 TP1] Load weight begin. avail mem=70.00 GB\n"
    "[2025-01-01 00:00:01 TP1] Scheduler hit an exception: Traceback (most recent call last):\n"
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1 GiB\n"
)


@pytest.mark.parametrize(
    ("text", "code"),
    [
        (LOG, ExitStatus.OK),
        (FAILED_LOG, ExitStatus.FAILED),
        (LOG.splitlines(keepends=True)[0], ExitStatus.INCOMPLETE),
    ],
)
def test_replay_exit_status_follows_the_outcome(
    tmp_path: Path, text: str, code: int, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "server.log"
    log.write_text(text)
    assert main(["replay", str(log)]) == ExitStatus.OK, "without --exit-status: always 0"
    assert main(["replay", str(log), "--exit-status"]) == code
    assert main(["replay", str(log), "--exit-status", "--json"]) == code
