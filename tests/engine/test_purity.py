"""The engine is pure: importing it loads no UI, SSH or HTTP library."""

from __future__ import annotations

import json
import subprocess
import sys

FORBIDDEN = ("textual", "rich", "asyncssh", "httpx", "uvicorn", "starlette")


def test_engine_imports_no_ui_or_network_library() -> None:
    code = (
        "import importlib, json, pkgutil, sys\n"
        "import tui.engine\n"
        "for info in pkgutil.walk_packages(tui.engine.__path__, 'tui.engine.'):\n"
        "    importlib.import_module(info.name)\n"
        f"print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in {FORBIDDEN!r})))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert json.loads(result.stdout) == []
