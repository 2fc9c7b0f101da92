"""What ``bringup wait`` prints: one JSON object per event, or one human line per change.

``--json`` writes ``{"schema_version": 1, "t": unix seconds, "event": name, "rank": tag or null,
...}`` per event (and ``log_time``, ISO 8601, when the log line had a time; see
``json_time.py``) and flushes each line, so another program can react within milliseconds.
docs/schemas/wait.schema.json is the schema. ``--plain`` writes a line
per stage change per rank, per connection change, per file marker, per health change and per
verdict change (``verdict DEGRADED (health 503 for 4 s since READY ...)``). Text
that came from the host is made safe for a terminal before it is printed (JSON escapes it).
"""

from __future__ import annotations

import dataclasses
import json
import re
import time
from collections.abc import Callable
from enum import Enum
from typing import Any, TextIO

from tui.commands.json_time import SCHEMA_VERSION, log_time
from tui.commands.wait import Ending
from tui.engine.cluster.cluster_engine import describe_cluster
from tui.engine.judge.judge import VerdictChanged
from tui.engine.judge.stall import RankStalled
from tui.engine.logs.sanitize import sanitize_line
from tui.engine.startup import log_events as ev
from tui.io.health.health_poll import HealthChanged
from tui.io.slurm.slurm_watch import JobChanged
from tui.io.transport.link_events import (
    Connected,
    Connecting,
    ConnectionEvent,
    ConnectionFailed,
    ConnectionLost,
    Gap,
    Reconnected,
    StreamMarker,
)

Clock = Callable[[], float]
_CAMEL = re.compile(r"(?<!^)(?=[A-Z])")


@dataclasses.dataclass(frozen=True, slots=True)
class HealthPortChosen:
    """The port ``/health`` is polled on, and why (reported once, before the first poll)."""

    port: int
    engine: str
    reason: str


def event_name(item: object) -> str:
    """``StageEntered`` -> ``stage_entered``; a ``StreamMarker`` keeps its record name
    ``marker``."""
    if isinstance(item, StreamMarker):
        return "marker"
    return _CAMEL.sub("_", type(item).__name__).lower()


def _plain_value(value: Any) -> Any:
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, tuple | list):
        return [_plain_value(v) for v in value]
    return value


def as_record(item: object, now: float) -> dict[str, Any]:
    """An event as a JSON-ready dict: ``schema_version``, ``t``, ``event``, ``rank``, then its
    own fields (the log's ``ts`` becomes ``log_time``)."""
    record = _head(now, event_name(item))
    if dataclasses.is_dataclass(item) and not isinstance(item, type):
        for spec in dataclasses.fields(item):
            value = getattr(item, spec.name)
            if spec.name == "ts":
                record["log_time"] = log_time(value, now)
            else:
                record[spec.name] = _plain_value(value)
    if isinstance(item, StreamMarker):
        record["new_file"] = item.starts_new_file
    return record


def _head(now: float, event: str) -> dict[str, Any]:
    return {"schema_version": SCHEMA_VERSION, "t": round(now, 6), "event": event, "rank": None}


class JsonReport:
    """One JSON object per line, flushed at once."""

    def __init__(self, out: TextIO, clock: Clock = time.time) -> None:
        self._out = out
        self._clock = clock

    def emit(self, item: object, node: int | None = None) -> None:
        record = as_record(item, self._clock())
        if node is not None:
            record["node"] = node
        self._write(record)

    def verdict(self, verdict: Ending, code: int, detail: str) -> None:
        record = _head(self._clock(), "verdict")
        record.update(verdict=verdict.value, exit_code=code, detail=detail)
        self._write(record)

    def _write(self, record: dict[str, Any]) -> None:
        self._out.write(json.dumps(record, ensure_ascii=True, default=str) + "\n")
        self._out.flush()


