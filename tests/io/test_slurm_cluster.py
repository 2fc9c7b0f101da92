"""The loopback Slurm cluster itself: a two-node job runs one task on each node."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.slurm import NODES, SlurmCluster

pytestmark = pytest.mark.slow

SCRIPT = """#!/bin/bash
first=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
scontrol show node --oneliner "$first" | tr ' ' '\\n' | grep '^NodeAddr='
srun --ntasks-per-node=1 bash -c 'echo "task $SLURM_NODEID on $SLURMD_NODENAME"'
"""


def test_a_two_node_job_runs_a_task_on_each_node(
    slurm_cluster: SlurmCluster, tmp_path: Path
) -> None:
    out = tmp_path / "job-%j.out"
    submitted = subprocess.run(
        ["sbatch", "--parsable", "--nodes=2", "--ntasks-per-node=1", f"--output={out}"],
        input=SCRIPT, env=slurm_cluster.env(), capture_output=True, text=True, check=True,
    )  # fmt: skip
    job_id = submitted.stdout.strip().split(";")[0]
    assert slurm_cluster.wait_job_gone(job_id), slurm_cluster.job_field(job_id, "JobState")
    assert slurm_cluster.job_field(job_id, "JobState") == "COMPLETED"
    assert slurm_cluster.job_field(job_id, "NodeList") == "gpu[1-2]"
    lines = Path(str(out).replace("%j", job_id)).read_text().splitlines()
    assert lines[0] == "NodeAddr=127.0.0.1"
    assert sorted(lines[1:]) == [f"task {rank} on {name}" for rank, name in enumerate(NODES)]
