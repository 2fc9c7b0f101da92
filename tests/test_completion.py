"""Shell completion: ``bringup completion bash|zsh|fish`` prints argcomplete's script, and the
answers come from the real parser, with profile and theme names from the configuration."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO


def completions(line: str, tmp_path: Path, config: Path) -> list[str]:
    """What a shell would offer for ``line`` (the cursor at its end)."""
    answer = tmp_path / "answer"
    env = {
        **os.environ, "_ARGCOMPLETE": "1", "_ARGCOMPLETE_STDOUT_FILENAME": str(answer),
        "COMP_LINE": line, "COMP_POINT": str(len(line)), "_ARGCOMPLETE_IFS": "\n",
        "BRINGUP_CONFIG": str(config),
    }  # fmt: skip
    subprocess.run(
        [sys.executable, "-m", "tui"], cwd=REPO, env=env, check=True, timeout=60,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    return [word.strip() for word in answer.read_text().split("\n")]


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "config.toml"
    path.write_text('[profiles.alpha]\nhosts = ["a"]\n[profiles.beta]\nhosts = ["b"]\n')
    return path


def test_commands_flags_profiles_and_themes_are_completed(tmp_path: Path, config: Path) -> None:
    assert completions("bringup wa", tmp_path, config) == ["watch", "wait"]
    assert {"alpha", "beta", "--timeout"} <= set(completions("bringup wait ", tmp_path, config))
    assert completions("bringup kill al", tmp_path, config) == ["alpha"]
    assert "bringup-dark" in completions("bringup watch --theme ", tmp_path, config)


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_each_shell_gets_a_script_that_calls_bringup(shell: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tui", "completion", shell], cwd=REPO, capture_output=True,
        text=True, check=True, timeout=60,
    )  # fmt: skip
    assert "_ARGCOMPLETE" in done.stdout
    assert "bringup" in done.stdout


def test_bash_loads_the_script() -> None:
    script = subprocess.run(
        [sys.executable, "-m", "tui", "completion", "bash"], cwd=REPO, capture_output=True,
        text=True, check=True, timeout=60,
    ).stdout  # fmt: skip
    done = subprocess.run(
        ["bash", "-c", f"{script}\ncomplete -p bringup"], capture_output=True, text=True,
        check=True, timeout=60,
    )  # fmt: skip
    assert "bringup" in done.stdout
