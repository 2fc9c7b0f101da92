"""The sbatch submission of a Slurm profile: every value stays a literal."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tui.engine.launch.launch_plan import LaunchSpec, PlanError
from tui.engine.launch.slurm_script import (
    SlurmSpec,
    batch_script,
    node_log,
    sbatch_argv,
    task_script,
)

HOSTILE = "a; touch pwned $(touch pwned2) `id` 'q' \"d\"\nline2 $HOME"
ECHO = (sys.executable, "-c", "import json, sys; print(json.dumps(sys.argv[1:]))")


def _spec(tmp_path: Path, command: tuple[str, ...] = ECHO, **slurm: object) -> SlurmSpec:
    launch = LaunchSpec(
        profile="big", command=command, log_dir=str(tmp_path), port=30000,
        env=(("HOSTILE", HOSTILE),), cwd=str(tmp_path), model=HOSTILE,
    )  # fmt: skip
    return SlurmSpec(launch, **slurm)  # type: ignore[arg-type]


def test_sbatch_gets_every_option_as_one_argument(tmp_path: Path) -> None:
    spec = _spec(tmp_path, nodes=2, partition=HOSTILE, gpus_per_node=8, time="01:00:00",
                 account="acct", qos="high", sbatch_options=("--exclusive",))  # fmt: skip
    argv = sbatch_argv(spec)
    assert argv[:4] == ["sbatch", "--parsable", "--job-name=bringup-big", "--nodes=2"]
    assert f"--partition={HOSTILE}" in argv
    assert {"--gpus-per-node=8", "--time=01:00:00", "--account=acct", "--qos=high"} <= set(argv)
    assert f"--output={tmp_path}/big-%j-batch.log" in argv
    assert argv[-1] == "--exclusive"


def test_the_task_gets_hostile_values_and_its_node_as_literal_arguments(tmp_path: Path) -> None:
    command = (*ECHO, "{model}", "--node-rank", "{node_rank}", "--addr={dist_init_addr}",
               "{nnodes}", "{log}", "{port}", "x{host}y")  # fmt: skip
    script = task_script(_spec(tmp_path, command, nodes=2))
    env = {"SLURM_JOB_ID": "12", "SLURM_NODEID": "1", "SLURMD_NODENAME": "gpu2",
           "BRINGUP_DIST_INIT_ADDR": "10.0.0.1:20000", "PATH": "/usr/bin:/bin"}  # fmt: skip
    subprocess.run(["bash", "-c", script], env=env, check=True, cwd=tmp_path)
    log = Path(node_log(str(tmp_path), "big", "12", 1))
    assert json.loads(log.read_text()) == [
        HOSTILE,
        "--node-rank",
        "1",
        "--addr=10.0.0.1:20000",
        "2",
        str(log),
        "30000",
        "xgpu2y",
    ]
    assert not (tmp_path / "pwned").exists()
    assert not (tmp_path / "pwned2").exists()


def test_the_batch_script_is_valid_bash_and_names_no_value_unquoted(tmp_path: Path) -> None:
    script = batch_script(_spec(tmp_path, nodes=2, preamble="module load cuda"))
    subprocess.run(["bash", "-n"], input=script, text=True, check=True)
    assert 'scontrol show hostnames "$SLURM_JOB_NODELIST"' in script
    assert "srun --nodes=2 --ntasks=2 --ntasks-per-node=1 --kill-on-bad-exit=1 bash -c" in script
    assert "module load cuda" in task_script(_spec(tmp_path, preamble="module load cuda"))


def test_a_relative_log_dir_or_an_unknown_placeholder_is_refused(tmp_path: Path) -> None:
    launch = LaunchSpec(profile="big", command=("serve",), log_dir="runs")
    with pytest.raises(PlanError, match="absolute shared folder"):
        sbatch_argv(SlurmSpec(launch))
    with pytest.raises(PlanError, match="unknown placeholder"):
        task_script(_spec(tmp_path, ("serve", "{nope}")))
    with pytest.raises(PlanError, match=r"sets no launch\.tp"):
        task_script(_spec(tmp_path, ("serve", "{tp}")))
