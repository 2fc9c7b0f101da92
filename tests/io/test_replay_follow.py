"""``bringup replay --follow`` waits for the log, reads it as it grows and reports the run."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import REPO

LINES = [
    b"[2025-01-01 00:00:00] server_args=ServerArgs(model_path='m', tp_size=2)\n",
    b"[2025-01-01 00:00:05 TP0] Load weight begin. avail mem=78.50 GB\n",
    b"[2025-01-01 00:00:05 TP1] Load weight begin. avail mem=78.50 GB\n",
    b"[2025-01-01 00:01:00 TP0] Load weight end. type=M, avail mem=60.00 GB, mem usage=18 GB.\n",
    b"[2025-01-01 00:01:00 TP1] Load weight end. type=M, avail mem=60.00 GB, mem usage=18 GB.\n",
    b"[2025-01-01 00:02:00] The server is fired up and ready to roll!\n",
]


def test_a_log_written_later_is_followed_to_its_outcome(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    command = [sys.executable, "-m", "tui", "replay", "--follow", "--json", str(log)]
    process = subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, text=True)
    try:
        time.sleep(0.5)
        for line in LINES:
            with log.open("ab") as handle:
                handle.write(line)
            time.sleep(0.05)
        out, _ = process.communicate(timeout=60)
    finally:
        process.kill()
    report = json.loads(out)
    assert process.returncode == 0
    assert report["outcome"] == "ready"
    assert {"TP0", "TP1"} <= set(report["ranks"])
