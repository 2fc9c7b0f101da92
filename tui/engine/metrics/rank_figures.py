"""The serving figures that belong to one rank: the series of one data-parallel engine (or one
scheduler) told apart by their labels, and the rank panel each belongs on.

vLLM labels every series with ``engine``, the index of its data-parallel engine
(``vllm/v1/metrics/loggers.py``); SGLang labels its scheduler's series with ``tp_rank`` and,
under data-parallel attention, ``dp_rank`` (``python/sglang/srt/metrics/collector.py``). A label
that holds one value across the scrape (one engine, the stats-logging TP0) tells nothing apart:
the figures are then the server's, and belong on the first rank's panel.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from tui.engine.gpu.gpu_map import rank_numbers
from tui.engine.metrics.samples import MetricSample

RANK_LABELS = {"engine": "DP", "dp_rank": "DP", "tp_rank": "TP"}
"""Label -> the kind of rank it numbers (as a rank tag writes it)."""
GROUP_FIGURES = ("running", "queued", "kv_usage", "generation_tokens")
"""The figures read per group: its gauges, and the counter its tok/s comes from."""

RankKey = tuple[tuple[str, int], ...]
"""The numbers that name a group, ``(("DP", 1),)`` or ``(("DP", 0), ("TP", 3))``."""


@dataclass(frozen=True, slots=True)
class RankFigures:
    """One group's figures at the last scrape (tok/s over the interval before it)."""

    key: RankKey
    tok_s: float | None = None
    running: float | None = None
    queued: float | None = None
    kv_usage: float | None = None

    @property
    def name(self) -> str:
        """``DP1`` or ``DP0 TP3``."""
        return " ".join(f"{kind}{number}" for kind, number in self.key)


def group_values(
    samples: Iterable[MetricSample], figures: Mapping[str, str]
) -> dict[RankKey, dict[str, float]]:
    """Each group's value of each figure (``figures``: sample name -> figure), summed over
    the group's other labels; empty when the rank labels tell no two series apart."""
    shown = [(figures[s.name], s) for s in samples if s.name in figures and math.isfinite(s.value)]
    seen: dict[str, set[str]] = defaultdict(set)
    for _, sample in shown:
        for label, value in sample.labels:
            if label in RANK_LABELS:
                seen[label].add(value)
    splitting = sorted(label for label, values in seen.items() if len(values) > 1)
    if not splitting:
        return {}
    groups: dict[RankKey, dict[str, float]] = defaultdict(dict)
    for figure, sample in shown:
        key = _key(sample, splitting)
        if key is not None:
            values = groups[key]
            values[figure] = values.get(figure, 0.0) + sample.value
    return dict(groups)


def _key(sample: MetricSample, splitting: Sequence[str]) -> RankKey | None:
    numbers: dict[str, int] = {}
    for label in splitting:
        value = sample.label(label)
        if value is None or not value.isdigit():
            return None
        numbers[RANK_LABELS[label]] = int(value)
    return tuple(sorted(numbers.items()))


def rank_figures(
    before: Mapping[RankKey, Mapping[str, float]] | None,
    after: Mapping[RankKey, Mapping[str, float]],
    seconds: float,
) -> tuple[RankFigures, ...]:
    """Each group's figures at ``after``, tok/s from its counter's growth since ``before``."""
    ranks = []
    for key, values in sorted(after.items()):
        earlier = (before or {}).get(key, {})
        tok_s = None
        if seconds > 0 and "generation_tokens" in values and "generation_tokens" in earlier:
            grown = values["generation_tokens"] - earlier["generation_tokens"]
            tok_s = (grown if grown >= 0 else values["generation_tokens"]) / seconds
        ranks.append(
            RankFigures(key, tok_s, values.get("running"), values.get("queued"),
                        values.get("kv_usage"))
        )  # fmt: skip
    return tuple(ranks)


def rank_of(tags: Sequence[str], groups: Sequence[RankFigures]) -> dict[str, RankFigures]:
    """The panel (rank tag) each group's figures go on: the first rank whose numbers match the
    group's, else the first whose numbers match when a number it lacks counts as 0 (``TP3`` is
    in DP0); ranks without numbers (``APIServer``) get none."""
    numbered = [(tag, rank_numbers(tag)) for tag in tags]
    placed: dict[str, RankFigures] = {}
    for group in groups:
        exact = [tag for tag, numbers in numbered if _matches(numbers, group.key, None)]
        loose = [tag for tag, numbers in numbered if _matches(numbers, group.key, 0)]
        tag = next((tag for tag in (*exact, *loose) if tag not in placed), None)
        if tag is not None:
            placed[tag] = group
    return placed


def _matches(numbers: Mapping[str, int], key: RankKey, missing: int | None) -> bool:
    return bool(numbers) and all(numbers.get(kind, missing) == number for kind, number in key)
