"""The launch keys' side of a Slurm profile: the job's standing as a run status, a second
launch refused while the job is queued, kill and restart."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.io.slurm_support import slurm_config
from tests.slurm import SlurmCluster
from tui.config import load_config
from tui.engine.launch.launch_record import HowEnded, RunState
from tui.io.slurm.slurm_control import open_slurm_control

pytestmark = pytest.mark.slow

SLEEPER = ["sh", "-c", "sleep 60"]


async def test_submit_refuse_cancel_and_resubmit(
    slurm_cluster: SlurmCluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SLURM_CONF", str(slurm_cluster.conf))
    config = slurm_config(tmp_path / "config.toml", tmp_path / "logs", SLEEPER)
    profile = load_config(config).profile("big")
    async with open_slurm_control(profile) as control:
        assert [s.state for s in await control.status()] == [RunState.NONE]
        submitted = await control.submit()
        assert submitted.ok, submitted.lines
        assert submitted.job_id in slurm_cluster.job_ids()
        (status,) = await control.status()
        assert (status.state, status.run_id) == (RunState.RUNNING, f"job {submitted.job_id}")
        again = await control.submit()
        assert again.refused
        assert not again.ok
        restarted = await control.resubmit()
        assert restarted.ok, restarted.lines
        assert restarted.job_id != submitted.job_id
        cancelled = await control.cancel()
        assert cancelled.ok, cancelled.lines
        (ended,) = await control.status()
        assert (ended.state, ended.how_ended) == (RunState.ENDED, HowEnded.STOPPED)
    assert slurm_cluster.job_ids() == []
