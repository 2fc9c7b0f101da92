"""``bringup runs``: list or export recorded start-ups and benchmark results.

``--json`` exports every run with its stage times and attached benchmark levels, plus the
benchmark levels not attached to a run; ``--csv`` writes one row per run, or per benchmark
level with ``--benchmarks``.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import io
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tui.commands.bench_table import number_text
from tui.commands.exit_codes import ExitStatus
from tui.commands.json_time import SCHEMA_VERSION
from tui.commands.runs_compare import compare_text, sessions
from tui.config import ConfigError, load_config
from tui.engine.bench.level_fields import level_fields
from tui.engine.bench.level_figures import LevelFigures
from tui.engine.logs.sanitize import sanitize_line
from tui.io.store.run_store import RunStore, StoredBench, StoredRun, StoreError

RUN_COLUMNS = (
    "id", "recorded_at", "profile", "outcome", "failure", "total_seconds", "engine", "version",
    "model", "drafter", "speculative", "tp", "dp", "ep", "pp", "nodes", "gpu", "host",
)  # fmt: skip
BENCH_COLUMNS = ("id", "run_id", "recorded_at", "profile", "url", "endpoint", "model")
BENCH_METRICS = (
    "max_concurrency", "completed", "failed", "duration", "request_throughput",
    "output_throughput", "mean_ttft_ms", "median_ttft_ms", "p99_ttft_ms", "mean_tpot_ms",
    "median_tpot_ms", "p99_tpot_ms", "mean_itl_ms", "median_itl_ms", "p99_itl_ms",
    "mean_e2el_ms", "median_e2el_ms", "p99_e2el_ms", "median_decode_tok_s", "accept_length",
    "token_mismatches", "server_accept_length", "server_accept_basis", "log_accept_length",
    "log_accept_samples", "total_output_tokens", "client_output_tokens", "source",
)  # fmt: skip


# Benchmark table columns: figure, decimals, width.
_METRICS: tuple[tuple[Callable[[LevelFigures], float | None], int, int], ...] = (
    (lambda f: f.request_throughput, 2, 7), (lambda f: f.output_throughput, 1, 8),
    (lambda f: f.ttft_ms.median, 1, 8), (lambda f: f.tpot_ms.median, 2, 8),
    (lambda f: f.accept_length, 2, 6),
)  # fmt: skip


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "runs",
        help="list or export recorded runs",
        description="List or export recorded start-ups and benchmark results.",
    )
    parser.add_argument("profile", nargs="?", metavar="PROFILE", help="only runs of this profile")
    parser.add_argument("--profile", dest="profile_option", help=argparse.SUPPRESS)
    parser.add_argument("--config", type=Path, help="configuration file (for its data_dir)")
    parser.add_argument("--limit", type=int, help="only the newest N runs")
    parser.add_argument("--benchmarks", action="store_true", help="list benchmark levels")
    parser.add_argument(
        "--compare",
        action="store_true",
        help="compare the newest benchmark sessions (--limit, default 2) against their noise",
    )
    form = parser.add_mutually_exclusive_group()
    form.add_argument("--json", action="store_true", help="export as JSON")
    form.add_argument("--csv", action="store_true", help="export as CSV")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    args.profile = args.profile or getattr(args, "profile_option", None)
    try:
        config = load_config(args.config)
        with RunStore.open_default(configured=config.data_dir) as store:
            runs = store.runs(profile=args.profile, limit=args.limit)
            benches = store.bench_results(profile=args.profile)
    except (ConfigError, StoreError) as exc:
        print(f"bringup runs: {exc}", file=sys.stderr)
        return ExitStatus.CONFIG
    if getattr(args, "compare", False):
        print(compare_text(sessions(benches, args.limit or 2)))
    elif args.json:
        head = {"schema_version": SCHEMA_VERSION, "t": round(time.time(), 6)}
        print(json.dumps(head | export(runs, benches), indent=2))
    elif args.csv:
        sys.stdout.write(bench_csv(benches) if args.benchmarks else runs_csv(runs))
    else:
        print(bench_table(benches) if args.benchmarks else runs_table(runs, benches))
    return ExitStatus.OK


def run_row(run: StoredRun) -> dict[str, Any]:
    record = run.record
    row: dict[str, Any] = dataclasses.asdict(record.fingerprint)
    row |= {
        "id": run.id,
        "recorded_at": record.recorded_at,
        "profile": record.profile,
        "outcome": record.outcome.value,
        "failure": record.failure.value if record.failure else None,
        "total_seconds": record.total_seconds,
    }
    return {column: row.get(column) for column in RUN_COLUMNS}


def bench_row(bench: StoredBench) -> dict[str, Any]:
    row = {column: getattr(bench, column) for column in BENCH_COLUMNS}
    fields = level_fields(bench.result)
    return row | {metric: fields.get(metric) for metric in BENCH_METRICS}


def _exported(bench: StoredBench) -> dict[str, Any]:
    """A stored level as exported: its saved fields, then its row."""
    return level_fields(bench.result) | bench_row(bench)


def export(runs: list[StoredRun], benches: list[StoredBench]) -> dict[str, Any]:
    """Everything as JSON-ready data: runs with stages and benchmarks, then loose benchmarks."""
    by_run: dict[int, list[dict[str, Any]]] = {}
    for bench in benches:
        if bench.run_id is not None:
            by_run.setdefault(bench.run_id, []).append(_exported(bench))
    listed = {run.id for run in runs}
    exported = []
    for run in runs:
        stages = [dataclasses.asdict(sample) for sample in run.record.samples]
        exported.append(run_row(run) | {"stages": stages, "benchmarks": by_run.get(run.id, [])})
    loose = [_exported(b) for b in benches if b.run_id not in listed]
    return {"runs": exported, "benchmarks": loose}


def _csv(columns: tuple[str, ...], rows: list[dict[str, Any]]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: sanitize_line(v) if isinstance(v, str) else v for k, v in row.items()})
    return out.getvalue()


def runs_csv(runs: list[StoredRun]) -> str:
    return _csv(RUN_COLUMNS, [run_row(run) for run in runs])


def bench_csv(benches: list[StoredBench]) -> str:
    return _csv((*BENCH_COLUMNS, *BENCH_METRICS), [bench_row(bench) for bench in benches])


def _when(epoch: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(epoch))


def runs_table(runs: list[StoredRun], benches: list[StoredBench]) -> str:
    if not runs:
        return "no runs recorded"
    counts: dict[int | None, int] = {}
    for bench in benches:
        counts[bench.run_id] = counts.get(bench.run_id, 0) + 1
    lines = [f"{'id':>5}  {'when':<16}  {'profile':<12}  {'outcome':<10}  {'start-up':>8}  "
             "bench  launch"]  # fmt: skip
    for run in runs:
        r = run.record
        total = f"{r.total_seconds:.0f}s" if r.total_seconds is not None else "-"
        outcome = r.outcome.value + (f":{r.failure.value}" if r.failure else "")
        lines.append(
            f"{run.id:>5}  {_when(r.recorded_at):<16}  {sanitize_line(r.profile or '-'):<12}  "
            f"{outcome:<10}  {total:>8}  {counts.get(run.id, 0):>5}  "
            f"{sanitize_line(r.fingerprint.label)}"
        )
    return "\n".join(lines)


def bench_table(benches: list[StoredBench]) -> str:
    if not benches:
        return "no benchmark results recorded"
    lines = [f"{'id':>5}  {'when':<16}  {'c':>4}  {'req/s':>7}  {'tok/s':>8}  "
             f"{'TTFT ms':>8}  {'TPOT ms':>8}  {'accept':>6}  model"]  # fmt: skip
    for b in benches:
        figures = "  ".join(f"{number_text(read(b.result), d):>{w}}" for read, d, w in _METRICS)
        lines.append(
            f"{b.id:>5}  {_when(b.recorded_at):<16}  {b.concurrency:>4}  {figures}  "
            f"{sanitize_line(b.model or '-')}"
        )
    return "\n".join(lines)
