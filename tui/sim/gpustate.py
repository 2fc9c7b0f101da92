"""The simulated GPUs' state, shared through a small JSON file with the fake ``nvidia-smi``.

The server writes the memory and utilisation of each of its ranks' GPUs as start-up and
serving go on; ``python -m tui.sim.nvidia_smi`` reads it. The file names its owner's pid so
that readers treat the GPUs as free once that server is gone, however it ended.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

STATE_ENV = "BRINGUP_SIM_STATE"


def state_path(configured: str | None = None) -> Path:
    """``--state-file``, else ``$BRINGUP_SIM_STATE``, else a per-user temporary file."""
    if configured:
        return Path(configured)
    from_env = os.environ.get(STATE_ENV)
    if from_env:
        return Path(from_env)
    return Path(tempfile.gettempdir()) / f"bringup-sim-{os.getuid()}.json"


@dataclass(slots=True)
class GpuSlot:
    """One GPU as the server uses it."""

    index: int
    pid: int
    used_mib: int
    util: int


class GpuStateFile:
    """Collects updates and writes them atomically when asked (at most a few times a second)."""

    def __init__(self, path: Path, gpus: list[int]) -> None:
        self.path = path
        self.slots = [GpuSlot(index, 0, 0, 0) for index in gpus]
        self._dirty = True

    def set_pids(self, pids: list[int]) -> None:
        for slot, pid in zip(self.slots, pids, strict=False):
            slot.pid = pid
        self._dirty = True

    def set_memory(self, rank: int | None, used_gb: float, util: int) -> None:
        targets = self.slots if rank is None else self.slots[rank : rank + 1]
        for slot in targets:
            slot.used_mib = int(used_gb * 1024)
            slot.util = util
        self._dirty = True

    def set_util(self, util: int) -> None:
        for slot in self.slots:
            slot.util = util
        self._dirty = True

    def flush(self) -> None:
        if not self._dirty:
            return
        self._dirty = False
        data: dict[str, Any] = {
            "owner": os.getpid(),
            "updated": time.time(),
            "gpus": [asdict(slot) for slot in self.slots],
        }
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            handle, temp = tempfile.mkstemp(dir=self.path.parent, prefix=".gpus-")
            with os.fdopen(handle, "w") as out:
                json.dump(data, out)
            os.replace(temp, self.path)
        except OSError:
            return

    def remove(self) -> None:
        try:
            self.path.unlink()
        except OSError:
            return


def read_state(path: Path) -> list[GpuSlot]:
    """The GPUs a live server uses; empty when the file is missing, bad or its owner died."""
    try:
        data = json.loads(path.read_text())
        owner = int(data["owner"])
        os.kill(owner, 0)
        return [
            GpuSlot(int(g["index"]), int(g["pid"]), int(g["used_mib"]), int(g["util"]))
            for g in data["gpus"]
        ]
    except (OSError, ValueError, KeyError, TypeError):
        return []
