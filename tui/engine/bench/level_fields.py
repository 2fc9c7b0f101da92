"""A level's figures as the flat fields they are saved in, and read back from them.

The names are those of ``vllm bench serve`` saved results (``completed``, ``output_throughput``,
``median_ttft_ms``, ...): ``bringup bench --json`` prints them, the history file stores them and
the engines' tools' summaries are read into them. A group is written only when the level has it
(the server's view, the app's accept lengths, a tool's name), so the saved form of a level is the
same as before the figures were typed. Reading is defensive: a value of the wrong type is None,
and a name nothing here knows is kept in ``other`` when its value is a plain scalar.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from tui.engine.bench.level_figures import (
    AcceptBasis,
    AcceptFigures,
    LevelFigures,
    Scalar,
    ServerSpec,
    ServingStats,
    Stats,
)
from tui.engine.bench.trial_stats import TrialSpread

_STATS = ("mean", "median", "std", "p90", "p95", "p99", "max")
_SPREADS: tuple[tuple[str, str, Callable[[LevelFigures], Stats]], ...] = (
    ("ttft", "ms", lambda f: f.ttft_ms), ("tpot", "ms", lambda f: f.tpot_ms),
    ("itl", "ms", lambda f: f.itl_ms), ("e2el", "ms", lambda f: f.e2el_ms),
    ("decode", "tok_s", lambda f: f.decode_tok_s),
    ("token_gap", "ms", lambda f: f.token_gap_ms),
)  # fmt: skip
_SERVER = (
    "server_avg_spec_accept_length_before", "server_avg_spec_accept_length_after",
    "spec_decode_acceptance_length", "median_round_trip_ms",
)  # fmt: skip
_RATES = ("spec_decode_acceptance_rate", "spec_decode_per_position_acceptance_rates")
_ACCEPTS = (
    "server_accept_length", "server_accept_basis", "log_accept_length", "log_accept_samples",
    "client_output_tokens",
)  # fmt: skip
_SERVING: tuple[tuple[str, Callable[[ServingStats], Stats]], ...] = (
    ("tok_s", lambda s: s.tok_s), ("accept_length", lambda s: s.accept_length),
    ("running", lambda s: s.running), ("queued", lambda s: s.queued),
    ("kv_usage", lambda s: s.kv_usage), ("ttft_p99_ms", lambda s: s.ttft_p99_ms),
    ("itl_p99_ms", lambda s: s.itl_p99_ms),
)  # fmt: skip
"""The engine's ``/metrics`` figures during the level, saved as ``metrics_{name}_mean`` and
``metrics_{name}_p99`` (names of bringup's own: no tool measures these)."""
_SERVING_NAMES = (
    "metrics_scrapes",
    *(f"metrics_{name}_{stat}" for name, _ in _SERVING for stat in ("mean", "p99")),
)
_ORIGIN = ("source", "problems")
_CORE = (
    "max_concurrency", "completed", "failed", "duration", "total_input_tokens",
    "total_output_tokens", "request_throughput", "output_throughput", "accept_length",
    "mean_accept_length", "token_mismatches", "errors", "total_token_throughput",
    "request_goodput", "request_rate", "burstiness", "num_prompts", "trials",
)  # fmt: skip
_SPREAD_NAMES = tuple(f"{stat}_{name}_{unit}" for name, unit, _ in _SPREADS for stat in _STATS)
KNOWN = frozenset((*_CORE, *_SERVER, *_RATES, *_ACCEPTS, *_ORIGIN, *_SPREAD_NAMES, *_SERVING_NAMES))
"""Every field name a level's typed figures have a place for."""


def _spread_fields(name: str, unit: str, stats: Stats) -> dict[str, Any]:
    return {f"{stat}_{name}_{unit}": getattr(stats, stat) for stat in _STATS}


def level_fields(figures: LevelFigures) -> dict[str, Any]:
    """The level as flat fields, ready for JSON."""
    f = figures
    fields: dict[str, Any] = {
        "max_concurrency": f.concurrency, "completed": f.completed, "failed": f.failed,
        "duration": f.duration, "total_input_tokens": f.total_input_tokens,
        "total_output_tokens": f.total_output_tokens, "request_throughput": f.request_throughput,
        "output_throughput": f.output_throughput,
    }  # fmt: skip
    for name, unit, stats in _SPREADS:
        fields |= _spread_fields(name, unit, stats(f))
    fields |= {
        "accept_length": f.accept_length, "mean_accept_length": f.mean_accept_length,
        "token_mismatches": f.token_mismatches, "errors": list(f.errors),
    }  # fmt: skip
    if f.server is not None:
        fields |= dict(zip(_SERVER, _server_values(f.server), strict=True))
        if f.server.acceptance_rate is not None:
            fields["spec_decode_acceptance_rate"] = f.server.acceptance_rate
            rates = list(f.server.acceptance_rates_per_pos)
            fields["spec_decode_per_position_acceptance_rates"] = rates
    if f.accepts is not None:
        fields |= dict(zip(_ACCEPTS, _accept_values(f.accepts), strict=True))
    if f.serving is not None:
        fields |= _serving_fields(f.serving)
    if f.source is not None or f.problems:
        fields |= {"source": f.source, "problems": list(f.problems)}
    fields |= _load_fields(f)
    return fields | dict(f.other)


def _serving_fields(serving: ServingStats) -> dict[str, Any]:
    fields: dict[str, Any] = {"metrics_scrapes": serving.scrapes}
    for name, read in _SERVING:
        stats = read(serving)
        fields |= {f"metrics_{name}_mean": stats.mean, f"metrics_{name}_p99": stats.p99}
    return fields


def _serving(fields: Mapping[str, object]) -> ServingStats | None:
    if "metrics_scrapes" not in fields:
        return None

    def stats(name: str) -> Stats:
        return Stats(
            mean=_number(fields.get(f"metrics_{name}_mean")),
            p99=_number(fields.get(f"metrics_{name}_p99")),
        )

    return ServingStats(
        max(_count(fields.get("metrics_scrapes")) or 0, 0),
        *(stats(name) for name, _ in _SERVING),
    )


def _load_fields(f: LevelFigures) -> dict[str, Any]:
    """The newer figures, written only when measured (older records stay as they were)."""
    found: dict[str, Any] = {}
    if f.total_token_throughput is not None:
        found["total_token_throughput"] = f.total_token_throughput
    if f.request_goodput is not None:
        found["request_goodput"] = f.request_goodput
    if f.request_rate is not None:
        found["request_rate"] = rate_text(f.request_rate)
        found["burstiness"] = f.burstiness
    if f.num_prompts is not None:
        found["num_prompts"] = f.num_prompts
    if f.trials:
        found["trials"] = {name: _spread_value(spread) for name, spread in f.trials}
    return found


def rate_text(rate: float) -> float | str:
    """A request rate as vLLM saves it: the number, or ``"inf"``."""
    return "inf" if math.isinf(rate) else rate


def _spread_value(spread: TrialSpread) -> dict[str, Any]:
    return {"n": spread.n, "mean": spread.mean, "std": spread.std, "ci95": spread.ci95}


def _rate(value: object) -> float | None:
    if value == "inf":
        return math.inf
    return _number(value)


def _trials(value: object) -> tuple[tuple[str, TrialSpread], ...]:
    if not isinstance(value, dict):
        return ()
    found = []
    for name, item in value.items():
        if not isinstance(name, str) or not isinstance(item, dict):
            continue
        n, mean = _count(item.get("n")), _number(item.get("mean"))
        if n is None or n < 1 or mean is None:
            continue
        spread = TrialSpread(n, mean, _number(item.get("std")), _number(item.get("ci95")))
        found.append((name, spread))
    return tuple(found)


def _server_values(server: ServerSpec) -> tuple[object, ...]:
    return (server.avg_accept_before, server.avg_accept_after, server.acceptance_length,
            server.median_round_trip_ms)  # fmt: skip


def _accept_values(accepts: AcceptFigures) -> tuple[object, ...]:
    basis = accepts.server_accept_basis
    return (
        accepts.server_accept_length, None if basis is None else basis.value,
        accepts.log_accept_length, accepts.log_accept_samples, accepts.client_output_tokens,
    )  # fmt: skip


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _texts(value: object) -> tuple[str, ...]:
    return tuple(item for item in value if isinstance(item, str)) if isinstance(value, list) else ()


def _stats(fields: Mapping[str, object], name: str, unit: str) -> Stats:
    return Stats(*(_number(fields.get(f"{stat}_{name}_{unit}")) for stat in _STATS))


def _basis(value: object) -> AcceptBasis | None:
    return next((basis for basis in AcceptBasis if basis.value == value), None)


def _server(fields: Mapping[str, object]) -> ServerSpec | None:
    if not any(name in fields for name in _SERVER):
        return None
    per_pos = fields.get("spec_decode_per_position_acceptance_rates")
    rates = [_number(v) for v in per_pos] if isinstance(per_pos, list) else []
    before, after, length, trip = (_number(fields.get(name)) for name in _SERVER)
    return ServerSpec(
        before,
        after,
        length,
        trip,
        acceptance_rate=_number(fields.get("spec_decode_acceptance_rate")),
        acceptance_rates_per_pos=tuple(v for v in rates if v is not None),
    )


def _accepts(fields: Mapping[str, object]) -> AcceptFigures | None:
    if not any(name in fields for name in _ACCEPTS):
        return None
    return AcceptFigures(
        server_accept_length=_number(fields.get("server_accept_length")),
        server_accept_basis=_basis(fields.get("server_accept_basis")),
        log_accept_length=_number(fields.get("log_accept_length")),
        log_accept_samples=max(_count(fields.get("log_accept_samples")) or 0, 0),
        client_output_tokens=_count(fields.get("client_output_tokens")),
    )


def _other(fields: Mapping[str, object]) -> tuple[tuple[str, Scalar], ...]:
    return tuple(
        (name, value) for name, value in fields.items()
        if name not in KNOWN and (value is None or isinstance(value, str | int | float))
    )  # fmt: skip


def _concurrency(fields: Mapping[str, object], default: int | None) -> int:
    """The saved concurrency; 0 stays 0 for an open-loop level (no cap), else 1 at least."""
    saved = _count(fields.get("max_concurrency"))
    if saved == 0 and fields.get("request_rate") is not None:
        return 0
    return saved or default or 1


def level_from_fields(fields: Mapping[str, object], concurrency: int | None = None) -> LevelFigures:
    """The typed figures of saved fields; ``concurrency`` when they do not name theirs."""
    source = fields.get("source")
    return LevelFigures(
        concurrency=_concurrency(fields, concurrency),
        completed=_count(fields.get("completed")),
        failed=_count(fields.get("failed")),
        duration=_number(fields.get("duration")),
        total_input_tokens=_count(fields.get("total_input_tokens")),
        total_output_tokens=_count(fields.get("total_output_tokens")),
        request_throughput=_number(fields.get("request_throughput")),
        output_throughput=_number(fields.get("output_throughput")),
        ttft_ms=_stats(fields, "ttft", "ms"),
        tpot_ms=_stats(fields, "tpot", "ms"),
        itl_ms=_stats(fields, "itl", "ms"),
        e2el_ms=_stats(fields, "e2el", "ms"),
        decode_tok_s=_stats(fields, "decode", "tok_s"),
        accept_length=_number(fields.get("accept_length")),
        mean_accept_length=_number(fields.get("mean_accept_length")),
        token_mismatches=_count(fields.get("token_mismatches")),
        errors=_texts(fields.get("errors")),
        server=_server(fields),
        accepts=_accepts(fields),
        serving=_serving(fields),
        source=source if isinstance(source, str) else None,
        problems=_texts(fields.get("problems")),
        other=_other(fields),
        total_token_throughput=_number(fields.get("total_token_throughput")),
        request_goodput=_number(fields.get("request_goodput")),
        token_gap_ms=_stats(fields, "token_gap", "ms"),
        request_rate=_rate(fields.get("request_rate")),
        burstiness=_number(fields.get("burstiness")),
        num_prompts=_count(fields.get("num_prompts")),
        trials=_trials(fields.get("trials")),
    )
