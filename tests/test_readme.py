"""The README's promises: its configuration example loads, its quick start names the demo."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import REPO
from tui.config import load_config


def _readme() -> str:
    return (REPO / "README.md").read_text(encoding="utf-8")


def test_the_readme_configuration_example_loads(tmp_path: Path) -> None:
    example = _readme().split("```toml\n")[1].split("```")[0]
    path = tmp_path / "config.toml"
    path.write_text(example, encoding="utf-8")
    profile = load_config(path).profile(None)
    assert profile.name == "k25"
    assert profile.launch.tp == 8


def test_the_quick_start_runs_the_demo_and_the_tests() -> None:
    quick = _readme().split("## Quick start")[1].split("## ")[0]
    assert "bringup demo" in quick
    assert "python -m pytest" in quick
