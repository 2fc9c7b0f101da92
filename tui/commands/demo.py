"""``bringup demo``: the monitor against a simulated GPU host, with nothing to set up.

An SSH server with throwaway keys starts on 127.0.0.1, a simulated TP8 server with an EAGLE-3
drafter is launched through it, and the monitor tails its log and polls its health over that
connection. ``--scenario`` picks a failure to watch; ``--engine vllm`` a vLLM start. Quitting
stops the simulated server and the SSH server and removes every temporary file.
"""

from __future__ import annotations

import argparse
import asyncio
from typing import TYPE_CHECKING

from tui.commands.exit_codes import ExitStatus

if TYPE_CHECKING:
    from tui.app.monitor.app_runner import ExitGuard
    from tui.io.demo.demo_host import DemoHost, DemoOptions


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from tui.sim.config import ENGINES, SCENARIOS

    parser = sub.add_parser(
        "demo",
        help="the monitor against a simulated GPU host (no setup needed)",
        description="Watch a simulated TP8 speculative server start, reached over SSH.",
    )
    parser.add_argument("--scenario", choices=SCENARIOS, default="ok", help="what happens")
    parser.add_argument("--engine", choices=ENGINES, default=ENGINES[0])
    parser.add_argument(
        "--time-scale", type=float, default=0.05, metavar="F",
        help="fraction of real start-up time the simulation takes (default 0.05)",
    )  # fmt: skip
    parser.add_argument("--theme", metavar="NAME", help="theme name (bringup-dark, ...)")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from tui.io.demo.demo_host import DemoOptions

    options = DemoOptions(args.engine, args.scenario, args.time_scale)
    try:
        return asyncio.run(_demo(options, args.theme))
    except asyncio.CancelledError:
        return ExitStatus.FAILED  # a signal ended the demo before the app ran; all was stopped


async def _demo(options: DemoOptions, theme: str | None) -> int:
    from tui.app.monitor.app_runner import exit_guard
    from tui.io.demo.demo_host import DemoHost

    # From the first moment: closing the terminal while the demo still starts must also stop
    # what was started, so the signals are routed before anything is launched.
    host = DemoHost(options)
    with exit_guard() as guard:
        guard.on_hangup = host.abandon
        async with host as demo:
            return await _watch_demo(demo, options, theme, guard)


async def _watch_demo(
    demo: DemoHost, options: DemoOptions, theme: str | None, guard: ExitGuard
) -> int:
    from tui.app.monitor.app_runner import run_app
    from tui.app.monitor.monitor_build import WatchSettings, build_app
    from tui.app.monitor.themes import DEFAULT_THEME
    from tui.app.monitor.view_model import Target
    from tui.io.bench.bench_setup import DEMO_BENCH

    if demo.session is None:
        return ExitStatus.FAILED
    settings = WatchSettings(
        target=Target(f"demo {options.scenario}", demo.label),
        log_path=str(demo.log_path),
        port=demo.port,
        engine=options.engine,
        theme=theme or DEFAULT_THEME,
        expected_seconds=600.0 * options.time_scale,
        bench=DEMO_BENCH,
        telemetry=demo.telemetry(),
        history=True,
    )
    return await run_app(build_app(demo.session, settings), guard)
