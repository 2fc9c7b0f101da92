"""From a configured profile to a working :class:`~tui.io.launch.launcher.Launcher`, and its
reports.

``open_launcher(profile)`` connects to every host of the profile (the local machine when it
lists none) and closes the connections afterwards. The ``*_lines`` functions turn results into
the sentences the ``launch``, ``kill`` and ``restart`` commands print and the app shows.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

from tui.config import Profile
from tui.engine.launch.launch_plan import DEFAULT_LOG_DIR, LaunchSpec, latest_log_path
from tui.io.launch.launch_kill import NodeKill
from tui.io.launch.launch_node import Node
from tui.io.launch.launcher import Launcher, LaunchResult
from tui.io.transport.local import LocalTransport
from tui.io.transport.profile_target import profile_target
from tui.io.transport.ssh import SshTarget, SshTransport, connect
from tui.io.transport.transport import Transport

LOCAL_HOST = "localhost"


def host_names(profile: Profile) -> tuple[str, ...]:
    """The host name of each node (node 0 first); ``localhost`` when the profile lists none."""
    return tuple(t.host for t in profile.targets) or (LOCAL_HOST,)


def spec_from_profile(profile: Profile) -> LaunchSpec:
    """The launch-related values of ``profile``."""
    launch = profile.launch
    return LaunchSpec(
        profile=profile.name,
        command=launch.command,
        hosts=host_names(profile),
        log_dir=profile.log_dir or DEFAULT_LOG_DIR,
        port=profile.port_for(),
        env=tuple(launch.env.items()),
        cwd=launch.cwd,
        conda_env=launch.conda_env,
        venv=launch.venv,
        model=launch.model,
        drafter=launch.drafter,
        grace_period=launch.grace_period,
        dist_init_addr=launch.dist_init_addr,
        values=launch.placeholder_values(),
    )


def latest_log(profile: Profile) -> str | None:
    """The log of the newest run ``bringup`` launched for ``profile`` on node 0, as a path the
    log tail can open (None when the profile has no launch command)."""
    if not profile.launch.command:
        return None
    log_dir = profile.log_dir or DEFAULT_LOG_DIR
    home = None if profile.hosts else os.path.expanduser("~")
    return latest_log_path(profile.name, log_dir, len(profile.hosts) or 1, home)


def latest_logs(profile: Profile) -> tuple[str, ...]:
    """The ``-latest.log`` link of every node's newest run, node 0 first (empty when the
    profile has no launch command)."""
    if not profile.launch.command:
        return ()
    log_dir = profile.log_dir or DEFAULT_LOG_DIR
    home = None if profile.hosts else os.path.expanduser("~")
    nodes = len(profile.hosts) or 1
    return tuple(latest_log_path(profile.name, log_dir, nodes, home, rank) for rank in range(nodes))


def _ssh_target(profile: Profile, index: int) -> SshTarget:
    target = profile.targets[index]
    return profile_target(profile, target.host, target.user, target.port)


async def _transports(profile: Profile, stack: contextlib.AsyncExitStack) -> list[Transport]:
    if not profile.targets:
        local = LocalTransport()
        stack.push_async_callback(local.close)
        return [local]
    opened: list[Transport] = []
    for index in range(len(profile.targets)):
        transport = SshTransport(await connect(_ssh_target(profile, index)))
        stack.push_async_callback(transport.close)
        opened.append(transport)
    return opened


@contextlib.asynccontextmanager
async def open_launcher(profile: Profile) -> AsyncIterator[Launcher]:
    """A launcher for ``profile`` with a connection to each of its hosts.

    Raises :class:`tui.io.transport.ssh.ConnectError` when a host cannot be reached.
    """
    spec = spec_from_profile(profile)
    async with contextlib.AsyncExitStack() as stack:
        transports = await _transports(profile, stack)
        labels = [str(t) for t in profile.targets] or [LOCAL_HOST]
        nodes = [
            Node(label, transport, profile.nvidia_smi)
            for label, transport in zip(labels, transports, strict=True)
        ]
        yield Launcher(spec, nodes, read_only=profile.read_only)


def launch_lines(result: LaunchResult) -> list[str]:
    """What a launch did, one sentence per line."""
    lines = [f"note: {note}" for check in result.preflights for note in check.notes]
    if result.refusals and not result.started:
        lines += [f"refused: {r.message}" for r in result.refusals]
        if all(r.kind.forceable for r in result.refusals):
            lines.append("(use --force to launch anyway)")
        return lines
    lines += [f"forced past: {r.message}" for r in result.refusals]
    for node in result.started:
        plan = node.plan
        lines.append(
            f"node {plan.node_rank} {plan.host}: started run {plan.run_id}, process group "
            f"{node.identity.pid}, log {plan.paths.log} (also {Path(plan.paths.latest_log).name})"
        )
    lines += [f"error: {error}" for error in result.errors]
    lines += [f"rolled back: {kill.message}" for kill in result.rolled_back]
    return lines


def _released(name: str, value: bool | None) -> str | None:
    if value is None:
        return None
    return f"{name} released" if value else f"{name} STILL IN USE"


def kill_lines(kills: Sequence[NodeKill]) -> list[str]:
    """What a kill did on each node, with what was left after the grace period."""
    lines: list[str] = []
    for kill in kills:
        extra = [_released("port", kill.port_released), _released("GPU memory", kill.gpu_released)]
        shown = [text for text in extra if text]
        lines.append(kill.message + (f"; {', '.join(shown)}" if shown else ""))
        if kill.after_grace:
            names = ", ".join(f"{p.pid} ({p.name})" for p in kill.after_grace[:8])
            lines.append(f"  still alive after the grace period: {names}")
    return lines
