"""A rank process: a real pid in the server's process tree, acting on its parent's word.

The main process writes one command per line to this process's stdin: ``sigquit`` (tell the
parent a child failed, then exit 1, as a crashing scheduler does), ``abort`` (die of SIGABRT,
as NCCL's watchdog does) or ``exit``. End of input means the parent is gone, so the process
ends too: ranks never outlive their server.
"""

from __future__ import annotations

import os
import resource
import signal
import sys


def main() -> int:
    # Ctrl-C or a SIGTERM sent to the whole process group is the main process's to handle:
    # it drains, then ends its ranks itself.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    for line in sys.stdin.buffer:
        command = line.strip()
        if command == b"sigquit":
            os.kill(os.getppid(), signal.SIGQUIT)
            return 1
        if command == b"abort":
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
            os.abort()
        if command == b"exit":
            return 0
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
