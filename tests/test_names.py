"""Names say what they mean: no two modules in ``tui/`` share a file name, no two classes a name.

A newcomer who reads ``FailureKind`` or opens ``state.py`` should not have to ask which one.
Package markers (``__init__.py``, ``__main__.py``) are the only file names that may repeat.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

from tests.conftest import REPO

PACKAGE = REPO / "tui"
MARKERS = frozenset({"__init__.py", "__main__.py"})


def _modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def _repeated(places: dict[str, list[str]]) -> dict[str, list[str]]:
    return {name: where for name, where in sorted(places.items()) if len(where) > 1}


def _listing(repeated: dict[str, list[str]]) -> str:
    return "\n".join(f"{name}: {', '.join(where)}" for name, where in repeated.items())


def _where(path: Path) -> str:
    return path.relative_to(REPO).as_posix()


def _top_level_classes(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return [node.name for node in tree.body if isinstance(node, ast.ClassDef)]


def test_no_two_modules_share_a_file_name() -> None:
    places: dict[str, list[str]] = defaultdict(list)
    for path in _modules():
        if path.name not in MARKERS:
            places[path.name].append(_where(path))
    repeated = _repeated(places)
    assert not repeated, "file names used twice:\n" + _listing(repeated)


def test_no_two_classes_share_a_name() -> None:
    places: dict[str, list[str]] = defaultdict(list)
    for path in _modules():
        for name in _top_level_classes(path):
            places[name].append(_where(path))
    repeated = _repeated(places)
    assert not repeated, "class names used twice:\n" + _listing(repeated)
