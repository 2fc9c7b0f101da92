"""Putting the monitor together for a server that spans several hosts.

One session per host (nodes on the same host share it), one tail per node, one merged engine,
one GPU reader per host; the health poll and the benchmark go to node 0, the only node that
serves the API (the others answer a dummy ``/health``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from tui.app.feed.cluster_link import ClusterLink
from tui.app.feed.cluster_source import ClusterSource
from tui.app.feed.job_source import JobFollower, JobSource
from tui.app.launch.launch_actions import LauncherOpener
from tui.app.monitor.monitor_app import MonitorApp
from tui.app.monitor.monitor_build import AppParts, WatchSettings, assemble_app, gpu_feeds
from tui.io.transport.host_session import HostSession


def build_cluster_app(
    sessions: Sequence[HostSession],
    hosts: Sequence[str],
    logs: Sequence[str],
    settings: WatchSettings,
    clock: Callable[[], float] = time.monotonic,
    launcher: LauncherOpener | None = None,
) -> MonitorApp:
    """The app watching ``logs[k]`` on ``hosts[k]`` through ``sessions[k]``, node 0 first."""
    source = ClusterSource(sessions, logs, hosts)
    parts = AppParts(
        link=ClusterLink(hosts, settings.engine, clock),
        source=source,
        reconnect=source.reconnect,
        sessions=sessions,
        api_host=hosts[0],
        telemetry=gpu_feeds(sessions, settings.telemetry),
    )
    return assemble_app(parts, settings, clock, launcher)


def build_job_app(
    session: HostSession,
    follower: JobFollower,
    nodes: int,
    settings: WatchSettings,
    clock: Callable[[], float] = time.monotonic,
    launcher: LauncherOpener | None = None,
) -> MonitorApp:
    """The app following a scheduler's job of ``nodes`` nodes: its queue, then every node's
    log through ``session`` to the login host, which also reaches node 0's port."""
    source = JobSource(session, follower)
    hosts = ["not placed yet"] * max(nodes, 1)
    parts = AppParts(
        link=ClusterLink(hosts, settings.engine, clock),
        source=source,
        reconnect=source.reconnect,
        sessions=(session,),
        api_host=settings.target.host or None,
    )
    return assemble_app(parts, settings, clock, launcher)
