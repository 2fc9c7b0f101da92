"""What the server's HTTP port says: the one health enum of the project.

The poller (``tui.io.health``) classifies each ``/health`` answer into one of these states, the
header's badge shows it, and the judge reads it. The states run from worst to best.
"""

from __future__ import annotations

from enum import Enum


class HealthState(str, Enum):
    """The latest health poll of a server's HTTP port."""

    UNKNOWN = "unknown"
    """Not polled yet (or no answer to reason about)."""
    NO_LINK = "no-link"
    """The port could not be reached at all (no link to its host)."""
    REFUSED = "refused"
    """The port refuses connections: the HTTP server is not up."""
    STARTING = "starting"
    """The HTTP server answers, but ``/health`` says 503: the engine is still starting."""
    UNHEALTHY = "unhealthy"
    """``/health`` answers another error, or the request failed on the way."""
    HEALTHY = "healthy"
    """``/health`` answers 200; no real generation has answered yet."""
    READY = "ready"
    """``/health`` answers 200 and a real one-token generation answered."""

    @property
    def answers_ok(self) -> bool:
        """``/health`` answered 200."""
        return self in (HealthState.HEALTHY, HealthState.READY)

    @property
    def generated(self) -> bool:
        """A real generation answered after ``/health`` said 200."""
        return self is HealthState.READY
