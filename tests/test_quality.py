"""Lint, format and type gates: ``ruff check``, ``ruff format --check`` and ``mypy --strict``
over the package, the tests and bench/."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from tests.conftest import REPO


def _run(module: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", module, *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )


def _skip_without_ruff() -> None:
    if shutil.which("ruff") is None and _run("ruff", "--version").returncode != 0:
        pytest.skip("ruff is not installed (pip install -e '.[test]')")


def test_ruff_is_clean() -> None:
    _skip_without_ruff()
    result = _run("ruff", "check", "tui", "tests", "bench")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format_is_clean() -> None:
    _skip_without_ruff()
    result = _run("ruff", "format", "--check", "tui", "tests", "bench")
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_strict_is_clean() -> None:
    if _run("mypy", "--version").returncode != 0:
        pytest.skip("mypy is not installed (pip install -e '.[test]')")
    result = _run("mypy")
    assert result.returncode == 0, result.stdout + result.stderr
