"""Prefixes that tools people really use put in front of a server's own lines.

docker compose (``sglang-1  | ``), ``docker logs -t`` and ``kubectl logs --timestamps``
(RFC 3339 time), CI runners (``[2025-08-12T08:42:31Z] ``), log collectors' time column
(``2026-04-19 12:58:51.742 | ``), ``kubectl logs --prefix``
(``[pod/name/container] ``), journald (``Mar 08 08:22:22 host python[1234]: ``, the month in
the system's language) and Python's default logging format
(``INFO:sglang.srt...:``). Stripping them gives back a line the engine grammars can read.
"""

from __future__ import annotations

import re

_WRAPPERS = re.compile(
    r"(?:[A-Za-z0-9][\w.-]*\s+\| )"  # docker compose service column
    r"|(?:\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d) )"  # RFC 3339 time
    r"|(?:\[\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)?\] )"  # CI time
    r"|(?:\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)? +\| )"  # a time column
    r"|(?:\[pod/[^\]\s]+\] )"  # kubectl --prefix
    r"|(?:[^\W\d_]{3,4}\.? [ \d]\d \d\d:\d\d:\d\d \S+ [\w.@/-]+(?:\[\d+\])?: )"  # journald
    r"|(?:(?:DEBUG|INFO|WARNING|ERROR|CRITICAL):[\w.]+:)"  # logging.basicConfig default
)


def unwrap(line: str) -> tuple[str, str]:
    """Split ``line`` into the wrapper prefixes in front of it and the rest.

    Wrappers can stack (compose in front of an RFC 3339 time); at most three are removed.
    Returns ``("", line)`` when there is none.
    """
    end = 0
    for _ in range(3):
        match = _WRAPPERS.match(line, end)
        if match is None:
            break
        end = match.end()
    return line[:end], line[end:]
