"""Where the simulated server's log goes: straight to file descriptor 2, unbuffered.

Every record is one ``os.write`` so lines from the main process, uvicorn's handlers and tqdm
redraws keep their order and never tear. ``--log-file`` is handled by pointing descriptors 1
and 2 at the file, exactly as ``> server.log 2>&1`` would.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

from tui.sim.config import VLLM_ENGINE, SimConfig
from tui.sim.logfmt import LEVELS, sglang_line, vllm_line, vllm_raw
from tui.sim.sim_failures import GLOG

PidOf = Callable[[str], int]


def redirect_to(path: str) -> None:
    """Send stdout and stderr (ours and our children's) to ``path``, appending."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)


def write(text: str) -> None:
    """Write all of ``text`` to descriptor 2 (retrying short writes)."""
    data = text.encode("utf-8", "replace")
    while data:
        try:
            written = os.write(2, data)
        except BlockingIOError:
            time.sleep(0.001)
            continue
        except OSError:
            return
        data = data[written:]


def glog_stamp(now: float) -> str:
    """The ``MMDD HH:MM:SS.nnnnnnnnn`` stamp of C++ (glog-style) runtime lines."""
    nanos = int(now * 1e9) % 1_000_000_000
    return time.strftime("%m%d %H:%M:%S", time.localtime(now)) + f".{nanos:09d}"


class LogSink:
    """Formats records for the configured engine and writes them."""

    def __init__(self, config: SimConfig, pid_of: PidOf) -> None:
        self.engine = config.engine
        self.threshold = LEVELS.get(config.log_level.upper(), 20)
        self.millis = os.environ.get("SGLANG_LOG_MS", "").lower() in ("1", "true")
        self.pid_of = pid_of
        self.line_start = True

    def _write(self, text: str) -> None:
        if text:
            write(text)
            self.line_start = text.endswith("\n")

    def log(
        self,
        who: str | None,
        msg: str,
        level: str = "INFO",
        src: str = "",
        shown: str | None = None,
    ) -> None:
        if LEVELS.get(level, 20) < self.threshold:
            return
        now = time.time()
        if self.engine == VLLM_ENGINE:
            proc = who or "APIServer"
            pid = self.pid_of(proc)
            self._write(vllm_line(now, shown or proc, pid, level, src, msg.rstrip("\n")))
        else:
            self._write(sglang_line(now, who, msg, self.millis))

    def raw(self, text: str, who: str | None = None, stamped: bool = False) -> None:
        if stamped:
            text = text.replace(GLOG, glog_stamp(time.time()))
        if self.engine == VLLM_ENGINE and who is not None:
            text = self._prefixed(who, text)
        self._write(text)

    def _prefixed(self, who: str, text: str) -> str:
        """vLLM prefixes every line its processes write (a redraw continues its line)."""
        pid, at_start, out = self.pid_of(who), self.line_start, []
        for piece in text.splitlines(keepends=True) if "\n" in text else [text]:
            out.append(vllm_raw(who, pid, piece) if at_start else piece)
            at_start = piece.endswith("\n")
        return "".join(out)
