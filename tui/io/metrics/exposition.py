"""Prometheus text exposition read into the engine's plain samples, by ``prometheus_client``'s
parser (its package also holds an HTTP server, which is why parsing happens here and not in
the pure engine)."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families

from tui.engine.metrics.samples import MetricSample, MetricScrape

MAX_BYTES = 4_000_000
"""A larger answer is not read (a real engine's is tens of kilobytes)."""


class ExpositionError(ValueError):
    """The text is not the Prometheus exposition format; the message says where."""


def parse_exposition(text: str, at: float) -> MetricScrape:
    """Every sample of ``text``, taken at ``at``; ``_created`` series are left out."""
    if len(text) > MAX_BYTES:
        raise ExpositionError(f"/metrics answered {len(text)} characters, more than {MAX_BYTES}")
    samples: list[MetricSample] = []
    try:
        for family in text_string_to_metric_families(text):
            samples.extend(
                MetricSample(sample.name, tuple(sorted(sample.labels.items())), sample.value)
                for sample in family.samples
                if not sample.name.endswith("_created")
            )
    except (ValueError, TypeError, IndexError, KeyError) as exc:
        raise ExpositionError(f"/metrics is not Prometheus text: {exc}") from exc
    return MetricScrape(at, tuple(samples))
