"""``bringup restart [PROFILE] [--force] [--grace DURATION]``: kill, then launch again.

The previous run is stopped exactly as ``bringup kill`` does (its record is kept, and the new
run's record names it as ``previous_run``), then the profile is launched as ``bringup launch``
does. If anything of the previous run survives, nothing new is launched.
"""

from __future__ import annotations

import argparse

from tui.commands.kill import add_grace_argument
from tui.commands.launch import add_profile_arguments, run_action, say
from tui.io.launch.launch_profile import kill_lines, launch_lines
from tui.io.launch.launcher import Launcher

DESCRIPTION = (
    "Stop the profile's newest run as 'bringup kill' does, then launch it again as "
    "'bringup launch' does. Nothing is launched if anything of the previous run survives."
)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "restart",
        help="stop the profile's newest run, then launch it again",
        description=DESCRIPTION,
    )
    add_profile_arguments(parser)
    parser.add_argument("--force", action="store_true", help="launch even when a check refuses")
    add_grace_argument(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    async def body(launcher: Launcher) -> int:
        result = await launcher.restart(args.force, args.grace, progress=say)
        for line in kill_lines(result.killed) + launch_lines(result.launched):
            say(line)
        return 0 if result.launched.ok else 1

    return run_action(args, "restart", body)
