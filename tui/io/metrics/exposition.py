"""Prometheus text exposition read into the engine's plain samples, by ``prometheus_client``'s
parser (its package also holds an HTTP server, which is why parsing happens here and not in
the pure engine)."""

from __future__ import annotations

from collections.abc import Iterable

from prometheus_client.parser import text_string_to_metric_families

from tui.engine.metrics.samples import MetricSample, MetricScrape

MAX_BYTES = 4_000_000
"""A larger answer is not read (a real engine's is tens of kilobytes)."""


class ExpositionError(ValueError):
    """The text is not the Prometheus exposition format; the message says where."""


SERIES_SUFFIXES = ("", "_bucket", "_sum", "_count")


def series_names(names: Iterable[str]) -> frozenset[str]:
    """The sample names a family of each name sends (a histogram's buckets, sum and count)."""
    return frozenset(f"{name}{suffix}" for name in names for suffix in SERIES_SUFFIXES)


def _kept(line: str, wanted: frozenset[str]) -> bool:
    """A line of a wanted series (or its ``# HELP`` and ``# TYPE``), or a blank one."""
    if line.startswith("#"):
        words = line.split(" ", 3)
        return len(words) < 3 or words[1] not in ("HELP", "TYPE") or words[2] in wanted
    end = len(line)
    for stop in ("{", " "):
        found = line.find(stop)
        if 0 <= found < end:
            end = found
    return not line.strip() or line[:end] in wanted


def parse_exposition(text: str, at: float, wanted: frozenset[str] | None = None) -> MetricScrape:
    """Every sample of ``text`` (only those named in ``wanted``, when given: the parser then
    reads only their lines), taken at ``at``; ``_created`` series are left out."""
    if len(text) > MAX_BYTES:
        raise ExpositionError(f"/metrics answered {len(text)} characters, more than {MAX_BYTES}")
    if wanted is not None:
        text = "".join(line for line in text.splitlines(keepends=True) if _kept(line, wanted))
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
