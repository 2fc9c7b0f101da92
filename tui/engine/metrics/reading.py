"""What one scrape says of each serving figure, in the engine's dialect (``MetricNames``).

Series of the same name with other labels (data-parallel engines, ranks) are added up, except
fractions (KV use, hit rate, accept length and rate), which are averaged. A histogram becomes
its cumulative bucket counts, summed per upper bound. The first of a figure's names that the
scrape holds is the one read, so newer and older versions are both understood.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from tui.engine.metrics.rank_figures import GROUP_FIGURES, RankKey, group_values
from tui.engine.metrics.samples import MetricSample, MetricScrape
from tui.engine.servers.dialect import MetricNames

Buckets = tuple[tuple[float, float], ...]
"""A cumulative histogram: (upper bound, observations at or below it), ascending; the last
bound is infinite."""

GAUGES_SUMMED = ("running", "queued", "gen_throughput")
GAUGES_AVERAGED = ("kv_usage", "prefix_hit_rate", "accept_length", "accept_rate")
COUNTERS = (
    "generation_tokens",
    "prompt_tokens",
    "requests",
    "prefix_hits",
    "prefix_queries",
    "preemptions",
    "accepted_tokens",
    "drafts",
    "draft_tokens",
)
HISTOGRAMS = ("ttft", "itl")


@dataclass(frozen=True, slots=True)
class MetricReading:
    """One scrape's figures: gauges and counters by figure name, histograms as buckets."""

    at: float
    gauges: dict[str, float] = field(default_factory=dict)
    counters: dict[str, float] = field(default_factory=dict)
    histograms: dict[str, Buckets] = field(default_factory=dict)
    groups: dict[RankKey, dict[str, float]] = field(default_factory=dict)
    """The figures of each engine or rank the series' labels tell apart (none: one engine)."""

    @property
    def empty(self) -> bool:
        return not (self.gauges or self.counters or self.histograms)


def read_scrape(scrape: MetricScrape, names: MetricNames) -> MetricReading:
    """The figures ``scrape`` holds under the names of one engine."""
    by_name: dict[str, list[MetricSample]] = defaultdict(list)
    for sample in scrape.samples:
        if math.isfinite(sample.value):
            by_name[sample.name].append(sample)
    reading = MetricReading(at=scrape.at)
    for figure in (*GAUGES_SUMMED, *GAUGES_AVERAGED):
        values = _values(by_name, getattr(names, figure))
        if values:
            total = sum(values)
            reading.gauges[figure] = total if figure in GAUGES_SUMMED else total / len(values)
    for figure in COUNTERS:
        values = _values(by_name, getattr(names, figure))
        if values:
            reading.counters[figure] = sum(values)
    for figure in HISTOGRAMS:
        buckets = _buckets(by_name, getattr(names, figure))
        if buckets:
            reading.histograms[figure] = buckets
    reading.groups.update(group_values(scrape.samples, _group_names(by_name, names)))
    return reading


def _group_names(by_name: dict[str, list[MetricSample]], names: MetricNames) -> dict[str, str]:
    """Sample name -> figure, for the figures read per group (the first name present)."""
    chosen: dict[str, str] = {}
    for figure in GROUP_FIGURES:
        found = next((name for name in getattr(names, figure) if name in by_name), None)
        if found is not None:
            chosen[found] = figure
    return chosen


def _values(by_name: dict[str, list[MetricSample]], names: Iterable[str]) -> list[float]:
    for name in names:
        if name in by_name:
            return [sample.value for sample in by_name[name]]
    return []


def _buckets(by_name: dict[str, list[MetricSample]], names: Iterable[str]) -> Buckets:
    for name in names:
        samples = by_name.get(f"{name}_bucket")
        if not samples:
            continue
        counts: dict[float, float] = defaultdict(float)
        for sample in samples:
            bound = _bound(sample.label("le"))
            if bound is not None:
                counts[bound] += sample.value
        if counts and math.inf in counts:
            return tuple(sorted(counts.items()))
    return ()


def _bound(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        return float(text)
    except ValueError:
        return None


def engine_names(scrape: MetricScrape, candidates: Iterable[tuple[str, MetricNames]]) -> str | None:
    """The engine whose names the scrape holds most of (None when it holds none)."""
    present = scrape.names()
    best, best_count = None, 0
    for engine, names in candidates:
        count = sum(1 for name in names.names() if name in present or f"{name}_bucket" in present)
        if count > best_count:
            best, best_count = engine, count
    return best
