"""Entry point of the simulated server: parse, redirect the log, write the pid, run.

Only the argument parser is imported up front, so ``--help`` and argument errors are quick;
asyncio, the runner and (later, once the ranks are ready) uvicorn load when needed.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from tui.sim.config import SimConfig
from tui.sim.sim_cli import parse


def main(argv: Sequence[str], prog: str = "python -m tui.sim") -> int:
    """Run one simulated server in the foreground; returns its exit status."""
    config = parse(argv, prog)
    if config.log_file:
        from tui.sim.output import redirect_to

        try:
            redirect_to(config.log_file)
        except OSError as exc:
            print(
                f"{prog}: error: cannot open --log-file {config.log_file}: {exc.strerror}",
                file=sys.stderr,
            )
            return 2
    if config.pid_file:
        try:
            with open(config.pid_file, "w") as out:
                out.write(f"{os.getpid()}\n")
        except OSError as exc:
            print(
                f"{prog}: error: cannot write --pid-file {config.pid_file}: {exc.strerror}",
                file=sys.stderr,
            )
            return 2
    return _run(config)


def _run(config: SimConfig) -> int:
    """Print the launch lines at once, then load asyncio and play the rest of the start."""
    from tui.sim.output import LogSink
    from tui.sim.startup import build_timeline, opening
    from tui.sim.timeline import Log

    timeline = build_timeline(config)
    played = opening(timeline)
    sink = LogSink(config, lambda tag: os.getpid())
    for step in timeline.steps[:played]:
        action = step.action
        assert isinstance(action, Log)
        sink.log(action.who, action.msg, action.level, action.src, action.shown)
    import asyncio

    from tui.sim.sim_runner import SimRunner

    return asyncio.run(SimRunner(config, timeline, played).run())
