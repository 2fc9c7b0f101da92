"""The ``scheduler`` key and the ``[profiles.NAME.slurm]`` table."""

from __future__ import annotations

from pathlib import Path

import pytest

from tui.config import ConfigError, parse_config
from tui.config.config_slurm import SlurmConfig

TEXT = """
[profiles.big]
scheduler = "slurm"
log_dir = "/shared/logs"

[profiles.big.launch]
command = ["serve", "--node-rank", "{node_rank}"]

[profiles.big.slurm]
login = "me@login1:2222"
partition = "h100"
nodes = 2
gpus_per_node = 8
time = "1:00:00"
account = "llm"
qos = "high"
sbatch_options = "--exclusive --constraint=ib"
preamble = "module load cuda/12.4"
container = ["apptainer", "exec", "--nv", "/shared/sglang.sif"]
"""


def test_a_slurm_profile_reads_every_field() -> None:
    profile = parse_config(TEXT, Path("config.toml")).profile()
    assert profile.scheduler == "slurm"
    assert profile.slurm == SlurmConfig(
        login="me@login1:2222", partition="h100", nodes=2, gpus_per_node=8, time="1:00:00",
        account="llm", qos="high", sbatch_options=("--exclusive", "--constraint=ib"),
        preamble="module load cuda/12.4",
        container=("apptainer", "exec", "--nv", "/shared/sglang.sif"),
    )  # fmt: skip


def test_profiles_default_to_ssh_and_bad_values_name_their_key() -> None:
    assert parse_config('[profiles.a]\nlog = "/x"\n', Path("c.toml")).profile().scheduler == "ssh"
    with pytest.raises(ConfigError, match="scheduler"):
        parse_config('[profiles.a]\nscheduler = "pbs"\n', Path("c.toml"))
    with pytest.raises(ConfigError, match=r"slurm\.nodes"):
        parse_config("[profiles.a.slurm]\nnodes = 0\n", Path("c.toml"))
    with pytest.raises(ConfigError, match=r"slurm\.colour"):
        parse_config('[profiles.a.slurm]\ncolour = "red"\n', Path("c.toml"))
