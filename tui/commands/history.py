"""``bringup history [PROFILE] [--json]``: how long past start-ups took, per launch fingerprint.

For each fingerprint: the number of runs and how they ended, the median and p95 of the whole
start-up and of each stage (ready runs only, outliers set aside), and the trend of the last three
ready runs against the earlier ones.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
import time
from collections import Counter
from collections.abc import Sequence
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tui.commands.exit_codes import ExitStatus
from tui.commands.json_time import SCHEMA_VERSION
from tui.config import ConfigError, load_config
from tui.engine.logs.sanitize import clean_segment
from tui.engine.startup.vocabulary import Outcome
from tui.engine.timing.estimate import RunRecord, StageKey, clock_label, from_runs
from tui.engine.timing.fingerprint import Fingerprint
from tui.engine.timing.spread import Spread, percentile
from tui.io.store.history_store import runs
from tui.io.store.run_store import database_file

RECENT = 3


@dataclass(frozen=True, slots=True)
class Trend:
    """The median start-up of the newest ready runs against the ones before them."""

    recent_runs: int
    recent_median: float
    earlier_runs: int
    earlier_median: float

    @property
    def change(self) -> float:
        return self.recent_median / self.earlier_median - 1.0 if self.earlier_median > 0 else 0.0


@dataclass(frozen=True, slots=True)
class Summary:
    """Everything ``bringup history`` says about one fingerprint."""

    fingerprint: Fingerprint
    outcomes: Counter[str]
    failures: Counter[str]
    total: Spread | None
    stages: tuple[tuple[StageKey, Spread], ...]
    trend: Trend | None
    last_recorded_at: float


def summarize(records: Sequence[RunRecord]) -> list[Summary]:
    """One summary per fingerprint, the most recently used first."""
    groups: dict[Fingerprint, list[RunRecord]] = {}
    for record in sorted(records, key=lambda r: r.recorded_at):
        groups.setdefault(record.fingerprint, []).append(record)
    summaries = [_summary(fp, group) for fp, group in groups.items()]
    return sorted(summaries, key=lambda s: s.last_recorded_at, reverse=True)


def _summary(fingerprint: Fingerprint, group: list[RunRecord]) -> Summary:
    ready = [r for r in group if r.outcome is Outcome.READY]
    expectations = from_runs(ready) if ready else None
    has_total = any(r.total_seconds is not None for r in ready)
    return Summary(
        fingerprint=fingerprint,
        outcomes=Counter(r.outcome.value for r in group),
        failures=Counter(r.failure.value for r in group if r.failure is not None),
        total=expectations.total if expectations and has_total else None,
        stages=expectations.stages if expectations else (),
        trend=trend([r.total_seconds for r in ready if r.total_seconds is not None]),
        last_recorded_at=group[-1].recorded_at,
    )


def trend(totals: Sequence[float], recent: int = RECENT) -> Trend | None:
    """Median of the last ``recent`` totals against the median of the earlier ones."""
    if len(totals) <= recent:
        return None
    new, old = sorted(totals[-recent:]), sorted(totals[:-recent])
    return Trend(len(new), percentile(new, 50), len(old), percentile(old, 50))


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "history",
        help="how long past start-ups took, per launch fingerprint",
        description=__doc__.splitlines()[0] if __doc__ else None,
    )
    parser.add_argument("profile", nargs="?", metavar="PROFILE", help="only runs of this profile")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.add_argument(
        "--config",
        type=Path,
        metavar="PATH",
        help="configuration file, for its data_dir (default: $BRINGUP_CONFIG or the XDG file)",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    try:
        path = database_file(configured=load_config(args.config).data_dir)
    except ConfigError as error:
        print(f"bringup history: {error}", file=sys.stderr)
        return ExitStatus.CONFIG
    records: list[RunRecord] = []
    if path.is_file():
        try:
            with closing(sqlite3.connect(path)) as db:
                records = runs(db, profile=args.profile)
        except sqlite3.Error as error:
            print(f"bringup history: cannot read {path}: {error}", file=sys.stderr)
            return ExitStatus.CONFIG
    summaries = summarize(records)
    if args.json:
        fingerprints = [to_json(s) for s in summaries]
        document = {"schema_version": SCHEMA_VERSION, "t": round(time.time(), 6),
                    "profile": args.profile, "fingerprints": fingerprints}  # fmt: skip
        print(json.dumps(document, indent=2))
    elif not summaries:
        where = f" for profile {clean_segment(args.profile)!r}" if args.profile else ""
        print(f"No start-up history{where} yet: runs are recorded when they finish starting.")
    else:
        print("\n\n".join(to_text(s) for s in summaries))
    return ExitStatus.OK


def to_json(summary: Summary) -> dict[str, Any]:
    fp = summary.fingerprint
    return {
        "key": fp.key,
        "label": fp.label,
        "fingerprint": json.loads(fp.to_json()),
        "runs": sum(summary.outcomes.values()),
        "outcomes": dict(summary.outcomes),
        "failures": dict(summary.failures),
        "total": _spread_json(summary.total) if summary.total else None,
        "stages": [
            {"stage": stage.value, "draft": draft, **_spread_json(spread)}
            for (stage, draft), spread in summary.stages
        ],
        "trend": _trend_json(summary.trend) if summary.trend else None,
        "last_recorded_at": summary.last_recorded_at,
    }


def _spread_json(spread: Spread) -> dict[str, float]:
    return {"median": spread.median, "p10": spread.low, "p95": spread.high}


def _trend_json(trend: Trend) -> dict[str, float]:
    return {
        "recent_runs": trend.recent_runs,
        "recent_median": trend.recent_median,
        "earlier_runs": trend.earlier_runs,
        "earlier_median": trend.earlier_median,
        "change": trend.change,
    }


def to_text(summary: Summary) -> str:
    lines = [clean_segment(summary.fingerprint.label), "  " + _runs_line(summary)]
    if summary.total is not None:
        total = summary.total
        lines.append(
            f"  start-up: median {clock_label(total.median)}, p95 {clock_label(total.high)}"
            + (f"   trend: {_trend_text(summary.trend)}" if summary.trend else "")
        )
    if summary.stages:
        lines.append(f"  {'stage':<20}{'median':>9}{'p95':>9}")
        for (stage, draft), spread in summary.stages:
            name = ("draft " if draft else "") + stage.label
            lines.append(
                f"  {name:<20}{clock_label(spread.median):>9}{clock_label(spread.high):>9}"
            )
    return "\n".join(lines)


def _runs_line(summary: Summary) -> str:
    count = sum(summary.outcomes.values())
    parts = [f"{n} {outcome}" for outcome, n in sorted(summary.outcomes.items())]
    failures = ", ".join(f"{kind} {n}" for kind, n in sorted(summary.failures.items()))
    return f"runs: {count} ({', '.join(parts)})" + (f"; failures: {failures}" if failures else "")


def _trend_text(trend: Trend) -> str:
    sign = "+" if trend.change >= 0 else "-"
    direction = "slower" if trend.change > 0.02 else "faster" if trend.change < -0.02 else "steady"
    return (
        f"{direction}, last {trend.recent_runs} {sign}{abs(trend.change):.0%}"
        f" vs {trend.earlier_runs} earlier"
    )
