"""Attaching to a Slurm job that bringup did not submit is read-only: L, K and R would act on
the profile's script, which is not what runs the job (no Slurm needed: the plan is decided
before anything connects)."""

from __future__ import annotations

import argparse
from pathlib import Path

from tests.io.slurm_support import slurm_config
from tui.commands import watch
from tui.commands.watch import _launcher, watch_plan
from tui.config import load_config


def _plan(config: Path, *extra: str) -> watch.WatchPlan:
    parser = argparse.ArgumentParser()
    watch.register(parser.add_subparsers())
    args = parser.parse_args(["watch", "--config", str(config), *extra])
    return watch_plan(args, load_config(config))


def test_an_attached_job_has_no_launch_kill_or_restart(tmp_path: Path) -> None:
    config = slurm_config(tmp_path / "config.toml", tmp_path / "logs", ["sleep", "60"])
    own = _plan(config)
    assert own.slurm is not None
    assert own.slurm.job_id is None
    assert not own.profile.read_only
    assert _launcher(own.profile) is not None
    attached = _plan(config, "--slurm-job", "4242")
    assert attached.slurm is not None
    assert attached.slurm.job_id == "4242"
    assert attached.profile.read_only
    assert _launcher(attached.profile) is None
