"""Each level's trials reduced to a spread per figure, by the figure's saved name, and more
trials of a level pooled with the earlier ones: spreads from their summaries, percentiles from
the per-request records of every trial."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

from tui.engine.bench.bench_math import summarize
from tui.engine.bench.level_fields import level_fields
from tui.engine.bench.level_figures import LevelFigures, figures_of
from tui.engine.bench.trial_stats import TrialSpread, pooled

TRIAL_FIELDS = (
    "request_throughput", "output_throughput", "total_token_throughput", "request_goodput",
    "mean_ttft_ms", "median_ttft_ms", "p99_ttft_ms", "mean_tpot_ms", "median_tpot_ms",
    "p99_tpot_ms", "mean_itl_ms", "median_itl_ms", "mean_e2el_ms", "median_e2el_ms",
    "median_decode_tok_s", "accept_length",
)  # fmt: skip
"""The figures whose spread over trials is kept (and compared)."""


def trial_spreads(trials: Sequence[LevelFigures]) -> tuple[tuple[str, TrialSpread], ...]:
    """Per figure measured in every trial, its spread; nothing for a single trial."""
    if len(trials) < 2:
        return ()
    rows = [level_fields(trial) for trial in trials]
    found = []
    for name in TRIAL_FIELDS:
        values = [row.get(name) for row in rows]
        numbers = [
            float(v) for v in values if isinstance(v, int | float) and not isinstance(v, bool)
        ]
        if len(numbers) == len(rows):
            spread = TrialSpread.of(numbers)
            if spread is not None:
                found.append((name, spread))
    return tuple(found)


def _spreads(figures: LevelFigures) -> dict[str, TrialSpread]:
    """Each trial figure's spread; a level of one trial is a spread of one value."""
    kept = dict(figures.trials)
    fields = level_fields(figures)
    for name in TRIAL_FIELDS:
        value = fields.get(name)
        if name not in kept and isinstance(value, int | float) and not isinstance(value, bool):
            single = TrialSpread.of([float(value)])
            if single is not None:
                kept[name] = single
    return kept


REQUEST_FIGURES = (
    "completed", "failed", "duration", "total_input_tokens", "total_output_tokens",
    "request_throughput", "output_throughput", "total_token_throughput", "ttft_ms", "tpot_ms",
    "itl_ms", "e2el_ms", "decode_tok_s", "token_gap_ms", "accept_length", "mean_accept_length",
    "token_mismatches", "errors",
)  # fmt: skip
"""The figures computed from the level's per-request records (``figures_of``)."""


def with_more_trials(earlier: LevelFigures, later: LevelFigures) -> LevelFigures:
    """``later``'s figures with every trial figure's spread pooled over both runs' trials.

    When both carry their per-request records (``LevelFigures.records``), every figure computed
    from requests is recomputed over the union, as one level of all the trials would have it:
    the percentiles (p50, p90, p99, ...) over every request of every trial, the throughputs over
    the summed duration, goodput from the good requests of both. Without the records of a side
    (a level read back from the store), request counts and errors add up and the percentiles
    stay the later trials' own. The spreads' means are over every trial either way.
    """
    before, after = _spreads(earlier), _spreads(later)
    merged = tuple(
        (name, pooled(before[name], after[name]))
        for name in TRIAL_FIELDS
        if name in before and name in after
    )
    if earlier.records and later.records:
        return replace(_pooled_requests(earlier, later), trials=merged)

    def total(a: int | None, b: int | None) -> int | None:
        return None if a is None and b is None else (a or 0) + (b or 0)

    errors = tuple(dict.fromkeys((*earlier.errors, *later.errors)))
    return replace(
        later, trials=merged, completed=total(earlier.completed, later.completed),
        failed=total(earlier.failed, later.failed), errors=errors,
    )  # fmt: skip


def _pooled_requests(earlier: LevelFigures, later: LevelFigures) -> LevelFigures:
    """``later`` with its request figures over the records of both (``summarize``'s arithmetic
    with the trials' durations summed)."""
    records = (*earlier.records, *later.records)
    duration = (earlier.duration or 0.0) + (later.duration or 0.0)
    union = figures_of(summarize(records, later.concurrency, duration))
    found = {name: getattr(union, name) for name in REQUEST_FIGURES}
    accepts = later.accepts
    if accepts is not None:
        client = sum(record.client_tokens for record in records if record.success)
        accepts = replace(accepts, client_output_tokens=client)
    return replace(
        later, **found, records=records, accepts=accepts,
        request_goodput=_goodput(earlier, later, duration),
    )  # fmt: skip


def _goodput(earlier: LevelFigures, later: LevelFigures, duration: float) -> float | None:
    """Good requests of both (each side's goodput times its duration) over the summed duration."""
    sides = ((earlier.request_goodput, earlier.duration), (later.request_goodput, later.duration))
    if duration <= 0 or any(rate is None or took is None for rate, took in sides):
        return None
    return math.fsum((rate or 0.0) * (took or 0.0) for rate, took in sides) / duration
