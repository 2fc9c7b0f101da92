"""Lines that belong to another process in the same log: a wrapper's own uvicorn or FastAPI
app, a test harness, a trainer that starts rollout servers.

Only the engine's own lines decide its stages and readiness, and a failure printed by another
process names the start's failure only when the engine's own lines agree:

- a bare uvicorn line (no engine envelope) that names a port other than the server's is a
  wrapper's; so is a bare ``Application startup complete.`` in a log whose engine prefixes its
  own uvicorn lines (vLLM's ``(APIServer pid=N)``), and a bare uvicorn start while the engine
  is between its distributed init and its KV cache (both engines start their HTTP server
  after the model);
- a failure opened by a bare line, whose lines name neither engine, from a log whose engine
  has ranks of its own that did not fail: a harness's traceback or timeout
  (``traceback_other``, ``startup_timeout``), or a bind error on a port that is not the
  server's, is held back. When the engine's own failure follows and names no cause, the held
  one's kind explains it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from tui.engine.startup.snapshot import Failure
from tui.engine.startup.vocabulary import FailureKind, Stage

_UVICORN_PORT = re.compile(r"Uvicorn running on \S*?:(\d{1,5})\b")
_BIND_PORT = re.compile(
    r"bind on address \(['\"][^'\"]*['\"], (\d{1,5})\)|port (\d{1,5}) is in use"
)
_ENGINE_WORDS = re.compile(r"sglang|vllm|SGLang|vLLM")
FOREIGN_KINDS = frozenset(
    {FailureKind.TRACEBACK_OTHER, FailureKind.STARTUP_TIMEOUT, FailureKind.PORT_IN_USE}
)
"""Kinds another process's lines may show without being the engine's failure."""


def _port(pattern: re.Pattern[str], text: str) -> int | None:
    match = pattern.search(text)
    if match is None:
        return None
    return int(next(group for group in match.groups() if group is not None))


def wrapper_http(
    msg: str,
    server_port: int | None,
    furthest: Stage | None,
    ready_marker: bool,
    engine_prefixes_uvicorn: bool,
) -> bool:
    """True when a bare uvicorn lifecycle line ``msg`` is a wrapper's, not the engine's."""
    port = _port(_UVICORN_PORT, msg)
    if port is not None and server_port is not None and port != server_port:
        return True
    if ready_marker:
        return engine_prefixes_uvicorn
    return furthest is not None and Stage.ARGS.order < furthest.order < Stage.KV_CACHE.order


def foreign_failure(
    failure: Failure, server_port: int | None, engine_ranks: Iterable[str], failed: Iterable[str]
) -> bool:
    """True when ``failure`` was printed by another process (see the module docstring)."""
    ranks = set(engine_ranks)
    if failure.rank is not None or not ranks or ranks <= set(failed):
        return False
    if failure.kind not in FOREIGN_KINDS or _ENGINE_WORDS.search(failure.excerpt):
        return False
    if failure.kind is FailureKind.PORT_IN_USE:
        port = _port(_BIND_PORT, failure.excerpt)
        return port is not None and server_port is not None and port != server_port
    return True
