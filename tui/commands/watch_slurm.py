"""``bringup watch`` for a Slurm job: a ``scheduler = "slurm"`` profile's newest job, or
``--slurm-job ID [--login HOST]``.

The wiring only: one session to the login host (or this machine), the job found and sized
through it before the app starts (an unknown job is an error on the command line, exit 2),
then the app follows the job: its queue, every node's log over that session, node 0's port at
its ``NodeAddr`` through the login host, and the job's end as the verdict (docs/cluster.md).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from tui.commands.exit_codes import ExitStatus
from tui.commands.wait import SlurmTarget
from tui.engine.logs.sanitize import sanitize_line
from tui.io.slurm.slurm_client import SlurmError
from tui.io.slurm.slurm_follow import SlurmFollower
from tui.io.transport.ssh import ConnectError

if TYPE_CHECKING:
    from tui.app.launch.launch_actions import LauncherOpener
    from tui.app.monitor.monitor_build import WatchSettings
    from tui.commands.watch import WatchPlan
    from tui.io.transport.host_session import HostSession


async def watch_slurm(
    plan: WatchPlan,
    target: SlurmTarget,
    settings: WatchSettings,
    launcher: LauncherOpener | None,
    make_session: Callable[[WatchPlan], HostSession],
) -> int:
    """Run the monitor over the job; returns the app's exit status (2: no such job)."""
    from tui.app.monitor.app_runner import run_app
    from tui.app.monitor.cluster_build import build_job_app

    session = make_session(plan)
    try:
        try:
            follower = await SlurmFollower.attach(
                session, target.job_id, target.log_dir, target.profile, target.nodes
            )
        except (ConnectError, SlurmError) as error:
            print(f"error: {sanitize_line(str(error))}", file=sys.stderr)
            return ExitStatus.UNREACHABLE if isinstance(error, ConnectError) else ExitStatus.FAILED
        where = target.login or "local"
        job_target = replace(settings.target, host=f"{where} · job {follower.job_id}")
        app = build_job_app(
            session, follower, follower.node_count, replace(settings, target=job_target),
            launcher=launcher,
        )  # fmt: skip
        return await run_app(app)
    finally:
        await session.close()
