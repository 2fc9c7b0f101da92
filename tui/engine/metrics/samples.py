"""One scrape of ``/metrics`` as plain values: every sample with its labels, and when it was
taken. The exposition text is parsed by the I/O layer; the engine sees only these."""

from __future__ import annotations

from dataclasses import dataclass

Labels = tuple[tuple[str, str], ...]
"""A sample's labels, sorted by name."""


@dataclass(frozen=True, slots=True)
class MetricSample:
    """One line of the exposition: ``name{labels} value``."""

    name: str
    labels: Labels
    value: float

    def label(self, key: str) -> str | None:
        """The value of the label ``key``; None when the sample has none."""
        return next((value for name, value in self.labels if name == key), None)


@dataclass(frozen=True, slots=True)
class MetricScrape:
    """Every sample one scrape returned, at ``at`` seconds on a monotonic clock."""

    at: float
    samples: tuple[MetricSample, ...]

    def names(self) -> frozenset[str]:
        """The sample names present."""
        return frozenset(sample.name for sample in self.samples)
