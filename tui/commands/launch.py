"""``bringup launch [PROFILE] [--force]``: start the profile's server on each of its hosts.

Every node is checked first (port free, no live previous run, GPUs idle, model path present);
the launch is refused with the reasons unless ``--force`` is given. The command returns once
every node's process group exists; follow the run with the printed ``-latest.log`` path.
Exit status (``tui.commands.exit_codes``): 0 launched, 1 refused or failed, 3 a host could not
be reached or asked, 4 invalid configuration. ``--json`` prints one document
(``launch_json.py``) instead of the sentences; progress then goes to standard error.

The helpers here are shared by ``bringup kill`` and ``bringup restart``.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TextIO

from tui.commands.exit_codes import ExitStatus
from tui.commands.launch_json import document, emit, launch_fields
from tui.commands.ssh_flags import add_ssh_arguments, with_ssh_flags
from tui.config import ConfigError, Profile, load_config
from tui.engine.launch.launch_plan import PlanError
from tui.engine.logs.sanitize import sanitize_line
from tui.io.launch.launch_node import NodeError
from tui.io.launch.launch_profile import launch_lines, open_launcher
from tui.io.launch.launcher import Launcher
from tui.io.transport.ssh import ConnectError

Action = Callable[[Launcher], Awaitable[int]]
Failed = Callable[[int, str], int]


DESCRIPTION = (
    "Start the profile's server on each of its hosts, in its own process group, with its "
    "output in a new log file. Every node is checked first; a failed check refuses the launch "
    "unless --force is given."
)


def add_profile_arguments(parser: argparse.ArgumentParser) -> None:
    """``PROFILE``, ``--config`` and ``--json``, as every launch command takes them."""
    parser.add_argument(
        "profile",
        nargs="?",
        metavar="PROFILE",
        help="profile to act on (default: default_profile or the only one)",
    )
    parser.add_argument(
        "--config",
        type=Path,
        metavar="PATH",
        help="configuration file (default: $BRINGUP_CONFIG or the XDG file)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    add_ssh_arguments(parser)


def say(line: str, stream: TextIO | None = None) -> None:
    """Print one line from a host, with anything a terminal would act on removed."""
    print(sanitize_line(line), file=stream or sys.stdout, flush=True)


def _profile(args: argparse.Namespace, action: str) -> tuple[str, Profile | str]:
    """Where the profile is written and the profile, or why ``action`` is refused."""
    config = load_config(args.config)
    profile = with_ssh_flags(args, config.profile(args.profile))
    where = f"{config.path or 'configuration'}: profiles.{profile.name}"
    if profile.read_only:
        return where, f"refused: profile {profile.name!r} is read-only: {action} is switched off"
    if not profile.launch.command:
        return where, f"refused: {where}: no launch.command to {action} with"
    return where, profile


def run_action(args: argparse.Namespace, action: str, body: Action) -> int:
    """Load the profile, connect, run ``body``; turn every expected failure into a message
    (and, with ``--json``, a document)."""
    where = "configuration"

    def failed(code: int, message: str) -> int:
        say(message, sys.stderr)
        if getattr(args, "json", False):
            emit(document(action, args.profile, code, error=sanitize_line(message)))
        return code

    try:
        where, profile = _profile(args, action)
        if isinstance(profile, str):
            return failed(ExitStatus.FAILED, profile)
        if profile.scheduler == "slurm":
            from tui.commands.slurm_launch import run_slurm

            return run_slurm(profile, action, args)
        return asyncio.run(_with_launcher(profile, body))
    except ConfigError as exc:
        return failed(ExitStatus.CONFIG, f"error: {exc}")
    except PlanError as exc:
        return failed(ExitStatus.CONFIG, f"error: {where}: {exc}")
    except (ConnectError, NodeError) as exc:
        return failed(ExitStatus.UNREACHABLE, f"error: {exc}")


def progress(args: argparse.Namespace) -> Callable[[str], None]:
    """Where progress sentences go: standard output, or standard error with ``--json``."""
    if args.json:
        return lambda line: say(line, sys.stderr)
    return say


async def _with_launcher(profile: Profile, body: Action) -> int:
    async with open_launcher(profile) as launcher:
        return await body(launcher)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "launch",
        help="start the profile's server on its hosts",
        description=DESCRIPTION,
    )
    add_profile_arguments(parser)
    parser.add_argument(
        "--force",
        action="store_true",
        help="launch even when a check refuses (port, previous run, GPUs, model)",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    async def body(launcher: Launcher) -> int:
        result = await launcher.launch(force=args.force)
        code = ExitStatus.OK if result.ok else ExitStatus.FAILED
        if args.json:
            emit(document("launch", launcher.spec.profile, code, **launch_fields(result)))
            return code
        for line in launch_lines(result):
            say(line)
        return code

    return run_action(args, "launch", body)
