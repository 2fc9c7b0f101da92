"""A configuration with several mistakes: every one is reported at once, each with its file,
line and key, and a suggestion for a misspelt key or binding id."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO
from tui.config import ConfigError, parse_config
from tui.config.config_text import ConfigErrors

FILE = Path("/etc/bringup/config.toml")
SEVERAL = """\
theme = "nord"
notifi = "never"
notify = "loud"
history_dir = "/var/lib/bringup"

[keys]
lauch = "x"
quit = "q q"
launch = "L"

[profiles.a]
engnie = "sglang"
port = 0
hosts = ["ok", "-oProxyCommand=x", 3]

[profiles.a.bench]
concurency = [1]
request_rate = [0, 2]
"""
EXPECTED = [
    (2, "notifi", "unknown key (did you mean 'notify'?)"),
    (3, "notify", "must be one of 'auto', 'always', 'never', got 'loud'"),
    (
        4,
        "history_dir",
        "no longer read: run history and benchmark results are one file in data_dir",
    ),
    (7, "keys.lauch", "no binding has this id (did you mean 'launch'?)"),
    (8, "keys.quit", "expected key names separated by commas, like 'r,ctrl+r'"),
    (12, "profiles.a.engnie", "unknown key (did you mean 'engine'?)"),
    (13, "profiles.a.port", "must be between 1 and 65535, got 0"),
    (14, "profiles.a.hosts[1]", None),
    (14, "profiles.a.hosts[2]", "expected a string, got an integer"),
    (17, "profiles.a.bench.concurency", "unknown key (did you mean 'concurrency'?)"),
    (18, "profiles.a.bench.request_rate[0]", 'must be positive numbers or "inf"'),
]


def test_every_error_is_reported_with_file_line_key_and_suggestion() -> None:
    with pytest.raises(ConfigErrors) as caught:
        parse_config(SEVERAL, FILE)
    errors = caught.value.errors
    assert [(e.line, e.key) for e in errors] == [(line, key) for line, key, _ in EXPECTED]
    for error, (_, _, problem) in zip(errors, EXPECTED, strict=True):
        assert error.file == str(FILE)
        if problem is not None:
            assert error.problem == problem
    lines = str(caught.value).splitlines()
    assert lines == [f"{FILE}:{e.line}: {e.key}: {e.problem}" for e in errors]


def test_the_first_error_is_the_exception_itself() -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config(SEVERAL, FILE)
    assert (caught.value.line, caught.value.key) == (2, "notifi")


def test_one_error_reads_as_before() -> None:
    with pytest.raises(ConfigErrors) as caught:
        parse_config("[keys]\nrestrat = 'x'\n", FILE)
    assert str(caught.value) == (
        f"{FILE}:2: keys.restrat: no binding has this id (did you mean 'restart'?)"
    )


def test_an_id_like_nothing_points_at_the_help_screen() -> None:
    with pytest.raises(ConfigErrors, match=r"keys.zzz: no binding has this id \(see the help"):
        parse_config("[keys]\nzzz = 'x'\n", FILE)


def test_a_misspelt_default_profile_is_suggested() -> None:
    with pytest.raises(ConfigErrors, match="no such profile \\(did you mean 'main'\\?\\)"):
        parse_config("default_profile = 'mian'\n[profiles.main]\n", FILE)


def test_a_command_prints_every_error(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(SEVERAL)
    done = subprocess.run(
        [sys.executable, "-m", "tui", "runs", "--config", str(config)],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode != 0
    for line, key, _ in EXPECTED:
        assert f"{config}:{line}: {key}: " in done.stderr
    assert "Traceback" not in done.stderr
