"""``bringup wait``: follow a server's start-up without a screen and exit with its outcome.

It follows the log (over SSH, or on this machine with ``--local`` or without ``--host``), feeds
it to the log engine, and when a port is known polls ``/health`` and one real generation
through the same connection. Exit status (the one table, ``tui.commands.exit_codes``):

- 0: ready (the ready line, and with a port also ``/health`` 200 and a generated token), held
  for ``--settle`` (a ``/health`` blip within it, DEGRADED, does not change that);
- 1: the start failed (FAILED: a failure in the log), the server stopped (STOPPED: it shut
  down, before or after its ready line), or with ``--fail-on-stall`` a rank was judged STALLED
  (see docs/history.md);
- 2: a command-line usage error;
- 3: the host could not be reached, or refused the host key or the authentication;
- 4: the configuration is invalid;
- 5: an unexpected error stopped the wait (its traceback is printed on standard error);
- 6: the time given by ``--timeout`` ran out.

Without ``--port`` the health port is the engine's default (SGLang 30000, vLLM 8000): the
profile's or ``--engine``'s engine, or else the one the log shows once it is detected.
``--log-only`` polls no port; READY then says that only the log was read.

The verdict is the judge's (``tui.engine.judge``), the same the app shows for the same log;
the wait only adds its own endings (TIMEOUT, UNREACHABLE, ERROR) and maps each to its status.

``--json`` prints one JSON object per event, ``--plain`` (the default) one line per change.
Several ``--host``/``--log`` pairs, or a profile with several hosts, follow a multi-node server
as one (docs/multinode.md): the same exit statuses, READY only when every node is ready.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path

from tui.commands.exit_codes import ExitStatus
from tui.commands.signals import ended_by_signal
from tui.commands.ssh_flags import add_ssh_arguments, with_ssh_flags
from tui.config import (
    Config,
    ConfigError,
    DurationError,
    Profile,
    SshChoices,
    load_config,
    parse_duration,
)
from tui.engine.judge.degraded import DEFAULT_HEALTH_GRACE
from tui.engine.judge.stall import StallPolicy
from tui.engine.logs.sanitize import sanitize_line
from tui.engine.servers import registry
from tui.engine.startup.vocabulary import Verdict
from tui.engine.timing.estimate import DEFAULT_STARTUP

EXIT_READY, EXIT_FAILED, EXIT_TIMEOUT = ExitStatus.OK, ExitStatus.FAILED, ExitStatus.TIMEOUT
EXIT_UNREACHABLE, EXIT_CONFIG = ExitStatus.UNREACHABLE, ExitStatus.CONFIG
EXIT_ERROR = ExitStatus.ERROR
ENGINES = registry.choices()


class WaitEnding(str, Enum):
    """How a wait ended when the judge gave no verdict to end on."""

    TIMEOUT = "TIMEOUT"
    UNREACHABLE = "UNREACHABLE"
    ERROR = "ERROR"
    PENDING = "PENDING"
    """A Slurm job still queued when the time ran out."""
    JOB_FAILED = "JOB_FAILED"
    JOB_CANCELLED = "JOB_CANCELLED"
    JOB_TIMEOUT = "JOB_TIMEOUT"
    JOB_NODE_FAIL = "JOB_NODE_FAIL"
    JOB_OUT_OF_MEMORY = "JOB_OUT_OF_MEMORY"
    JOB_PREEMPTED = "JOB_PREEMPTED"
    JOB_COMPLETED = "JOB_COMPLETED"
    JOB_ENDED = "JOB_ENDED"
    """A Slurm job that ended in another state (BOOT_FAIL, DEADLINE, ...); the detail names it."""


Ending = Verdict | WaitEnding
"""What a wait reports last: the judge's verdict, or one of the wait's own endings."""

EXIT_CODES: dict[Ending, int] = {
    Verdict.READY: EXIT_READY,
    Verdict.FAILED: EXIT_FAILED,
    Verdict.STOPPED: EXIT_FAILED,
    Verdict.STALLED: EXIT_FAILED,
    WaitEnding.TIMEOUT: EXIT_TIMEOUT,
    WaitEnding.UNREACHABLE: EXIT_UNREACHABLE,
    WaitEnding.ERROR: EXIT_ERROR,
    WaitEnding.PENDING: EXIT_TIMEOUT,
    **{ending: EXIT_FAILED for ending in WaitEnding if ending.name.startswith("JOB_")},
}


def exit_code(ending: Ending) -> int:
    """The exit status of a wait that ended this way (a verdict the wait does not end on, such
    as STARTING, never gets here)."""
    return EXIT_CODES.get(ending, EXIT_ERROR)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "wait",
        help=(
            "wait without a screen until a server is ready (exit 0), failed or stopped (1), "
            "timed out (6)"
        ),
        description=(
            "Follow a server's log (and its health port) until it is ready, failed or stopped "
            "(shut down, even after its ready line) or, with --fail-on-stall, stalled. Without "
            "--port the engine's default port is polled (SGLang 30000, vLLM 8000)."
        ),
    )
    parser.add_argument("profile", nargs="?", metavar="PROFILE", help="profile to wait for")
    parser.add_argument("--config", type=Path, metavar="PATH", help="configuration file")
    parser.add_argument(
        "--host",
        metavar="HOST",
        action="append",
        help="ssh alias, host, user@host[:port]; repeat for each node, node 0 first",
    )
    parser.add_argument("--local", action="store_true", help="the log is on this machine")
    parser.add_argument(
        "--log",
        metavar="PATH",
        action="append",
        help="server log to follow; repeat with --host, one per node (see docs/multinode.md)",
    )
    ports = parser.add_mutually_exclusive_group()
    ports.add_argument(
        "--port", type=int, metavar="N", help="server HTTP port (default: the engine's default)"
    )
    ports.add_argument(
        "--log-only", action="store_true", help="poll no port: READY on the log's ready line"
    )
    parser.add_argument("--engine", choices=ENGINES, default=None)
    parser.add_argument("--timeout", default="15m", metavar="DURATION", help="90, 90s, 15m, 1h")
    parser.add_argument(
        "--settle",
        default="0.5s",
        metavar="DURATION",
        help="keep watching this long after READY before exiting 0: a failure or a stop in it "
        "exits 1, a /health blip (DEGRADED) does not (default 0.5s)",
    )
    add_ssh_arguments(parser)
    parser.add_argument(
        "--fail-on-stall", action="store_true", help="exit 1 as soon as a rank is STALLED"
    )
    parser.add_argument("--stall-factor", type=float, metavar="F", help="times a stage's p95")
    parser.add_argument("--stall-floor", metavar="DURATION", help="least silence that stalls")
    parser.add_argument(
        "--slurm-job", metavar="ID", help="attach to this Slurm job (see docs/cluster.md)"
    )
    parser.add_argument(
        "--login",
        metavar="HOST",
        help="login host for Slurm's commands",
    )
    output = parser.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help="one JSON object per event")
    output.add_argument("--plain", action="store_true", help="one human line per change")
    parser.set_defaults(handler=run)


@dataclass(frozen=True, slots=True)
class NodeTarget:
    """One node of a server: its host (None for this machine) and its log."""

    host: str | None
    log: str | None


@dataclass(frozen=True, slots=True)
class SlurmTarget:
    """A Slurm job to wait for: its id (None: the profile's newest), the login host (None:
    this machine), the profile's ``log_dir``, node count and name."""

    job_id: str | None
    login: str | None
    log_dir: str | None
    nodes: int
    profile: str


