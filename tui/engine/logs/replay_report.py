"""A finished log as a report: one JSON object, or a plain-text timeline for people.

Both read a ``Snapshot``; ``replay_chunks`` produces it from bytes through ``LogEngine``, the
same path the live monitor uses.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from statistics import fmean
from typing import Any

from tui.engine.logs.log_engine import LogEngine
from tui.engine.startup.snapshot import Failure, RankState, Snapshot, StageSpan
from tui.engine.startup.vocabulary import Phase


def replay_chunks(
    chunks: Iterable[bytes], engine: str = "auto", clock: Callable[[], float] = time.monotonic
) -> Snapshot:
    """Read a whole log; the snapshot describes its last run."""
    log = LogEngine(engine=engine, clock=clock)
    for chunk in chunks:
        log.feed(chunk)
    return log.finish().snapshot


# ---------------------------------------------------------------------------- JSON


def _seconds(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def _span(span: StageSpan) -> dict[str, Any]:
    return {
        "stage": span.stage.value,
        "start": span.start_text,
        "seconds": _seconds(span.seconds),
        "draft": span.draft,
    }


def _failure(failure: Failure | None) -> dict[str, Any] | None:
    if failure is None:
        return None
    return {
        "kind": failure.kind.value,
        "rank": failure.rank,
        "line": failure.line,
        "excerpt": failure.excerpt,
    }


def report_json(snapshot: Snapshot) -> dict[str, Any]:
    """The replay report as one JSON-ready object (see ``bringup replay --help``)."""
    decode = snapshot.decode
    return {
        "engine": snapshot.server.engine,
        "lines": snapshot.lines,
        "ranks": [rank.tag for rank in snapshot.ranks],
        "outcome": snapshot.outcome.value,
        "last_stage": snapshot.last_stage.value if snapshot.last_stage else None,
        "failure": _failure(snapshot.failure),
        "stages": {rank.tag: [_span(span) for span in rank.history] for rank in snapshot.ranks},
        "startup_seconds": _seconds(snapshot.startup_seconds),
        "decode": {
            "lines": decode.lines,
            "gen_throughput": list(decode.gen_throughput),
            "accept_len": list(decode.accept_len),
            "accept_rate": list(decode.accept_rate),
        },
        "runs_before": snapshot.runs_before,
    }


# ---------------------------------------------------------------------------- text


def _summary(snapshot: Snapshot) -> list[str]:
    server = snapshot.server
    engine = server.engine + (f" {server.version}" if server.version else "")
    stage = snapshot.last_stage.label if snapshot.last_stage else "none"
    startup = snapshot.startup_seconds
    lines = [
        f"engine    {engine}, {_count(snapshot.lines, 'line')}, "
        f"{_count(len(snapshot.ranks), 'rank')}",
        f"outcome   {snapshot.outcome.value.upper()} (furthest stage: {stage})",
    ]
    if startup is not None:
        lines.append(f"start-up  {startup:.1f} s to the ready line (log time)")
    if server.model:
        lines.append(f"model     {server.model} (TP{server.tp_size}, DP{server.dp_size})")
    if server.drafter:
        lines.append(f"drafter   {server.drafter}")
    if snapshot.runs_before:
        lines.append(f"runs      this is the last of {snapshot.runs_before + 1} runs in the log")
    return lines


def _failure_text(failure: Failure | None) -> list[str]:
    if failure is None:
        return []
    where = f" on {failure.rank}" if failure.rank else ""
    during = f" during {failure.stage.label}" if failure.stage else ""
    label = f" ({failure.kind.label})"
    head = f"failure   {failure.kind.value}{where} at line {failure.line}{during}{label}"
    lines = ["", head, *(f"  | {line}" for line in failure.excerpt.splitlines())]
    if failure.setting:
        lines.append(f"          to wait longer, raise {failure.setting}")
    return lines


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def _rank_rows(rank: RankState, width: int) -> list[str]:
    rows = []
    for index, span in enumerate(rank.history):
        tag = rank.tag if index == 0 else ""
        label = span.stage.label + (" (draft)" if span.draft else "")
        seconds = "…" if span.seconds is None else f"{span.seconds:.1f}"
        rows.append(f"{tag:<{width}} {label:<24} {span.start_text or '-':<23} {seconds:>8}")
    totals: dict[Phase, tuple[float, int]] = {}
    for done in rank.phases:  # compile and JIT phases, inside the stages above
        took, units = totals.get(done.phase, (0.0, 0))
        totals[done.phase] = (took + done.seconds, units + done.steps)
    for phase, (took, units) in totals.items():
        text = f"  {phase.label} ({_count(units, 'unit')})"
        rows.append(f"{'':<{width}} {text:<48} {took:>8.1f}")
    return rows


def _timeline(snapshot: Snapshot) -> list[str]:
    if not snapshot.ranks:
        return ["", "timeline  no rank printed a recognisable line"]
    width = max(16, *(len(rank.tag) for rank in snapshot.ranks))
    header = f"{'RANK':<{width}} {'STAGE':<24} {'START (log time)':<23} {'SECONDS':>8}"
    rows = [row for rank in snapshot.ranks for row in _rank_rows(rank, width)]
    return ["", header, *rows, "(… = the stage the rank was in when the log ended)"]


def _decode_text(snapshot: Snapshot) -> list[str]:
    decode = snapshot.decode
    if not decode.lines:
        return []
    lines = ["", f"decode    {decode.lines} stats lines"]
    for name, values, unit in (
        ("gen throughput", decode.gen_throughput, " tok/s"),
        ("accept len", decode.accept_len, ""),
        ("accept rate", decode.accept_rate, ""),
    ):
        if values:
            lines.append(
                f"  {name:<15} last {values[-1]:.2f}{unit}, mean {fmean(values):.2f}, "
                f"min {min(values):.2f}, max {max(values):.2f} (last {len(values)} samples)"
            )
    return lines


def report_text(snapshot: Snapshot) -> str:
    """The replay report for a terminal: summary, failure, per-rank timeline, decode figures."""
    parts = [
        *_summary(snapshot),
        *_failure_text(snapshot.failure),
        *_timeline(snapshot),
        *_decode_text(snapshot),
    ]
    return "\n".join(parts) + "\n"
