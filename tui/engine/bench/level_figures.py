"""One benchmark level's figures, typed, as they go from the client to the pane, the store and
the comparison.

The built-in client fills every measured figure (:func:`figures_of`) and the server's own view
around the level (:class:`ServerSpec`); the app adds the three accept lengths side by side
(:class:`AcceptFigures`); the engines' own tools fill what their summary prints and name
themselves in ``source``. A figure nobody measured is None. The flat, ``vllm bench serve``-named
form they are saved in is ``tui.engine.bench.level_fields``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from tui.engine.bench.bench_math import Distribution, LevelResult, RequestRecord
from tui.engine.bench.trial_stats import TrialSpread

Scalar = str | int | float | bool | None


class AcceptBasis(str, Enum):
    """What the server's accept length covers."""

    DIFFERENCED = "differenced"
    """The server's counters differenced over this level only."""
    LIFETIME = "lifetime"
    """The server's lifetime average (every earlier request included)."""


@dataclass(frozen=True, slots=True)
class Stats:
    """Summary of a figure over the level's requests, in the unit its name says."""

    mean: float | None = None
    median: float | None = None
    std: float | None = None
    p90: float | None = None
    p95: float | None = None
    p99: float | None = None
    max: float | None = None

    @classmethod
    def of(cls, dist: Distribution, scale: float = 1.0) -> Stats:
        def scaled(value: float | None) -> float | None:
            return None if value is None else value * scale

        return cls(
            scaled(dist.mean), scaled(dist.median), scaled(dist.std), scaled(dist.p90),
            scaled(dist.p95), scaled(dist.p99), scaled(dist.max),
        )  # fmt: skip


@dataclass(frozen=True, slots=True)
class ServerSpec:
    """The server's own speculative-decoding figures around the level, and the round trip."""

    avg_accept_before: float | None = None
    """SGLang's lifetime ``avg_spec_accept_length`` before the level."""
    avg_accept_after: float | None = None
    """The same after the level (what SGLang's own tool prints as ``Accept length``)."""
    acceptance_length: float | None = None
    """vLLM's ``1 + accepted/drafts`` over the level's counter differences."""
    median_round_trip_ms: float | None = None
    """The median time of the level's no-op requests."""
    acceptance_rate: float | None = None
    """vLLM's accepted / draft tokens over the level, in %."""
    acceptance_rates_per_pos: tuple[float, ...] = ()
    """vLLM's accepted tokens at each draft position / drafts, in %."""


@dataclass(frozen=True, slots=True)
class AcceptFigures:
    """What the app adds to a level: the server's accept length with its basis, the log's and
    the client's own token count."""

    server_accept_length: float | None = None
    server_accept_basis: AcceptBasis | None = None
    log_accept_length: float | None = None
    log_accept_samples: int = 0
    client_output_tokens: int | None = None


@dataclass(frozen=True, slots=True)
class ServingStats:
    """The engine's own ``/metrics`` figures over the scrape intervals of a level: the mean and
    the 99th percentile of each interval's value (``Stats.mean`` and ``Stats.p99``)."""

    scrapes: int = 0
    tok_s: Stats = Stats()
    accept_length: Stats = Stats()
    running: Stats = Stats()
    queued: Stats = Stats()
    kv_usage: Stats = Stats()
    ttft_p99_ms: Stats = Stats()
    itl_p99_ms: Stats = Stats()


@dataclass(frozen=True, slots=True)
class LevelFigures:
    """The benchmark at one concurrency level."""

    concurrency: int
    completed: int | None = None
    failed: int | None = None
    duration: float | None = None
    total_input_tokens: int | None = None
    total_output_tokens: int | None = None
    request_throughput: float | None = None
    output_throughput: float | None = None
    ttft_ms: Stats = Stats()
    tpot_ms: Stats = Stats()
    itl_ms: Stats = Stats()
    e2el_ms: Stats = Stats()
    decode_tok_s: Stats = Stats()
    accept_length: float | None = None
    """The client's ``sum(completion_tokens) / sum(spec_verify_ct)``."""
    mean_accept_length: float | None = None
    token_mismatches: int | None = None
    errors: tuple[str, ...] = ()
    """Distinct errors of the failed requests."""
    server: ServerSpec | None = None
    accepts: AcceptFigures | None = None
    serving: ServingStats | None = None
    """What the engine's ``/metrics`` said during the level (the app scrapes it)."""
    source: str | None = None
    """Who measured it when not the built-in client (``official sglang``)."""
    problems: tuple[str, ...] = ()
    """What was odd in a tool's output."""
    other: tuple[tuple[str, Scalar], ...] = field(default=())
    """A tool's figures that have no place above, by their saved name, kept as read."""
    total_token_throughput: float | None = None
    request_goodput: float | None = None
    """Requests per second that met every ``--goodput`` SLO (None: no SLO given)."""
    token_gap_ms: Stats = Stats()
    """Each chunk's gap spread over its tokens (ITL is one gap per chunk)."""
    request_rate: float | None = None
    """Open-loop arrivals per second (``inf``: all at once); None for a closed-loop level."""
    burstiness: float | None = None
    num_prompts: int | None = None
    trials: tuple[tuple[str, TrialSpread], ...] = ()
    """Per figure (by its saved name), its spread over the level's trials (``--trials``)."""
    records: tuple[RequestRecord, ...] = field(default=(), compare=False, repr=False)
    """Every request of every trial the figures were computed from, while they are in memory
    (never saved): more trials of the level pool their percentiles with these."""

    @property
    def label(self) -> str:
        """``c=4`` for a closed-loop level, ``r=8`` (``r=8 c<=16`` when capped) for open loop."""
        if self.request_rate is None:
            return f"c={self.concurrency}"
        rate = "inf" if self.request_rate == float("inf") else f"{self.request_rate:g}"
        return f"r={rate}" + (f" c<={self.concurrency}" if self.concurrency else "")

    def spread(self, name: str) -> TrialSpread | None:
        """The trials' spread of the figure saved as ``name`` (None: one trial or not kept)."""
        return next((spread for key, spread in self.trials if key == name), None)


def figures_of(result: LevelResult) -> LevelFigures:
    """The client's result of one level (times in milliseconds, speeds per second)."""
    return LevelFigures(
        concurrency=result.concurrency,
        completed=result.completed,
        failed=result.failed,
        duration=result.duration,
        total_input_tokens=result.total_input_tokens,
        total_output_tokens=result.total_output_tokens,
        request_throughput=result.request_throughput,
        output_throughput=result.output_throughput,
        ttft_ms=Stats.of(result.ttft, 1000.0),
        tpot_ms=Stats.of(result.tpot, 1000.0),
        itl_ms=Stats.of(result.itl, 1000.0),
        e2el_ms=Stats.of(result.e2el, 1000.0),
        decode_tok_s=Stats.of(result.decode_speed),
        accept_length=result.accept_length,
        mean_accept_length=result.accept_lengths.mean,
        token_mismatches=result.token_mismatches,
        errors=result.errors,
        total_token_throughput=result.total_token_throughput,
        request_goodput=result.request_goodput,
        token_gap_ms=Stats.of(result.token_gap, 1000.0),
    )
