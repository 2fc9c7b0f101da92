"""``bringup launch``, ``kill`` and ``restart`` for a ``scheduler = "slurm"`` profile.

The job is submitted, cancelled or resubmitted with Slurm's commands on the login host
(``slurm.login``) or on this machine; the exit statuses are those of the SSH launcher: 0 done,
1 refused, something survived or a Slurm command failed, 3 the login host could not be
reached. ``--json`` prints the same document as the SSH launcher's, with ``job_id``.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from tui.commands.exit_codes import ExitStatus
from tui.commands.launch_json import document, emit
from tui.config import Profile
from tui.engine.logs.sanitize import sanitize_line
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

    json_out = getattr(args, "json", False)
    try:
        outcome = asyncio.run(_act(profile, action, args))
    except (ConnectError, SlurmError) as exc:
        code = ExitStatus.UNREACHABLE if isinstance(exc, ConnectError) else ExitStatus.FAILED
        say(f"error: {exc}", sys.stderr)
        if json_out:
            emit(document(action, profile.name, code, error=sanitize_line(str(exc))))
        return code
    code = ExitStatus.OK if outcome.ok else ExitStatus.FAILED
    if json_out:
        emit(document(action, profile.name, code, job_id=outcome.job_id,
                      refused=outcome.refused, lines=list(outcome.lines)))  # fmt: skip
        return code
    for line in outcome.lines:
        say(line, None if outcome.ok else sys.stderr)
    return code
