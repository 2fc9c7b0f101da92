"""``bringup watch [PROFILE]``: the monitor for one server, over SSH or on this machine.

``bringup watch PROFILE`` watches the profile's host (every host, as one server, when the
profile lists several: docs/multinode.md); ``--host H --log PATH [--port P]``
needs no configuration; ``--local --log PATH`` watches a log on this machine. Without
``--port`` (or the profile's ``port``) the engine's default port is polled: the named engine's,
or the one the start of the log shows (``watch_port.py``). Exit status: 0 on quit, 2 for a
command-line error, 4 for an invalid configuration.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from tui.commands.exit_codes import ExitStatus
from tui.commands.ssh_flags import add_ssh_arguments, with_ssh_flags
from tui.commands.wait import EXIT_UNREACHABLE, SlurmTarget
from tui.commands.wait_slurm import slurm_target
from tui.commands.watch_cluster import cluster_nodes, watch_cluster
from tui.config import Config, ConfigError, Profile, load_config
from tui.engine.judge.stall import StallPolicy
from tui.engine.logs.sanitize import sanitize_line, sanitize_text
from tui.engine.servers import registry
from tui.io.launch.launch_profile import latest_log

if TYPE_CHECKING:
    from tui.app.launch.launch_actions import LauncherOpener
    from tui.io.transport.host_session import HostSession
    from tui.io.transport.ssh import ConnectError


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "watch",
        help="watch a server start: every rank, the verdict, health and failures",
        description="Open the monitor for a profile, an SSH host or a local log.",
    )
    parser.add_argument("profile", nargs="?", metavar="PROFILE", help="profile to watch")
    parser.add_argument("--config", type=Path, metavar="PATH", help="configuration file")
    parser.add_argument("--host", metavar="HOST", help="SSH host ([user@]host[:port] or alias)")
    parser.add_argument("--local", action="store_true", help="the log is on this machine")
    parser.add_argument("--log", metavar="PATH", help="server log to follow")
    parser.add_argument(
        "--port", type=int, metavar="N", help="server HTTP port (default: the engine's default)"
    )
    parser.add_argument("--engine", choices=registry.choices(), default=None)
    parser.add_argument("--theme", metavar="NAME", help="theme name (bringup-dark, ...)")
    parser.add_argument("--read-only", action="store_true", help="no launch, kill or restart")
    parser.add_argument(
        "--slurm-job", metavar="ID", help="follow this Slurm job (see docs/cluster.md)"
    )
    parser.add_argument("--login", metavar="HOST", help="login host for Slurm's commands")
    add_ssh_arguments(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    try:
        config = load_config(args.config)
        plan = watch_plan(args, config)
    except ConfigError as error:
        print(f"error: {sanitize_line(str(error))}", file=sys.stderr)
        return ExitStatus.CONFIG
    except ValueError as error:
        print(f"error: {sanitize_line(str(error))}", file=sys.stderr)
        return ExitStatus.USAGE
    return asyncio.run(_watch(plan))


class WatchPlan:
    """The resolved command line and configuration: what to connect to and how to show it."""

    def __init__(
        self, profile: Profile, host: str | None, log: str, config: Config,
        slurm: SlurmTarget | None = None,
    ) -> None:  # fmt: skip
        self.profile = profile
        self.host = host
        self.log = log
        self.config = config
        self.slurm = slurm
        """The Slurm job to follow (its logs are known once it runs); None for a server
        started otherwise."""


def watch_plan(args: argparse.Namespace, config: Config) -> WatchPlan:
    """Combine the command line with the profile; ``ValueError`` names what is missing."""
    ad_hoc = args.local or args.host is not None
    attach = getattr(args, "slurm_job", None) is not None
    named = Profile() if ad_hoc and args.profile is None else config.profile(args.profile)
    profile = with_ssh_flags(args, named, screen=True)
    engine = args.engine or profile.engine
    slurm = slurm_target(args, profile)
    if slurm is not None:
        theme = args.theme or config.theme
        read_only = profile.read_only or getattr(args, "read_only", False) or attach
        chosen = replace(profile, engine=engine, port=args.port or profile.port,
                         read_only=read_only)  # fmt: skip
        return WatchPlan(chosen, slurm.login, "", replace(config, theme=theme), slurm)
    port = args.port if args.port is not None else profile.port
    dialect = registry.find(engine)
    if port is None and dialect is not None:
        port = dialect.default_port  # with ``auto``, ``_watch`` reads the log's start first
    host = None if args.local else args.host or (profile.hosts[0] if profile.hosts else None)
    log = args.log or profile.log_path or latest_log(profile)
    if log is None:
        raise ValueError("no log to watch: give --log PATH or set log in the profile")
    theme = args.theme or config.theme
    read_only = profile.read_only or getattr(args, "read_only", False)
    chosen = replace(profile, engine=engine, port=port, read_only=read_only)
    return WatchPlan(chosen, host, log, replace(config, theme=theme))


async def _watch(plan: WatchPlan) -> int:
    from tui.app.monitor.app_runner import run_app
    from tui.app.monitor.monitor_build import WatchSettings, build_app
    from tui.app.monitor.themes import DEFAULT_THEME
    from tui.app.monitor.view_model import Target
    from tui.commands.watch_port import default_port
    from tui.io.bench.bench_setup import BenchOptions
    from tui.io.bench.bench_workload import api_key_of
    from tui.io.gpu.gpu_telemetry import TelemetrySettings
    from tui.io.transport.host_session import login_before_screen
    from tui.io.transport.ssh import ConnectError

    nodes = cluster_nodes(plan)
    if plan.slurm is None and nodes and plan.profile.port is None:
        port, _engine = await default_port(_session(plan), plan.log, plan.profile.engine)
        plan.profile = replace(plan.profile, port=port)
    profile = plan.profile
    settings = WatchSettings(
        target=Target("" if profile.name == "default" else profile.name, plan.host or "local"),
        log_path=plan.log,
        port=profile.port,
        engine=profile.engine,
        theme=plan.config.theme or DEFAULT_THEME,
        keys=plan.config.keys,
        notify=plan.config.notify,
        expected_seconds=profile.expected_startup,
        stall=StallPolicy(factor=profile.stall.factor, floor=profile.stall.floor),
        bench=BenchOptions(
            profile.bench,
            None if profile.name == "default" else profile.name,
            plan.config.data_dir,
            profile.launch.venv,
            profile.launch.conda_env,
            api_key_of(None, profile),
        ),
        telemetry=TelemetrySettings(
            command=profile.nvidia_smi,
            interval_ms=round(profile.monitor.gpu_interval * 1000),
            serving_interval_ms=round(profile.monitor.gpu_interval_serving * 1000),
        ),
        history=True,
        serving=profile.serving,
        kernel_log=profile.kernel_log,
        monitor=profile.monitor,
    )
    if plan.slurm is not None:
        from tui.commands.watch_slurm import watch_slurm

        return await watch_slurm(plan, plan.slurm, settings, _launcher(profile), _session)
    if nodes:
        return await watch_cluster(plan, settings, nodes, _launcher(profile), _session)
    session = _session(plan)
    try:
        await login_before_screen([session])
        if settings.port is None:
            port, _engine = await default_port(session, plan.log, profile.engine, close=False)
            settings = replace(settings, port=port)
        app = build_app(session, settings, launcher=_launcher(profile))
        return await run_app(app)
    except ConnectError as error:
        return refused(error)
    finally:
        await session.close()


def refused(error: ConnectError) -> int:
    """Say why the login before the screen failed; the "unreachable or refused" status."""
    print(f"error: {sanitize_line(error.message)}", file=sys.stderr)
    if error.hint:
        print(sanitize_text(error.hint), file=sys.stderr)
    return EXIT_UNREACHABLE


def _session(plan: WatchPlan) -> HostSession:
    from tui.io.transport.host_session import HostSession, LocalConnector, SshConnector
    from tui.io.transport.profile_target import spec_target
    from tui.io.transport.ssh_prompts import terminal_present

    if plan.host is None:
        return HostSession(LocalConnector())
    target = spec_target(plan.profile, plan.host)
    return HostSession(SshConnector(replace(target, prompts=terminal_present())))


def _launcher(profile: Profile) -> LauncherOpener | None:
    """L, K and R act on the profile's launch command; without one they are hidden."""
    if profile.read_only or not profile.launch.command:
        return None
    if profile.scheduler == "slurm":
        from tui.io.slurm.slurm_control import open_slurm_control

        return functools.partial(open_slurm_control, profile)
    from tui.io.launch.launch_profile import open_launcher

    return functools.partial(open_launcher, profile)