class PlainReport:
    """Human lines: ``HH:MM:SS  RANK  what happened``."""

    def __init__(self, out: TextIO, clock: Clock = time.time) -> None:
        self._out = out
        self._clock = clock

    def emit(self, item: object, node: int | None = None) -> None:
        text = describe(item)
        if text is None:
            return
        rank = sanitize_line(str(getattr(item, "rank", None) or ""), 24)
        who = f"n{node} {rank}".rstrip() if node is not None else rank
        self._line(f"{who:<12} {text}")

    def verdict(self, verdict: Ending, code: int, detail: str) -> None:
        self._line(f"{'':<12} {verdict.value}: {sanitize_line(detail, 2000)} (exit {code})")

    def _line(self, text: str) -> None:
        stamp = time.strftime("%H:%M:%S", time.localtime(self._clock()))
        self._out.write(f"{stamp}  {text}\n")
        self._out.flush()


def _safe(text: str, limit: int = 300) -> str:
    return sanitize_line(text.replace("\n", " | "), limit)


def describe(item: object) -> str | None:
    """The plain-text line for an event, or None when plain output skips it."""
    if isinstance(item, ev.Event):
        return _describe_engine(item)
    if isinstance(item, Connecting | Connected | ConnectionLost | Reconnected | ConnectionFailed):
        return _describe_connection(item)
    if isinstance(item, StreamMarker):
        return f"log {item.kind.value}: {_safe(item.detail)}"
    if isinstance(item, Gap):
        size = "an unknown number of" if item.size is None else str(item.size)
        return f"log gap: {size} bytes could not be read ({_safe(item.reason)})"
    if isinstance(item, HealthChanged):
        return _describe_health(item)
    if isinstance(item, HealthPortChosen):
        return f"polling /health on port {item.port} ({_safe(item.reason)})"
    if isinstance(item, JobChanged):
        return _safe(item.summary)
    if isinstance(item, VerdictChanged):
        return f"verdict {item.verdict.value} ({_safe(item.reason)})"
    return describe_cluster(item)


def _describe_engine(item: ev.Event) -> str | None:
    if isinstance(item, ev.StageEntered):
        extra = f" ({_safe(item.detail, 120)})" if item.detail else ""
        return f"{item.stage.label}{' (draft)' if item.draft else ''}{extra}"
    if isinstance(item, ev.FailureDetected):
        first = item.excerpt.strip().splitlines()[-1:] or [""]
        return f"FAILURE {item.kind.value} ({item.kind.label}): {_safe(first[0])}"
    if isinstance(item, ev.ReadyLineSeen):
        return "the log says the server is ready"
    if isinstance(item, ev.NodeReadySeen):
        return "the log says this node's schedulers are ready (it answers a dummy /health)"
    if isinstance(item, ev.ServerStopped):
        return f"server stopped: {_safe(item.reason)}"
    if isinstance(item, ev.RunStarted):
        return "a new server run started in the log"
    if isinstance(item, ev.EngineDetected):
        return f"engine {item.engine} {_safe(item.version or '')}".rstrip()
    if isinstance(item, RankStalled):
        return f"STALLED: {_safe(item.reason)}"
    if isinstance(item, ev.ServerArgsSeen):
        model = _safe(item.model or "?", 120)
        return f"model {model}, tp {item.tp_size}, dp {item.dp_size}, ep {item.ep_size}"
    return None


def _describe_connection(item: ConnectionEvent) -> str:
    if isinstance(item, Connecting):
        return f"connecting to {_safe(item.host)} (attempt {item.attempt})"
    if isinstance(item, Connected):
        return f"connected to {_safe(item.host)}"
    if isinstance(item, ConnectionLost):
        return f"connection lost: {_safe(item.reason)}"
    if isinstance(item, Reconnected):
        return f"reconnected after {item.gap_seconds:.1f} s"
    hint = f" | {_safe(item.hint, 600)}" if item.hint else ""
    return f"connection refused ({item.kind.value}): {_safe(item.reason)}{hint}"


def _describe_health(item: HealthChanged) -> str:
    status = f" {item.status}" if item.status is not None else ""
    latency = f" in {item.latency_ms:.0f} ms" if item.latency_ms is not None else ""
    generation = (
        f", one token generated in {item.generation_ms:.0f} ms"
        if item.generation_ms is not None
        else ""
    )
    detail = f" ({_safe(item.detail)})" if item.detail else ""
    return f"health {item.state.value}:{status}{latency}{generation}{detail}"
