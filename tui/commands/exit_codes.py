"""The one table of exit statuses every ``bringup`` command ends with.

Each command returns one of these; ``tui.cli`` prints the table under every ``--help`` and the
README repeats it. A signal ends a headless command with the shell's convention, 128 plus the
signal's number, and no traceback.
"""

from __future__ import annotations

import signal
from enum import IntEnum


class ExitStatus(IntEnum):
    """What a command's exit status means, whichever command it is."""

    OK = 0
    """Success: done, or the server is ready."""
    FAILED = 1
    """The server failed or stopped, a check refused, a benchmark had errors."""
    USAGE = 2
    """The command line was wrong (argparse's own status)."""
    UNREACHABLE = 3
    """A host or a server could not be reached, or refused the host key or the login."""
    CONFIG = 4
    """The configuration (or a file the command was given) is invalid."""
    ERROR = 5
    """An unexpected error (its traceback is on standard error)."""
    TIMEOUT = 6
    """The time given ran out before an outcome (``wait --timeout``)."""
    INCOMPLETE = 7
    """The log ended before an outcome (``replay --exit-status``): neither ready nor failed."""
    INTERRUPTED = 128 + signal.SIGINT
    """Ended by SIGINT (Ctrl-C)."""
    TERMINATED = 128 + signal.SIGTERM
    """Ended by SIGTERM."""


MEANINGS: dict[ExitStatus, str] = {
    ExitStatus.OK: "success, or the server is ready",
    ExitStatus.FAILED: "failed: the server failed or stopped, a check refused, benchmark errors",
    ExitStatus.USAGE: "usage error on the command line",
    ExitStatus.UNREACHABLE: "a host or server unreachable, or it refused the host key or login",
    ExitStatus.CONFIG: "invalid configuration (or an unreadable input file)",
    ExitStatus.ERROR: "unexpected error (traceback on standard error)",
    ExitStatus.TIMEOUT: "timeout: the given time ran out",
    ExitStatus.INCOMPLETE: "incomplete: the log ended before ready or failed (replay)",
    ExitStatus.INTERRUPTED: "interrupted by SIGINT (Ctrl-C)",
    ExitStatus.TERMINATED: "terminated by SIGTERM",
}


def exit_table() -> str:
    """The table as ``--help`` shows it (the epilog of every command)."""
    rows = "\n".join(f"  {code.value:>3}  {MEANINGS[code]}" for code in ExitStatus)
    return f"exit status:\n{rows}"


def markdown_table() -> str:
    """The table as the README shows it (``tests/test_readme.py`` compares the two)."""
    rows = "\n".join(f"| {code.value} | {MEANINGS[code]} |" for code in ExitStatus)
    return f"| status | meaning |\n|---|---|\n{rows}"
