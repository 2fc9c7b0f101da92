"""Three views of speculative decoding around one benchmark level, and the token counts.

- **client**: ``sum(completion_tokens) / sum(spec_verify_ct)`` over the level's requests (the
  ``accept_length`` of ``tui.engine.bench.bench_math``).
- **server**: the server's own counters differenced over the level. vLLM: ``1 + accepted /
  drafts`` from ``/metrics`` (``spec_decode_acceptance_length``). SGLang: ``generation tokens /
  verify calls`` from ``/metrics`` (``sglang:generation_tokens_total`` and
  ``sglang:spec_verify_calls_total``, present with ``--enable-metrics``); without them only the
  lifetime ``avg_spec_accept_length`` of ``/server_info`` is known, and it is labelled so.
- **log**: the mean of the ``accept len`` values the server logged in ``Decode batch`` lines
  (vLLM: ``Mean acceptance length``) while the level ran.

These are the :class:`~tui.engine.bench.level_figures.AcceptFigures` the app adds to each level.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from tui.engine.bench.level_figures import AcceptBasis, AcceptFigures, LevelFigures
from tui.engine.startup.snapshot import DecodeSummary


def accepts_between(before: DecodeSummary, after: DecodeSummary) -> tuple[float, ...]:
    """The accept lengths logged after ``before`` was taken and up to ``after``.

    A count that went down means the log started a new run in between: everything in ``after``
    is new. Values pushed out of the bounded ring are lost, so at most its length comes back.
    """
    new = after.accept_count - before.accept_count
    if new < 0:
        new = after.accept_count
    return after.latest_accepts(new)


_SGLANG_COUNTER = re.compile(
    r"^sglang:(generation_tokens_total|spec_verify_calls_total)(?:\{[^}]*\})?\s+(\S+)",
    re.MULTILINE,
)
_SGLANG_KEYS = {"generation_tokens_total": "tokens", "spec_verify_calls_total": "verify"}


def sglang_spec_counters(metrics_text: str) -> dict[str, float]:
    """SGLang's generated-token and verify-call counters from ``/metrics``, summed over ranks."""
    totals: dict[str, float] = {}
    for match in _SGLANG_COUNTER.finditer(metrics_text):
        try:
            value = float(match.group(2))
        except ValueError:
            continue
        if math.isfinite(value):
            key = _SGLANG_KEYS[match.group(1)]
            totals[key] = totals.get(key, 0.0) + value
    return totals


def sglang_accept_between(before: Mapping[str, float], after: Mapping[str, float]) -> float | None:
    """Tokens per verify call over the counters' difference (None without verify calls)."""
    verify = after.get("verify", 0.0) - before.get("verify", 0.0)
    tokens = after.get("tokens", 0.0) - before.get("tokens", 0.0)
    return tokens / verify if verify > 0 and tokens >= 0 else None


@dataclass(frozen=True, slots=True)
class LevelExtras:
    """What the app adds to a level's stored fields."""

    client_output_tokens: int
    log_accepts: tuple[float, ...] = ()
    sglang_before: Mapping[str, float] | None = None
    sglang_after: Mapping[str, float] | None = None


def accept_figures(extras: LevelExtras, figures: LevelFigures) -> AcceptFigures:
    """The server's accept length (with its basis), the log's accept length and the client's
    token count; vLLM's differenced figure and SGLang's lifetime one come from ``figures``."""
    spec = figures.server
    server = None if spec is None else spec.acceptance_length
    basis = AcceptBasis.DIFFERENCED
    if server is None and extras.sglang_before is not None and extras.sglang_after is not None:
        server = sglang_accept_between(extras.sglang_before, extras.sglang_after)
    if server is None and spec is not None and spec.avg_accept_after is not None:
        server, basis = spec.avg_accept_after, AcceptBasis.LIFETIME
    logged = extras.log_accepts
    return AcceptFigures(
        server_accept_length=server,
        server_accept_basis=basis if server is not None else None,
        log_accept_length=math.fsum(logged) / len(logged) if logged else None,
        log_accept_samples=len(logged),
        client_output_tokens=extras.client_output_tokens,
    )


@dataclass(frozen=True, slots=True)
class AcceptView:
    """The three accept lengths of one level, side by side (None: not reported)."""

    client: float | None
    server: float | None
    server_basis: str | None
    log: float | None
    log_samples: int

    @property
    def any(self) -> bool:
        return any(value is not None for value in (self.client, self.server, self.log))


def accept_view(figures: LevelFigures) -> AcceptView:
    """The accept lengths a stored or live level carries."""
    accepts = figures.accepts or AcceptFigures()
    basis = accepts.server_accept_basis
    return AcceptView(
        client=figures.accept_length,
        server=accepts.server_accept_length,
        server_basis=None if basis is None else basis.value,
        log=accepts.log_accept_length,
        log_samples=accepts.log_accept_samples,
    )


@dataclass(frozen=True, slots=True)
class TokenView:
    """Output tokens as the server counted them and as the client did."""

    server: int | None
    client: int | None
    mismatched_requests: int

    @property
    def disagree(self) -> bool:
        differ = self.server is not None and self.client is not None and self.server != self.client
        return differ or self.mismatched_requests > 0


def token_view(figures: LevelFigures) -> TokenView:
    """The server's and the client's token counts of a level."""
    accepts = figures.accepts
    return TokenView(
        server=figures.total_output_tokens,
        client=None if accepts is None else accepts.client_output_tokens,
        mismatched_requests=figures.token_mismatches or 0,
    )


def throughputs(levels: Sequence[LevelFigures]) -> list[float]:
    """Output tokens per second of each level, in order (0 where missing), for a sparkline."""
    return [level.output_throughput or 0.0 for level in levels]