@dataclass(frozen=True, slots=True)
class WaitPlan:
    """What to watch, resolved from the command line and the profile."""

    host: str | None
    log: str | None
    port: int | None
    engine: str
    timeout: float
    json: bool
    ssh_config: Path | None = None
    known_hosts: Path | None = None
    host_key_policy: str = "strict"
    """The profile's policy, for hosts whose ssh config has no ``StrictHostKeyChecking``."""
    ssh_choices: SshChoices = field(default_factory=SshChoices)
    fail_on_stall: bool = False
    profile: str | None = None
    expected_startup: float = DEFAULT_STARTUP
    stall: StallPolicy = field(default_factory=StallPolicy)
    data_dir: Path | None = None
    more_nodes: tuple[NodeTarget, ...] = ()
    """Nodes 1, 2, ... of a multi-node server (``host`` and ``log`` are node 0's)."""
    slurm: SlurmTarget | None = None
    """The Slurm job whose nodes are followed (their logs are known once it runs)."""
    health_host: str = "127.0.0.1"
    """Where ``port`` is, as seen from ``host``: node 0's address for a Slurm job."""
    detect_port: bool = False
    """With no ``port``: poll the default port of the engine the log shows, once it does."""
    settle: float = 0.5
    """Seconds the server must have been READY (or DEGRADED since) before the wait ends."""
    health_grace: float = DEFAULT_HEALTH_GRACE
    """Seconds a READY server's port may fail (DEGRADED) before the verdict is FAILED."""
    health_interval: float = 1.0
    """The profile's ``[monitor]`` pace of ``/health`` while the server is not READY ..."""
    health_interval_serving: float = 10.0
    """... and once it is READY."""
    api_key: str | None = None
    """Sent as a bearer token with each poll, as ``watch`` does."""

    @property
    def nodes(self) -> tuple[NodeTarget, ...]:
        return (NodeTarget(self.host, self.log), *self.more_nodes)


