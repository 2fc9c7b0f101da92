"""Where the app scrapes ``/metrics``: the host session and the server's port there.

The scrape reaches the port over the session's own connection (SSH channels opened from the
host's side, see :mod:`tui.io.transport.session_network`), not through its local port forward.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tui.io.metrics.metrics_scrape import MetricsScraper, ScrapeOptions
from tui.io.transport.host_session import HostSession
from tui.io.transport.session_network import SessionNetwork


@dataclass(frozen=True, slots=True)
class MetricsSetup:
    """The server's port on the host behind ``session``, and how to scrape it."""

    session: HostSession
    port: int
    options: ScrapeOptions = field(default_factory=ScrapeOptions)

    async def url(self) -> str:
        """The server's address as the host sees it (where the job was placed, for Slurm)."""
        return self.session.api_url(self.port)

    def scraper(self) -> MetricsScraper:
        return MetricsScraper(self.url, self.options, network=SessionNetwork(self.session))
