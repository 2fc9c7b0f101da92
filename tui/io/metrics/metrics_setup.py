"""Where the app scrapes ``/metrics``: the host session (its port forward) and the port."""

from __future__ import annotations

from dataclasses import dataclass, field

from tui.io.metrics.metrics_scrape import MetricsScraper, ScrapeOptions
from tui.io.transport.host_session import HostSession, SessionClosed
from tui.io.transport.transport import LinkLost


@dataclass(frozen=True, slots=True)
class MetricsSetup:
    """The server's port on the host behind ``session``, and how to scrape it."""

    session: HostSession
    port: int
    options: ScrapeOptions = field(default_factory=ScrapeOptions)

    async def url(self) -> str:
        """The forward's local address of the server's port."""
        try:
            return await self.session.forward(self.port)
        except SessionClosed as closed:
            raise LinkLost(str(closed)) from closed

    def scraper(self) -> MetricsScraper:
        return MetricsScraper(self.url, self.options)
