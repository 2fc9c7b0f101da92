"""The import contracts in ``pyproject.toml`` (``[tool.importlinter]``) hold: the layers, the
engine's purity and the independence of its features. A broken contract fails with the report
of import-linter, which names every offending import and the chain it starts."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import pytest

from tests.conftest import REPO

# The console script ``lint-imports``, run by this interpreter so that it sees this checkout.
LINT_IMPORTS = (
    "import sys; from importlinter.cli import lint_imports_command as run; sys.exit(run())"
)


def test_import_contracts_are_kept() -> None:
    if importlib.util.find_spec("importlinter") is None:
        pytest.skip("import-linter is not installed (pip install -e '.[test]')")
    result = subprocess.run(
        [sys.executable, "-c", LINT_IMPORTS, "--no-cache", "--no-logo"],
        cwd=REPO,
        env={**os.environ, "COLUMNS": "120"},
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout
