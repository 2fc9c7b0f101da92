"""What the metrics worker tells the serving panel; each names something that happened."""

from __future__ import annotations

from textual.message import Message

from tui.io.metrics.metrics_scrape import MetricsMissing, MetricsScraped


class MetricsRead(Message):
    """A scrape of ``/metrics`` gave figures (and maybe started alarms)."""

    def __init__(self, report: MetricsScraped) -> None:
        super().__init__()
        self.report = report


class MetricsMissed(Message):
    """A scrape gave no figures: the server has no ``/metrics``, or it did not answer."""

    def __init__(self, report: MetricsMissing) -> None:
        super().__init__()
        self.report = report
