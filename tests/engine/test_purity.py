"""The engine is pure: importing it loads no UI, SSH or HTTP library, and none of the layers
built on it (configuration, I/O, the app, the commands, the simulator)."""

from __future__ import annotations

import functools
import json
import subprocess
import sys

FORBIDDEN = ("textual", "rich", "asyncssh", "httpx", "uvicorn", "starlette")
UPPER_LAYERS = ("tui.config", "tui.io", "tui.app", "tui.commands", "tui.sim")


@functools.cache
def _loaded_after_importing_every_engine_module() -> tuple[str, ...]:
    code = (
        "import importlib, json, pkgutil, sys\n"
        "import tui.engine\n"
        "for info in pkgutil.walk_packages(tui.engine.__path__, 'tui.engine.'):\n"
        "    importlib.import_module(info.name)\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    loaded: list[str] = json.loads(result.stdout)
    return tuple(loaded)


def _within(module: str, packages: tuple[str, ...]) -> bool:
    return any(module == package or module.startswith(f"{package}.") for package in packages)


def test_engine_imports_no_ui_or_network_library() -> None:
    loaded = _loaded_after_importing_every_engine_module()
    assert [module for module in loaded if module.split(".")[0] in FORBIDDEN] == []


def test_engine_imports_no_layer_above_it() -> None:
    loaded = _loaded_after_importing_every_engine_module()
    assert [module for module in loaded if _within(module, UPPER_LAYERS)] == []
