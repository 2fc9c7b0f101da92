"""From a ``scheduler = "slurm"`` profile to its job's spec and a connection to the login host."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import replace

from tui.config import Profile
from tui.engine.launch.launch_plan import DEFAULT_LOG_DIR, expand_home
from tui.engine.launch.slurm_script import SlurmSpec
from tui.io.launch.launch_profile import spec_from_profile
from tui.io.transport.local import LocalTransport
from tui.io.transport.profile_target import spec_target
from tui.io.transport.ssh import SshTarget, SshTransport, connect
from tui.io.transport.transport import Transport


def is_slurm(profile: Profile) -> bool:
    return profile.scheduler == "slurm"


def slurm_spec(profile: Profile, home: str) -> SlurmSpec:
    """The job of ``profile``, its folders resolved against the login's ``home``."""
    launch = spec_from_profile(profile)
    resolved = replace(
        launch,
        log_dir=expand_home(profile.log_dir or DEFAULT_LOG_DIR, home),
        cwd=expand_home(launch.cwd, home) if launch.cwd else None,
        venv=expand_home(launch.venv, home) if launch.venv else None,
    )
    slurm = profile.slurm
    return SlurmSpec(
        launch=resolved,
        nodes=slurm.nodes,
        partition=slurm.partition,
        gpus_per_node=slurm.gpus_per_node,
        time=slurm.time,
        account=slurm.account,
        qos=slurm.qos,
        sbatch_options=slurm.sbatch_options,
        preamble=slurm.preamble,
        container=slurm.container,
    )


def login_target(profile: Profile, login: str | None = None) -> SshTarget | None:
    """The login host to run Slurm's commands on; None when they run on this machine."""
    spec = login or profile.slurm.login
    if spec is None:
        return None
    return spec_target(profile, spec)


@contextlib.asynccontextmanager
async def login_transport(target: SshTarget | None) -> AsyncIterator[Transport]:
    """One connection to the login host (or this machine), closed afterwards."""
    transport: Transport = (
        LocalTransport() if target is None else SshTransport(await connect(target))
    )
    try:
        yield transport
    finally:
        await transport.close()
