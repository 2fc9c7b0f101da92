"""The plain-text table ``bringup bench`` prints: one column per concurrency level."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Row = tuple[str, Callable[[dict[str, Any]], str]]


def number_text(value: object, digits: int = 1) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return "-"
    return f"{value:.{digits}f}"


def _triple(name: str) -> Callable[[dict[str, Any]], str]:
    def cell(fields: dict[str, Any]) -> str:
        stats = ("mean", "median", "p99")
        return " / ".join(number_text(fields.get(f"{stat}_{name}_ms")) for stat in stats)

    return cell


def _server_accept(fields: dict[str, Any]) -> str:
    vllm = fields.get("spec_decode_acceptance_length")
    if vllm is not None:
        return number_text(vllm, 2)
    after = fields.get("server_avg_spec_accept_length_after")
    return f"{number_text(after, 2)} (lifetime)" if after is not None else "-"


ROWS: tuple[Row, ...] = (
    ("completed / failed", lambda f: f"{f.get('completed', 0)} / {f.get('failed', 0)}"),
    ("duration (s)", lambda f: number_text(f.get("duration"), 2)),
    ("request throughput (req/s)", lambda f: number_text(f.get("request_throughput"), 2)),
    ("output throughput (tok/s)", lambda f: number_text(f.get("output_throughput"), 1)),
    ("TTFT mean / median / p99 (ms)", _triple("ttft")),
    ("no-op round trip median (ms)", lambda f: number_text(f.get("median_round_trip_ms"), 1)),
    ("TPOT mean / median / p99 (ms)", _triple("tpot")),
    ("ITL mean / median / p99 (ms)", _triple("itl")),
    ("E2E mean / median / p99 (ms)", _triple("e2el")),
    ("decode speed median (tok/s)", lambda f: number_text(f.get("median_decode_tok_s"), 1)),
    ("accept length (client)", lambda f: number_text(f.get("accept_length"), 2)),
    ("accept length (server)", _server_accept),
    ("token count mismatches", lambda f: str(f.get("token_mismatches", 0))),
)


def render_table(report: dict[str, Any]) -> str:
    """The report as aligned text; errors of failed requests are listed below the table."""
    levels: list[dict[str, Any]] = report.get("results", [report])
    header = (
        f"{report['url']}  endpoint={report['endpoint']}  model={report['model_id']}  "
        f"{report['num_prompts']} prompts, ~{report['input_len']} in / "
        f"{report['output_len']} out tokens"
    )
    columns = [f"c={level.get('max_concurrency')}" for level in levels]
    cells = [[fill(level) for level in levels] for _name, fill in ROWS]
    width = max(len(name) for name, _ in ROWS)
    col = max(len(text) for text in [*columns, *(c for row in cells for c in row)])
    lines = [header, " " * width + "".join(f"  {c:>{col}}" for c in columns)]
    for (name, _fill), row in zip(ROWS, cells, strict=True):
        lines.append(f"{name:<{width}}" + "".join(f"  {c:>{col}}" for c in row))
    errors = sorted({error for level in levels for error in level.get("errors", [])})
    lines.extend(f"error: {error}" for error in errors)
    return "\n".join(lines)
