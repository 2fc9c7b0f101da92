"""The health poll behind the header's badge: ``tui.io.health.health_poll`` over the session's
own connection (SSH channels opened from the host's side, as the ``/metrics`` scrape's are; no
port forward).

The poller asks ``/health`` about once a second while the server starts and every 10 s once it
is READY (both configurable), and one real one-token generation when it first answers 200;
this adapter turns each change it reports into a ``HealthPolled`` message.
"""

from __future__ import annotations

from tui.app.feed.feed_sources import Post
from tui.app.monitor.monitor_messages import HealthPolled
from tui.app.monitor.view_model import HealthReading
from tui.engine.judge.health import HealthState
from tui.io.health import health_poll as io_health
from tui.io.transport.host_session import HostSession, SessionClosed
from tui.io.transport.session_network import SessionNetwork
from tui.io.transport.transport import LinkLost


def reading(change: io_health.HealthChanged) -> HealthReading:
    """The badge's reading for one change reported by the poller."""
    generated: bool | None = None
    if change.state is HealthState.READY:
        generated = True
    elif change.state is HealthState.HEALTHY and change.detail:
        generated = False
    return HealthReading(
        change.state, change.status, change.latency_ms, "/health", generated,
        change.detail,
    )  # fmt: skip


class HealthSource:
    """Polls the server's HTTP port on the host, reached over the session's connection at
    ``session.api_url`` (where the server's job was placed, for Slurm)."""

    def __init__(
        self, session: HostSession, port: int, engine: str = "auto", interval: float = 1.0,
        api_key: str | None = None, serving_interval: float = 10.0,
    ) -> None:  # fmt: skip
        self.session = session
        self.port = port
        options = io_health.HealthOptions(
            interval=interval, serving_interval=serving_interval, engine=engine, api_key=api_key
        )
        self.poller = io_health.HealthPoller(self._url, options, SessionNetwork(self.session))

    async def _url(self) -> str:
        """The server's address as the host sees it (``ApiNotPlaced`` while its job is queued),
        once the link is up: a link that is down reads as no link (after the poll's timeout),
        not as a refused port."""
        try:
            return await self.session.linked_api_url(self.port)
        except SessionClosed as closed:
            raise LinkLost(str(closed)) from closed

    async def run(self, post: Post) -> None:
        async for change in self.poller.changes():
            post(HealthPolled(reading(change)))
