"""The app renders and io acts: no module under ``tui/app`` opens a connection, a process or a
database itself. Each import statement is read with ``ast``, so a name in a string or a comment
does not count, and an import inside a function does."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

APP = Path(__file__).resolve().parents[2] / "tui" / "app"
FORBIDDEN = frozenset({"httpx", "asyncssh", "sqlite3", "subprocess", "socket"})


def imported_modules(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """Every absolute module an import statement of ``tree`` names, with its line."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from ((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.lineno, node.module


def forbidden_imports(source: str, where: str) -> list[str]:
    found = []
    for line, module in sorted(imported_modules(ast.parse(source, where))):
        if module.split(".")[0] in FORBIDDEN:
            found.append(f"{where}:{line} imports {module}")
    return found


def test_no_app_module_does_io_itself() -> None:
    modules = sorted(APP.rglob("*.py"))
    assert modules, f"no modules under {APP}"
    found = [
        problem
        for path in modules
        for problem in forbidden_imports(path.read_text(), str(path.relative_to(APP.parent)))
    ]
    assert found == []


def test_the_check_sees_every_form_of_import() -> None:
    source = (
        "import os\nimport httpx\nfrom sqlite3 import connect\n"
        "def f():\n    import subprocess.run as r\n"
        "from socket import socket as s\nimport asyncssh.connection\n"
        "from . import socket\n"
    )
    assert forbidden_imports(source, "m.py") == [
        "m.py:2 imports httpx",
        "m.py:3 imports sqlite3",
        "m.py:5 imports subprocess.run",
        "m.py:6 imports socket",
        "m.py:7 imports asyncssh.connection",
    ]
