"""The monitor's own requests, as the engine's log shows them.

uvicorn's access line shows the method, the path with its query and the status, not the user
agent, so every health poll and generation probe bringup sends carries a query marker
(``/health?from=bringup``); the engines route on the path and ignore an unknown query. A line
that shows the marker is the monitor's own traffic: the log view hides it by default and the
start-up model counts it neither as a request nor as serving activity, and the log tail's
file check keeps its quiet pace through it (``monitor_only``). SGLang logs no request
id with its prefill line, so the prefill of a health check or a probe is known by its shape
(``is_probe_prefill``).
"""

from __future__ import annotations

import re

from tui import __version__

MONITOR_QUERY = "from=bringup"
"""The query every request of the monitor carries."""

USER_AGENT = f"bringup/{__version__}"
"""The user agent of every request the monitor sends."""

REQUEST_ID_PREFIX = "bringup-"
"""How the request id of a generation probe begins (SGLang's ``rid``, vLLM's ``X-Request-Id``)."""

MONITOR_MARK = "?" + MONITOR_QUERY
"""What an access line of the monitor's own request holds."""
MONITOR_MARK_BYTES = MONITOR_MARK.encode("ascii")
"""The same, for the paths that read lines before decoding them."""
_MARK = MONITOR_MARK
_PREFILL = "Prefill batch"
_PROBE_PREFILL = re.compile(r"#new-seq: 1, #new-token: [12], #cached-token: [012],")


def monitor_path(path: str) -> str:
    """``path`` with the monitor's marker as its query."""
    return path + _MARK


def is_monitor_line(text: str) -> bool:
    """True when a log line shows a request the monitor sent, or the prefill such a request
    makes (``is_probe_prefill``)."""
    return _MARK in text or (_PREFILL in text and is_probe_prefill(text))


_FEW_LINES = 8
_FEW_BYTES = 4096
"""Data of at most this many lines and bytes is looked at line by line by ``monitor_only``."""


def monitor_only(data: bytes) -> bool:
    """True when every line of ``data`` (whole lines) is the monitor's own, as
    ``is_monitor_line`` decides: its request, or the prefill the request made (a health check
    of SGLang logs one). Such bytes say nothing of the server's own activity (a quiet server
    still logs its scrapes and health checks).

    Counting the marker decides most data at once; only a few lines (a health check's access
    line and its prefill) are looked at one by one, and more data is never monitor-only.
    """
    lines = data.count(b"\n")
    if lines == 0 or not data.endswith(b"\n"):
        return False
    if data.count(MONITOR_MARK_BYTES) >= lines:
        return True
    if lines > _FEW_LINES or len(data) > _FEW_BYTES:
        return False
    text = data.decode("utf-8", "replace")
    return all(is_monitor_line(line) for line in text[:-1].split("\n"))


def is_monitor_path(path: str) -> bool:
    """True for the path (with its query) of a request the monitor sent."""
    return path.endswith(_MARK) or _MARK + "&" in path


def is_probe_prefill(msg: str) -> bool:
    """True for SGLang's prefill of one sequence of one or two prompt tokens, nothing cached
    to speak of: what a health check (``/health`` generates from ``input_ids=[0]``) and the
    monitor's one-word probe look like. No client sends such a prompt; the line is not counted
    as serving activity (the busy shapes, several sequences or requests running or queued,
    are tested first)."""
    return _PROBE_PREFILL.search(msg) is not None
