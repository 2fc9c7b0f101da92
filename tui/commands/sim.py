"""``bringup sim``: run a simulated SGLang or vLLM server (see ``tui.sim``)."""

from __future__ import annotations

import argparse
import sys

from tui.commands.exit_codes import ExitStatus, exit_table


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Listed in ``bringup --help``; the arguments themselves pass through to the simulator."""
    parser = sub.add_parser("sim", help="run a simulated SGLang/vLLM server", add_help=False)
    parser.set_defaults(handler=lambda args: run_argv([]))


def run_argv(argv: list[str]) -> int:
    """Run the simulator with a real server's command line (unknown flags included); its
    ``--help`` ends with the exit-status table, as every command's does."""
    if {"-h", "--help"} & set(argv):
        from tui.sim.sim_cli import build_parser

        sys.stdout.write(f"{build_parser('bringup sim').format_help()}\n{exit_table()}\n")
        return ExitStatus.OK
    from tui.sim.sim_main import main

    return main(argv, prog="bringup sim")
