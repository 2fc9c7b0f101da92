"""The plain-text table ``bringup bench`` prints: one column per concurrency level."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from tui.engine.bench.level_figures import LevelFigures, Stats

Row = tuple[str, Callable[[LevelFigures], str]]


@dataclass(frozen=True, slots=True)
class BenchHeader:
    """The settings of one ``bringup bench`` run, printed above its levels (and in ``--json``)."""

    url: str
    endpoint: str
    model_id: str
    num_prompts: int
    input_len: int
    output_len: int
    warmup_requests: int
    ignore_eos: bool
    seed: int
    date: str
    started_at: float
    trials: int = 1
    dataset: str = "builtin"


def number_text(value: object, digits: int = 1) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return "-"
    return f"{value:.{digits}f}"


def _triple(stats: Callable[[LevelFigures], Stats]) -> Callable[[LevelFigures], str]:
    def cell(figures: LevelFigures) -> str:
        found = stats(figures)
        return " / ".join(number_text(value) for value in (found.mean, found.median, found.p99))

    return cell


def _server(figures: LevelFigures) -> tuple[float | None, float | None]:
    spec = figures.server
    return (None, None) if spec is None else (spec.acceptance_length, spec.avg_accept_after)


def _server_accept(figures: LevelFigures) -> str:
    vllm, after = _server(figures)
    if vllm is not None:
        return number_text(vllm, 2)
    return f"{number_text(after, 2)} (lifetime)" if after is not None else "-"


def _round_trip(figures: LevelFigures) -> str:
    return number_text(None if figures.server is None else figures.server.median_round_trip_ms, 1)


def _with_ci(figures: LevelFigures, name: str, digits: int) -> str:
    """The figure, with ``± half-width`` of its 95 % interval over the trials."""
    spread = figures.spread(name)
    value = getattr(figures, name)
    if spread is None or spread.ci95 is None:
        return number_text(value, digits)
    return f"{number_text(spread.mean, digits)} ±{number_text(spread.ci95, digits)}"


ROWS: tuple[Row, ...] = (
    ("completed / failed", lambda f: f"{f.completed or 0} / {f.failed or 0}"),
    ("duration (s)", lambda f: number_text(f.duration, 2)),
    ("request throughput (req/s)", lambda f: number_text(f.request_throughput, 2)),
    ("output throughput (tok/s)", lambda f: _with_ci(f, "output_throughput", 1)),
    ("total token throughput (tok/s)", lambda f: number_text(f.total_token_throughput, 1)),
    ("goodput (req/s)", lambda f: number_text(f.request_goodput, 2)),
    ("TTFT mean / median / p99 (ms)", _triple(lambda f: f.ttft_ms)),
    ("no-op round trip median (ms)", _round_trip),
    ("TPOT mean / median / p99 (ms)", _triple(lambda f: f.tpot_ms)),
    ("ITL mean / median / p99 (ms)", _triple(lambda f: f.itl_ms)),
    ("token gap mean / median / p99 (ms)", _triple(lambda f: f.token_gap_ms)),
    ("E2E mean / median / p99 (ms)", _triple(lambda f: f.e2el_ms)),
    ("decode speed median (tok/s)", lambda f: number_text(f.decode_tok_s.median, 1)),
    ("accept length (client)", lambda f: number_text(f.accept_length, 2)),
    ("accept length (server)", _server_accept),
    ("token count mismatches", lambda f: str(f.token_mismatches or 0)),
)


def render_table(meta: BenchHeader, levels: Sequence[LevelFigures]) -> str:
    """The levels as aligned text; errors of failed requests are listed below the table."""
    header = (
        f"{meta.url}  endpoint={meta.endpoint}  model={meta.model_id}  "
        f"{meta.num_prompts} prompts ({meta.dataset}), ~{meta.input_len} in / "
        f"{meta.output_len} out tokens" + (f", {meta.trials} trials" if meta.trials > 1 else "")
    )
    columns = [level.label for level in levels]
    cells = [[fill(level) for level in levels] for _name, fill in ROWS]
    width = max(len(name) for name, _ in ROWS)
    col = max(len(text) for text in [*columns, *(c for row in cells for c in row)])
    lines = [header, " " * width + "".join(f"  {c:>{col}}" for c in columns)]
    for (name, _fill), row in zip(ROWS, cells, strict=True):
        lines.append(f"{name:<{width}}" + "".join(f"  {c:>{col}}" for c in row))
    errors = sorted({error for level in levels for error in level.errors})
    lines.extend(f"error: {error}" for error in errors)
    return "\n".join(lines)
