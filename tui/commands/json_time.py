"""The two times every ``--json`` record carries, and its schema's version.

``t`` is when bringup saw the event, as Unix seconds (a float). ``log_time`` is the time the
log line itself printed, as ISO 8601 with an offset: the engines print local wall time without
a zone, so it is read in this machine's zone (the offset says which), and vLLM prints no year,
so the year is ``t``'s. The engine keeps log times as seconds since the start of year 1
(``tui.engine.servers.common_patterns``), and vLLM's in the year 2000.
"""

from __future__ import annotations

import datetime as dt

SCHEMA_VERSION = 1
"""The version of every command's JSON schema (docs/schemas/); it grows when a field changes
meaning or goes away, not when one is added."""

_DAY = 86400.0
_YEAR_OF_SHORT_STAMPS = 2000
"""The year ``tui.engine.servers.common_patterns.short_timestamp`` puts vLLM's stamps in."""


def log_time(seconds: float | None, now: float) -> str | None:
    """A log's own time (seconds since the start of year 1, naive) as ISO 8601 with offset."""
    if seconds is None:
        return None
    try:
        naive = dt.datetime(1, 1, 1) + dt.timedelta(seconds=seconds - _DAY)
        if naive.year == _YEAR_OF_SHORT_STAMPS:
            naive = naive.replace(year=dt.datetime.fromtimestamp(now).year)
        return naive.astimezone().isoformat(timespec="milliseconds")
    except (OverflowError, ValueError):
        return None
