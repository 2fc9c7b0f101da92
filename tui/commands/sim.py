"""``bringup sim``: run a simulated SGLang or vLLM server (see ``tui.sim``)."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Listed in ``bringup --help``; the arguments themselves pass through to the simulator."""
    parser = sub.add_parser("sim", help="run a simulated SGLang/vLLM server", add_help=False)
    parser.set_defaults(handler=lambda args: run_argv([]))


def run_argv(argv: list[str]) -> int:
    """Run the simulator with a real server's command line (unknown flags included)."""
    from tui.sim.sim_main import main

    return main(argv, prog="bringup sim")
