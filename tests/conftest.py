"""Fixtures shared by every test layer."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.slurm import SlurmCluster, slurm_missing, start_cluster
from tests.sshd import SERVER_ID, TestServer, start_server

REPO = Path(__file__).resolve().parents[1]
pytest_plugins = ("tests.simserver",)
"""Fixtures defined beside their helpers (``start_sim``)."""


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


@pytest.fixture(scope="session", params=[pytest.param(SERVER_ID, id=SERVER_ID)])
def ssh_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestServer]:
    """One SSH server on 127.0.0.1 for the whole session: OpenSSH sshd where installed, else
    the embedded one (see ``tests/sshd.py``)."""
    server = start_server(tmp_path_factory.mktemp("sshd"))
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def slurm_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SlurmCluster]:
    """A loopback Slurm cluster (munged, slurmctld, slurmd ``gpu1`` and ``gpu2``) for the whole
    session, stopped with every job cancelled afterwards (see ``tests/slurm.py``); tests that
    use it skip with the reason when Slurm is not installed."""
    missing = slurm_missing()
    if missing is not None:
        pytest.skip(missing)
    cluster = start_cluster(tmp_path_factory.mktemp("slurm"))
    try:
        yield cluster
    finally:
        cluster.stop()
