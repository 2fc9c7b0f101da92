"""``bringup restart [PROFILE] [--force] [--grace DURATION]``: kill, then launch again.

The previous run is stopped exactly as ``bringup kill`` does (its record is kept, and the new
run's record names it as ``previous_run``), then the profile is launched as ``bringup launch``
does. If anything of the previous run survives, nothing new is launched. Exit statuses and
``--json`` as ``bringup launch`` (the document has ``killed`` and the launch's fields).
"""

from __future__ import annotations

import argparse

from tui.commands.exit_codes import ExitStatus
from tui.commands.kill import add_grace_argument
from tui.commands.launch import add_profile_arguments, progress, run_action, say
from tui.commands.launch_json import document, emit, kill_fields, launch_fields
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
        result = await launcher.restart(args.force, args.grace, progress=progress(args))
        code = ExitStatus.OK if result.launched.ok else ExitStatus.FAILED
        if args.json:
            fields = launch_fields(result.launched)
            lines = kill_lines(result.killed) + fields.pop("lines")
            emit(document("restart", launcher.spec.profile, code, killed=kill_fields(result.killed),
                          lines=lines, **fields))  # fmt: skip
            return code
        for line in kill_lines(result.killed) + launch_lines(result.launched):
            say(line)
        return code

    return run_action(args, "restart", body)
