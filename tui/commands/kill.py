"""``bringup kill [PROFILE] [--grace DURATION]``: stop the profile's newest run on every host.

Sends SIGTERM to each node's recorded process group, waits the grace period (``launch.
grace_period`` unless ``--grace`` is given), then SIGKILLs what is left. Only the recorded group
is signalled, after checking that its leader is still the process the run started. Reports,
per node, what was still alive after the grace period and whether the port and the GPU memory
were released. Exit status: 0 nothing of the run is left, 1 something survived or was refused
(3 unreachable, 4 invalid configuration, as ``bringup launch``). ``--json``: one document.
"""

from __future__ import annotations

import argparse

from tui.commands.exit_codes import ExitStatus
from tui.commands.launch import add_profile_arguments, progress, run_action, say
from tui.commands.launch_json import emit, killed_document
from tui.engine.timing.durations import DurationError, parse_duration
from tui.io.launch.launch_profile import kill_lines
from tui.io.launch.launcher import Launcher

DESCRIPTION = (
    "Stop the profile's newest run on every host: SIGTERM to its recorded process group, the "
    "grace period, then SIGKILL. Reports what survived the grace period and whether the port "
    "and the GPU memory were released."
)


def duration(text: str) -> float:
    try:
        return parse_duration(text)
    except DurationError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "kill",
        help="stop the profile's newest run (SIGTERM, grace period, SIGKILL)",
        description=DESCRIPTION,
    )
    add_profile_arguments(parser)
    add_grace_argument(parser)
    parser.set_defaults(handler=run)


def add_grace_argument(parser: argparse.ArgumentParser) -> None:
    """``--grace DURATION``, the time between SIGTERM and SIGKILL (kill and restart)."""
    parser.add_argument(
        "--grace",
        type=duration,
        metavar="DURATION",
        help="time between SIGTERM and SIGKILL (default: the profile's launch.grace_period)",
    )


def run(args: argparse.Namespace) -> int:
    async def body(launcher: Launcher) -> int:
        kills = await launcher.kill(args.grace, progress=progress(args))
        code = ExitStatus.OK if all(k.ok for k in kills) else ExitStatus.FAILED
        if args.json:
            emit(killed_document(launcher.spec.profile, code, kills))
            return code
        for line in kill_lines(kills):
            say(line)
        return code

    return run_action(args, "kill", body)
