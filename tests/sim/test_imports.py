"""The simulator never loads the UI, and its command line loads no server library."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import REPO


def _loaded(code: str) -> list[str]:
    script = code + "\nimport sys, json\nprint(json.dumps(sorted(sys.modules)))\n"
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, check=True
    )
    names: list[str] = json.loads(result.stdout)
    return names


def test_no_simulator_module_imports_textual() -> None:
    loaded = _loaded(
        "import importlib, pkgutil, tui.sim\n"
        "for info in pkgutil.iter_modules(tui.sim.__path__):\n"
        "    if info.name != '__main__':\n"
        "        importlib.import_module('tui.sim.' + info.name)\n"
    )
    assert not [name for name in loaded if name.split(".")[0] == "textual"]


def test_the_command_line_loads_no_event_loop_or_server() -> None:
    loaded = {name.split(".")[0] for name in _loaded("import tui.sim.sim_main, tui.commands.sim")}
    assert not loaded & {"asyncio", "uvicorn", "starlette", "httpx", "textual"}


def test_the_start_up_schedule_is_pure() -> None:
    loaded = {name.split(".")[0] for name in _loaded("import tui.sim.startup")}
    assert not loaded & {"asyncio", "uvicorn", "starlette", "httpx", "socket", "subprocess"}
