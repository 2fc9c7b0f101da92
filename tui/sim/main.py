"""Entry point of the simulated server: parse, redirect the log, write the pid, run."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Sequence

from tui.sim.cli import parse
from tui.sim.output import redirect_to


def main(argv: Sequence[str], prog: str = "python -m tui.sim") -> int:
    """Run one simulated server in the foreground; returns its exit status."""
    config = parse(argv, prog)
    if config.log_file:
        try:
            redirect_to(config.log_file)
        except OSError as exc:
            print(f"{prog}: error: cannot open --log-file {config.log_file}: {exc.strerror}",
                  file=sys.stderr)
            return 2
    if config.pid_file:
        try:
            with open(config.pid_file, "w") as out:
                out.write(f"{os.getpid()}\n")
        except OSError as exc:
            print(f"{prog}: error: cannot write --pid-file {config.pid_file}: {exc.strerror}",
                  file=sys.stderr)
            return 2
    from tui.sim.runner import Runner

    return asyncio.run(Runner(config).run())
