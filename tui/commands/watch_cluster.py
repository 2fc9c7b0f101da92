"""``bringup watch PROFILE`` for a profile whose server spans several hosts.

Every host of the profile gets its own session (one connection per host, all at once), every
node's log its own tail, and the app one merged view: the ranks grouped by node with a summary
row each, one verdict, health and benchmarks on node 0.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from tui.io.launch.launch_profile import latest_logs

if TYPE_CHECKING:
    from tui.app.launch.launch_actions import LauncherOpener
    from tui.app.monitor.monitor_build import WatchSettings
    from tui.commands.watch import WatchPlan
    from tui.io.transport.host_session import HostSession

Node = tuple[str, str]


def cluster_nodes(plan: WatchPlan) -> list[Node]:
    """(host, log) of every node when the plan watches a multi-host profile, else empty.

    Logs come from the profile (``logs``, or ``log`` with ``{node_rank}``) or, for a profile
    that launches its server, from each node's newest run. A ``--host`` or ``--log`` other than
    node 0's watches that one log alone.
    """
    profile = plan.profile
    if len(profile.hosts) < 2 or plan.host != profile.hosts[0]:
        return []
    logs = profile.node_logs or latest_logs(profile)
    if len(logs) != len(profile.hosts) or logs[0] != plan.log:
        return []
    return list(zip(profile.hosts, logs, strict=True))


async def watch_cluster(
    plan: WatchPlan,
    settings: WatchSettings,
    nodes: list[Node],
    launcher: LauncherOpener | None,
    make_session: Callable[[WatchPlan], HostSession],
) -> int:
    """Run the monitor over every node; returns the app's exit status."""
    from tui.app.monitor.app_runner import run_app
    from tui.app.monitor.cluster_build import build_cluster_app
    from tui.commands.wait_cluster import close_all
    from tui.commands.watch import WatchPlan, refused
    from tui.io.transport.host_session import login_before_screen
    from tui.io.transport.ssh import ConnectError

    sessions: dict[str, HostSession] = {}
    for host, log in nodes:
        if host not in sessions:
            sessions[host] = make_session(WatchPlan(plan.profile, host, log, plan.config))
    try:
        await login_before_screen(list(sessions.values()))
    except ConnectError as error:
        await close_all(list(sessions.values()))
        return refused(error)
    hosts = [host for host, _ in nodes]
    target = replace(settings.target, host=f"{hosts[0]} +{len(hosts) - 1}")
    app = build_cluster_app(
        [sessions[host] for host in hosts], hosts, [log for _, log in nodes],
        replace(settings, target=target), launcher=launcher,
    )  # fmt: skip
    try:
        return await run_app(app)
    finally:
        await close_all(list(sessions.values()))