def wait_plan(args: argparse.Namespace) -> WaitPlan:
    """Combine the command line with the profile; raise ValueError or ConfigError if unusable."""
    hosts, logs = listed(args.host), listed(args.log)
    ad_hoc = args.profile is None and bool(args.local or hosts or logs)
    config = Config() if ad_hoc else load_config(args.config)
    profile = Profile() if ad_hoc else config.profile(args.profile)
    engine = args.engine or profile.engine
    from tui.commands.wait_slurm import slurm_target
    from tui.io.bench.bench_workload import api_key_of

    slurm = slurm_target(args, profile)
    nodes = node_targets(args.local, hosts, logs, profile) if slurm is None else ()
    host, log = (nodes[0].host, nodes[0].log) if nodes else (None, None)
    detect = log is not None and slurm is None
    port, detect_port = health_port(args, profile, engine, detect)
    if ad_hoc and log is None and args.port is None:
        port = None  # a host alone names no server: --port or --log says what to wait for
    if log is None and port is None and slurm is None:
        raise ValueError("nothing to wait for: give --log PATH and/or --port N, or a profile")
    try:
        timeout = parse_duration(args.timeout)
    except DurationError as error:
        raise ValueError(f"--timeout: {error}") from None
    settle = _settle(args)
    profile = with_ssh_flags(args, profile)
    stall = _stall_policy(args, profile)
    return WaitPlan(
        host, log, port, engine, timeout, args.json,
        ssh_config=profile.ssh_config,
        known_hosts=profile.known_hosts,
        host_key_policy=profile.host_key_policy,
        ssh_choices=profile.ssh_choices,
        fail_on_stall=getattr(args, "fail_on_stall", False),
        profile=None if ad_hoc else profile.name,
        expected_startup=profile.expected_startup,
        stall=stall,
        data_dir=config.data_dir,
        more_nodes=nodes[1:],
        slurm=slurm,
        detect_port=detect_port,
        settle=settle,
        health_grace=profile.serving.health_grace,
        health_interval=profile.monitor.health_interval,
        health_interval_serving=profile.monitor.health_interval_serving,
        api_key=api_key_of(None, None if ad_hoc else profile),
    )  # fmt: skip


def _settle(args: argparse.Namespace) -> float:
    try:
        return parse_duration(getattr(args, "settle", None) or "0.5s")
    except DurationError as error:
        raise ValueError(f"--settle: {error}") from None


def health_port(
    args: argparse.Namespace, profile: Profile, engine: str, detect: bool
) -> tuple[int | None, bool]:
    """The port to poll and whether it waits for the log to name the engine: ``--port``, the
    profile's, the default of a named engine; with an ``auto`` engine and one log, the
    default of the engine the log shows once it is detected."""
    if getattr(args, "log_only", False):
        return None, False
    if args.port is not None:
        return args.port, False
    if profile.port is not None:
        return profile.port, False
    if registry.find(engine) is None and detect:
        return None, True
    return registry.or_default(engine).default_port, False


def listed(value: str | list[str] | None) -> list[str]:
    """A repeatable option's values (a single string counts as one)."""
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)


def node_targets(
    local: bool, hosts: list[str], logs: list[str], profile: Profile
) -> tuple[NodeTarget, ...]:
    """Every node's host and log, node 0 first: from ``--host``/``--log`` (one ``--log`` serves
    every host), else from the profile (its ``logs``, ``log``, or the launched runs' logs)."""
    paths: list[str] = logs or list(profile.node_logs) or _launched_logs(profile)
    names: list[str | None] = [None] * len(paths) if local else [*(hosts or profile.hosts)]
    names = names or [None]
    if not paths:
        return (NodeTarget(names[0], None),)
    if len(paths) == 1:
        paths = paths * len(names)
    if len(paths) != len(names):
        raise ValueError(
            f"give one --log per --host, node 0 first ({len(names)} hosts, {len(paths)} logs)"
        )
    return tuple(NodeTarget(name, path) for name, path in zip(names, paths, strict=True))


def _launched_logs(profile: Profile) -> list[str]:
    if not profile.launch.command:
        return []
    from tui.io.launch.launch_profile import latest_logs

    return list(latest_logs(profile))


def _stall_policy(args: argparse.Namespace, profile: Profile) -> StallPolicy:
    """The profile's ``[stall]`` table with ``--stall-factor`` and ``--stall-floor`` on top."""
    factor = getattr(args, "stall_factor", None)
    floor = getattr(args, "stall_floor", None)
    if factor is not None and not 1.0 <= factor <= 1000.0:
        raise ValueError("--stall-factor: give a number from 1 to 1000")
    try:
        floor_seconds = parse_duration(floor) if floor is not None else profile.stall.floor
    except DurationError as error:
        raise ValueError(f"--stall-floor: {error}") from None
    return StallPolicy(factor=factor or profile.stall.factor, floor=floor_seconds)


def run(args: argparse.Namespace) -> int:
    try:
        plan = wait_plan(args)
    except ConfigError as error:
        print(f"error: {sanitize_line(str(error))}", file=sys.stderr)
        return EXIT_CONFIG
    except ValueError as error:
        print(f"error: {sanitize_line(str(error))}", file=sys.stderr)
        return ExitStatus.USAGE
    from tui.commands.wait_watch import wait_for_server

    try:
        return asyncio.run(wait_for_server(plan))
    except KeyboardInterrupt:
        return ended_by_signal()
