"""Putting the monitor together for a server that spans several hosts.

One session per host (nodes on the same host share it), one tail per node, one merged engine;
the health poll and the benchmark go to node 0, the only node that serves the API (the others
answer a dummy ``/health``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from tui.app.app import MonitorApp
from tui.app.bench_worker import BenchSetup
from tui.app.build import WatchSettings, notify_mode
from tui.app.cluster_link import ClusterLink
from tui.app.cluster_source import ClusterSource
from tui.app.health_source import HealthSource
from tui.app.launch_actions import LauncherOpener
from tui.io.session import HostSession


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
    health = bench = None
    if settings.port is not None:
        health = HealthSource(sessions[0], settings.port, settings.engine)
        bench = BenchSetup(sessions[0], settings.port, settings.engine, settings.bench, hosts[0])
    app = MonitorApp(
        link=ClusterLink(hosts, settings.engine, clock),
        source=source,
        target=settings.target,
        health=health,
        clock=clock,
        theme=settings.theme,
        keymap=settings.keys,
        notify_mode=notify_mode(settings.notify),
        expected_seconds=settings.expected_seconds,
        reconnect=source.reconnect,
        launcher=launcher,
        bench=bench,
        hosts=sessions,
    )
    app.state.stall_policy = settings.stall
    return app
