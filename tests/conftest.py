"""Fixtures shared by every test layer."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def shared_dir() -> Path | None:
    """The read-only ``shared/`` folder beside the checkout (or ``$BRINGUP_SHARED``)."""
    configured = os.environ.get("BRINGUP_SHARED")
    candidate = Path(configured) if configured else REPO.parent / "shared"
    return candidate if candidate.is_dir() else None


@pytest.fixture(scope="session")
def shared() -> Path:
    """Path to ``../shared``; tests that use it skip with a reason when it is absent."""
    found = shared_dir()
    if found is None:
        pytest.skip("../shared (real logs and GPU fixtures) is not beside this checkout")
    return found


@pytest.fixture(autouse=True)
def private_data_dir(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Run history written by any test (``bringup wait`` records start-ups) goes to a
    throwaway folder, never to the user's data folder."""
    monkeypatch.setenv("BRINGUP_DATA_DIR", str(tmp_path_factory.mktemp("data")))
