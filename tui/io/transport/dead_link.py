"""How soon a dead SSH link is noticed, from the keep-alive settings a connection ends up with.

OpenSSH's meaning of ``ServerAliveInterval`` and ``ServerAliveCountMax``: a keep-alive is sent
after ``interval`` seconds without a message from the server, and the link is given up when
``count_max`` of them went unanswered, "after approximately" ``interval x count_max`` seconds
(``ssh_config(5)``: 15 s and 3 give 45 s). asyncssh counts one more: it closes the link at the
check after ``count_max`` unanswered keep-alives, ``interval x (count_max + 1)`` seconds after the
last message (40 s for 10 s and 3). :func:`keepalive_kwargs` hands asyncssh the settings that
close the link at OpenSSH's bound; :func:`dead_link_bound` is that bound.
"""

from __future__ import annotations


def dead_link_bound(interval: float, count_max: int) -> float | None:
    """Seconds of silence after which the link is closed; None when keep-alives are off."""
    if interval <= 0 or count_max <= 0:
        return None
    return interval * count_max


def keepalive_kwargs(interval: float, count_max: int) -> dict[str, float | int]:
    """asyncssh's ``keepalive_interval`` and ``keepalive_count_max`` for OpenSSH's settings.

    The first keep-alive still goes out after ``interval`` seconds of silence; asyncssh is told
    to allow one unanswered keep-alive fewer. With ``count_max`` 1 that would close an idle
    link that nobody asked, so the interval is halved instead (one keep-alive, then closed).
    """
    bound = dead_link_bound(interval, count_max)
    if bound is None:
        return {"keepalive_interval": 0.0, "keepalive_count_max": max(1, count_max)}
    if count_max == 1:
        return {"keepalive_interval": interval / 2, "keepalive_count_max": 1}
    return {"keepalive_interval": interval, "keepalive_count_max": count_max - 1}
