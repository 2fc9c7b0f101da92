"""Each level's trials reduced to a spread per figure, by the figure's saved name."""

from __future__ import annotations

from collections.abc import Sequence

from tui.engine.bench.level_fields import level_fields
from tui.engine.bench.level_figures import LevelFigures
from tui.engine.bench.trial_stats import TrialSpread

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
