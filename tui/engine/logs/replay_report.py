"""A finished log as a report: one JSON object, or a plain-text timeline for people.

Both read a ``Snapshot``; ``replay_chunks`` produces it from bytes through ``LogEngine``, the
same path the live monitor uses.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from statistics import fmean, median
from typing import Any

from tui.engine.logs.log_engine import LogEngine
from tui.engine.startup.snapshot import Failure, RankState, Snapshot, StageSpan
from tui.engine.startup.vocabulary import Phase, Stage


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
    head = f"failure   {failure.kind.label}{where} at line {failure.line}{during}"
    lines = ["", head, *(f"  | {line}" for line in failure.excerpt.splitlines())]
    if failure.setting:
        lines.append(f"          to wait longer, raise {failure.setting}")
    return lines


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


# Ranks whose timelines are the same list of stages (each finished or not) and phases print as
# one group: a DP16 server is one block with the spread of its durations, not sixteen blocks.
TimelineKey = tuple[tuple[tuple[Stage, bool, bool], ...], tuple[Phase, ...]]
TAGS_SHOWN = 72
"""Characters of a group's rank list before it is shortened to its first and last ranks."""


def timeline_key(rank: RankState) -> TimelineKey:
    """What two ranks must share to print as one row group: stages in order and phases."""
    stages = tuple((span.stage, span.draft, span.seconds is None) for span in rank.history)
    return stages, tuple(sorted({done.phase for done in rank.phases}))


def rank_groups(ranks: Sequence[RankState]) -> list[list[RankState]]:
    """The ranks grouped by identical timelines, each group where its first rank was."""
    groups: dict[TimelineKey, list[RankState]] = {}
    for rank in ranks:
        groups.setdefault(timeline_key(rank), []).append(rank)
    return list(groups.values())


def _spread(values: Sequence[float]) -> str:
    """One figure, or min / median / max of several."""
    if len(values) == 1:
        return f"{values[0]:.1f}"
    return f"{min(values):.1f} / {median(values):.1f} / {max(values):.1f}"


def _phase_totals(rank: RankState) -> dict[Phase, tuple[float, int]]:
    totals: dict[Phase, tuple[float, int]] = {}
    for done in rank.phases:  # compile and JIT phases, inside the stages above
        took, units = totals.get(done.phase, (0.0, 0))
        totals[done.phase] = (took + done.seconds, units + done.steps)
    return totals


def _tags(group: Sequence[RankState]) -> str:
    text = ", ".join(rank.tag for rank in group)
    if len(text) <= TAGS_SHOWN:
        return text
    return f"{group[0].tag}, {group[1].tag}, … {group[-1].tag}"


def _group_rows(group: Sequence[RankState], width: int) -> list[str]:
    first = group[0]
    rows = []
    for index, span in enumerate(first.history):
        tag = "" if index else first.tag if len(group) == 1 else f"{len(group)} ranks"
        label = span.stage.label + (" (draft)" if span.draft else "")
        starts = [text for rank in group if (text := rank.history[index].start_text)]
        took = [s for rank in group if (s := rank.history[index].seconds) is not None]
        seconds = _spread(took) if took else "…"
        start = min(starts) if starts else "-"
        rows.append(f"{tag:<{width}} {label:<24} {start:<23} {seconds:>{_SECONDS}}")
    totals = [_phase_totals(rank) for rank in group]
    for phase in totals[0]:
        units = sorted({each[phase][1] for each in totals})
        count = _count(units[0], "unit") if len(units) == 1 else f"{units[0]}-{units[-1]} units"
        text = f"  {phase.label} ({count})"
        rows.append(
            f"{'':<{width}} {text:<48} {_spread([each[phase][0] for each in totals]):>{_SECONDS}}"
        )
    if len(group) > 1:
        rows.append(f"{'':<{width}}   ranks: {_tags(group)}")
    return rows


_SECONDS = 23


def _timeline(snapshot: Snapshot) -> list[str]:
    if not snapshot.ranks:
        return ["", "timeline  no rank printed a recognisable line"]
    groups = rank_groups(snapshot.ranks)
    width = max(16, *(len(group[0].tag) for group in groups))
    header = f"{'RANK':<{width}} {'STAGE':<24} {'START (log time)':<23} {'SECONDS':>{_SECONDS}}"
    rows = [row for group in groups for row in _group_rows(group, width)]
    notes = ["(… = the stage the rank was in when the log ended)"]
    if any(len(group) > 1 for group in groups):
        notes.append(
            "(N ranks = ranks with the same stages: earliest start, seconds min / median / max)"
        )
    return ["", header, *rows, *notes]


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
