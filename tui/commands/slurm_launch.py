"""``bringup launch``, ``kill`` and ``restart`` for a ``scheduler = "slurm"`` profile.

The job is submitted, cancelled or resubmitted with Slurm's commands on the login host
(``slurm.login``) or on this machine; the exit statuses are those of the SSH launcher: 0 done,
1 refused or something survived, 2 the host could not be reached or a command failed.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from tui.config import Profile
from tui.io.slurm.slurm_client import SlurmClient, SlurmError
from tui.io.slurm.slurm_launcher import SlurmLauncher, SlurmOutcome
from tui.io.slurm.slurm_profile import login_target, login_transport, slurm_spec
from tui.io.transport.ssh import ConnectError


async def _act(profile: Profile, action: str, args: argparse.Namespace) -> SlurmOutcome:
    async with login_transport(login_target(profile)) as transport:
        client = SlurmClient(transport)
        launcher = SlurmLauncher(slurm_spec(profile, await client.home()), client,
                                 profile.slurm.login)  # fmt: skip
        force, grace = getattr(args, "force", False), getattr(args, "grace", None)
        if action == "launch":
            return await launcher.launch(force)
        if action == "kill":
            return await launcher.kill(grace)
        return await launcher.restart(force, grace)


def run_slurm(profile: Profile, action: str, args: argparse.Namespace) -> int:
    """Do ``action`` (launch, kill, restart) for a Slurm profile; the exit status."""
    from tui.commands.launch import say

    try:
        outcome = asyncio.run(_act(profile, action, args))
    except (ConnectError, SlurmError) as exc:
        say(f"error: {exc}", sys.stderr)
        return 2
    for line in outcome.lines:
        say(line, None if outcome.ok else sys.stderr)
    return 0 if outcome.ok else 1
