"""Each level's trials reduced to a spread per figure, by the figure's saved name, and more
trials of a level pooled with the earlier ones."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from tui.engine.bench.level_fields import level_fields
from tui.engine.bench.level_figures import LevelFigures
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


def with_more_trials(earlier: LevelFigures, later: LevelFigures) -> LevelFigures:
    """``later``'s figures with every trial figure's spread pooled over both runs' trials.

    Request counts and errors add up; the percentiles are the later trials' own (their
    requests are not kept), the spreads' means are over every trial.
    """
    before, after = _spreads(earlier), _spreads(later)
    merged = tuple(
        (name, pooled(before[name], after[name]))
        for name in TRIAL_FIELDS
        if name in before and name in after
    )

    def total(a: int | None, b: int | None) -> int | None:
        return None if a is None and b is None else (a or 0) + (b or 0)

    errors = tuple(dict.fromkeys((*earlier.errors, *later.errors)))
    return replace(
        later, trials=merged, completed=total(earlier.completed, later.completed),
        failed=total(earlier.failed, later.failed), errors=errors,
    )  # fmt: skip
