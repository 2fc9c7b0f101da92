"""The serving figures over one window of readings: rates of counters, means of gauges and
quantiles of the latency histograms.

A window is ``steady`` when every reading in it has the same counters and histograms as the one
before, none of them reset (see :func:`steady`): a counter's growth is then its newest value
less its oldest and a histogram's its newest buckets less its oldest, so a long window costs a
pass over its gauges only, not a comparison of every pair of readings."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from tui.engine.metrics.quantile import add_buckets, bucket_increase, increase, quantile
from tui.engine.metrics.reading import Buckets, MetricReading


@dataclass(frozen=True, slots=True)
class ServingFigures:
    """What the server did over ``window_s`` seconds (``seconds`` of readings were in it);
    None where the engine does not export the figure or nothing happened."""

    window_s: float
    seconds: float
    tok_s: float | None = None
    running: float | None = None
    queued: float | None = None
    kv_usage: float | None = None
    prefix_hit_rate: float | None = None
    accept_length: float | None = None
    acceptance_rate: float | None = None
    preemptions: float | None = None
    """Preemptions counted within the window."""
    ttft_p50: float | None = None
    ttft_p99: float | None = None
    itl_p50: float | None = None
    itl_p99: float | None = None
    generated: float | None = None
    """Tokens generated within the window."""


def window_figures(
    readings: Sequence[MetricReading], window_s: float, steady: bool = False
) -> ServingFigures:
    """The figures of ``readings`` (oldest first; the first is the window's baseline);
    ``steady`` when :func:`steady` holds for each reading and the one before it."""
    if not readings:
        return ServingFigures(window_s, 0.0)
    last = readings[-1]
    seconds = last.at - readings[0].at
    counted = _growth(readings) if steady else _increases(readings)
    gauges = _gauge_means(readings[1:] or readings)
    tok_s = _rate(counted.get("generation_tokens"), seconds)
    if tok_s is None:
        tok_s = gauges.get("gen_throughput")
    ttft, itl = _histogram(readings, "ttft", steady), _histogram(readings, "itl", steady)
    accept_length = _accept_length(counted, gauges)
    return ServingFigures(
        window_s=window_s,
        seconds=seconds,
        tok_s=tok_s,
        running=gauges.get("running"),
        queued=gauges.get("queued"),
        kv_usage=gauges.get("kv_usage"),
        prefix_hit_rate=_ratio(counted, "prefix_hits", "prefix_queries")
        if "prefix_queries" in counted
        else gauges.get("prefix_hit_rate"),
        accept_length=accept_length,
        acceptance_rate=_acceptance_rate(counted, gauges, accept_length),
        preemptions=counted.get("preemptions"),
        ttft_p50=quantile(0.5, ttft),
        ttft_p99=quantile(0.99, ttft),
        itl_p50=quantile(0.5, itl),
        itl_p99=quantile(0.99, itl),
        generated=counted.get("generation_tokens"),
    )


def steady(before: MetricReading, after: MetricReading) -> bool:
    """``after`` has the counters and histograms ``before`` has, and none of them reset."""
    if before.counters.keys() != after.counters.keys():
        return False
    if before.histograms.keys() != after.histograms.keys():
        return False
    if any(value < before.counters[figure] for figure, value in after.counters.items()):
        return False
    return not any(
        _reset(before.histograms[figure], buckets) for figure, buckets in after.histograms.items()
    )


def _growth(readings: Sequence[MetricReading]) -> dict[str, float]:
    """Each counter's growth over a steady window: its newest value less its oldest."""
    if len(readings) < 2:
        return {}
    first = readings[0].counters
    return {figure: value - first[figure] for figure, value in readings[-1].counters.items()}


def _increases(readings: Sequence[MetricReading]) -> dict[str, float]:
    """Each counter's growth over consecutive readings (a counter seen in only one reading
    has grown by nothing we can know, so it is left out)."""
    grown: dict[str, float] = {}
    for before, after in itertools.pairwise(readings):
        for figure, value in after.counters.items():
            if figure in before.counters:
                grown[figure] = grown.get(figure, 0.0) + increase(before.counters[figure], value)
    return grown


def _gauge_means(readings: Sequence[MetricReading]) -> dict[str, float]:
    sums: dict[str, list[float]] = {}
    for reading in readings:
        for figure, value in reading.gauges.items():
            sums.setdefault(figure, []).append(value)
    return {figure: sum(values) / len(values) for figure, values in sums.items()}


def _histogram(readings: Sequence[MetricReading], figure: str, steady: bool = False) -> Buckets:
    """The observations added over the window: the newest buckets less the oldest when every
    reading holds the histogram and none reset it, else the sum of each interval's increase."""
    if steady:
        first, last = readings[0].histograms.get(figure), readings[-1].histograms.get(figure)
        return bucket_increase(first, last) if len(readings) > 1 and first and last else ()
    held = [reading.histograms.get(figure) for reading in readings]
    if len(held) > 1 and all(held) and not any(map(_reset, held, held[1:])):
        return bucket_increase(held[0] or (), held[-1] or ())
    total: Buckets = ()
    for before, after in itertools.pairwise(held):
        if before and after:
            total = add_buckets(total, bucket_increase(before, after))
    return total


def _reset(before: Buckets | None, after: Buckets | None) -> bool:
    """The histogram started again between two readings (fewer observations, other bounds)."""
    if not before or not after:
        return True
    return (
        after[-1][1] < before[-1][1]
        or len(after) != len(before)
        or any(b[0] != a[0] for b, a in zip(before, after, strict=True))
    )


def _rate(amount: float | None, seconds: float) -> float | None:
    if amount is None or seconds <= 0:
        return None
    return amount / seconds


def _ratio(counted: dict[str, float], top: str, bottom: str) -> float | None:
    denominator = counted.get(bottom)
    if not denominator or top not in counted:
        return None
    return counted[top] / denominator


def _accept_length(counted: dict[str, float], gauges: dict[str, float]) -> float | None:
    """vLLM: ``1 + accepted / drafts`` over the window (its own definition, bonus token
    included); SGLang: the mean of its accept-length gauge, while tokens are generated (the
    gauge keeps its last value when idle, and is 0 before the first decode log interval)."""
    drafts = counted.get("drafts")
    if drafts and "accepted_tokens" in counted:
        return 1.0 + counted["accepted_tokens"] / drafts
    if "drafts" in counted or counted.get("generation_tokens") == 0:
        return None
    gauge = gauges.get("accept_length")
    return gauge if gauge is not None and gauge > 0 else None


def _acceptance_rate(
    counted: dict[str, float], gauges: dict[str, float], accept_length: float | None
) -> float | None:
    if "draft_tokens" in counted:
        return _ratio(counted, "accepted_tokens", "draft_tokens")
    return gauges.get("accept_rate") if accept_length is not None else None
