"""The engines bringup knows, each a ``Dialect``: the one list of them, in detection order.

A name a config or a command line gives is looked up here (``find``, ``or_default``); ``AUTO``
asks for the engine to be detected from the log, and a log whose lines named none yet is
``UNKNOWN``. The first dialect is the default where a guess is needed (the built-in
benchmark's endpoint, the port). ``registered`` adds one for a while (a test's, a plug-in's).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from tui.engine.servers.dialect import Dialect, GenerationProbe
from tui.engine.servers.hits import Parsed
from tui.engine.servers.sglang.sglang_dialect import SGLANG
from tui.engine.servers.vllm.vllm_dialect import VLLM

AUTO = "auto"
UNKNOWN = "unknown"

_DIALECTS: list[Dialect] = [SGLANG, VLLM]


def dialects() -> tuple[Dialect, ...]:
    """Every registered dialect, in detection order."""
    return tuple(_DIALECTS)


def names() -> tuple[str, ...]:
    """The registered engines' names."""
    return tuple(dialect.name for dialect in _DIALECTS)


def choices() -> tuple[str, ...]:
    """What a config or a command line may name: ``auto`` or a registered engine."""
    return (AUTO, *names())


def find(name: str | None) -> Dialect | None:
    """The dialect called ``name``; None for ``auto``, ``unknown`` or anything unregistered."""
    return next((dialect for dialect in _DIALECTS if dialect.name == name), None)


def default() -> Dialect:
    """The dialect assumed when the engine is not known."""
    return _DIALECTS[0]


def or_default(name: str | None) -> Dialect:
    """The dialect called ``name``, else the default one."""
    return find(name) or default()


def envelope_readers() -> tuple[tuple[str, Callable[[str], Parsed | None]], ...]:
    """The engines that read their own envelope, with their readers."""
    return tuple(
        (dialect.name, dialect.read_line) for dialect in _DIALECTS if dialect.read_line is not None
    )


def front_processes() -> frozenset[str]:
    """Process names that front some engine's server (never a worker)."""
    return frozenset().union(*(dialect.traits.front_processes for dialect in _DIALECTS))


def generation_probes(name: str | None) -> tuple[GenerationProbe, ...]:
    """The generations to try, in order: the engine's own, or, when it is not known, every
    registered engine's (one per path), each tried when the one before was not found."""
    known = find(name)
    if known is not None:
        return (known.generation,)
    probes: dict[str, GenerationProbe] = {}
    for dialect in _DIALECTS:
        probes.setdefault(dialect.generation.path, dialect.generation)
    return tuple(probes.values())


def process_titles(name: str | None, tag: str) -> tuple[str, ...]:
    """The titles a rank's process may carry: its engine's, or every engine's in order."""
    known = find(name)
    chosen = (known,) if known is not None else _DIALECTS
    return tuple(title for dialect in chosen for title in dialect.process_titles(tag))


@contextmanager
def registered(dialect: Dialect) -> Iterator[Dialect]:
    """``dialect`` registered (last in detection order) until the block ends."""
    if find(dialect.name) is not None or dialect.name in (AUTO, UNKNOWN):
        raise ValueError(f"an engine is already called {dialect.name!r}")
    _DIALECTS.append(dialect)
    try:
        yield dialect
    finally:
        _DIALECTS.remove(dialect)
