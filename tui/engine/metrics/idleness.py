"""Whether the server did nothing between two scrapes, so that an idle server may be scraped
less often.

A server is idle over an interval when, at its end, no request runs or waits, and no counter
(requests, prompt and generated tokens, prefix-cache look-ups, preemptions, drafts) and no
latency histogram moved since its start. SGLang's own ``/health`` check generates a token but
is not counted in its metrics, so the monitor's health polls leave an idle server idle.
"""

from __future__ import annotations

from tui.engine.metrics.reading import MetricReading

BUSY_GAUGES = ("running", "queued")
"""Gauges above zero while requests are being served."""


def idle_between(before: MetricReading | None, after: MetricReading) -> bool:
    """True when nothing ran, waited or was counted from ``before`` to ``after`` (None: there
    is nothing to compare with, so it is not known to be idle)."""
    if before is None:
        return False
    if any(after.gauges.get(gauge, 0.0) > 0 for gauge in BUSY_GAUGES):
        return False
    return before.counters == after.counters and before.histograms == after.histograms
