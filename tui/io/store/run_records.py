"""The app's run records: each start-up it watched, the benchmarks against it, and the runs the
comparison view reads back.

Everything goes to the history file ``bringup runs`` reads (``tui.io.store.run_store``). The
plain functions block on sqlite; :class:`RunRecorder` calls them in a thread.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from tui.engine.bench.level_figures import LevelFigures
from tui.engine.bench.level_key import LevelKey
from tui.engine.bench.run_compare import BenchLevel, RunColumn, newest_levels
from tui.engine.logs.sanitize import sanitize_line
from tui.engine.startup.snapshot import Snapshot
from tui.engine.startup.vocabulary import Outcome
from tui.engine.timing.estimate import run_record
from tui.engine.timing.fingerprint import Fingerprint, fingerprint_of
from tui.io.store.run_store import RunStore, StoredRun

RUNS_SHOWN = 8
"""The comparison shows at most this many runs, the newest."""
_SCAN = 500


@dataclass(frozen=True, slots=True)
class BenchMeta:
    """What is stored beside each level's fields."""

    profile: str | None
    url: str
    endpoint: str
    model: str | None
    recorded_at: float


def run_fingerprint(snapshot: Snapshot, host: str | None) -> Fingerprint:
    return fingerprint_of(snapshot.server, host=host)


def record_run(
    data_dir: Path | None, snapshot: Snapshot, profile: str | None, host: str | None
) -> int:
    """Store the start-up ``snapshot`` describes (its stage times and fingerprint); its id."""
    record = run_record(
        run_fingerprint(snapshot, host), snapshot, recorded_at=time.time(), profile=profile
    )
    with RunStore.open_default(configured=data_dir) as store:
        return store.add_run(record)


RunKey = tuple[int, float | None]


def run_key(snapshot: Snapshot) -> RunKey:
    """What tells one start-up from the next in the same log."""
    return (snapshot.runs_before, snapshot.started_at)


class RunRecorder:
    """The history id of each start-up the app watched, storing each run once.

    A run is known by its ``runs_before`` and start time; a run asked for twice at once is
    stored once (the second caller waits for the first)."""

    def __init__(self, data_dir: Path | None, profile: str | None, host: str | None) -> None:
        self.data_dir = data_dir
        self.profile = profile
        self.host = host
        self.ids: dict[RunKey, int | None] = {}
        self._lock = asyncio.Lock()

    def noted(self, snapshot: Snapshot) -> bool:
        """Whether ``snapshot``'s run was already asked for (stored or being stored)."""
        return run_key(snapshot) in self.ids

    def note(self, snapshot: Snapshot) -> None:
        """Mark ``snapshot``'s run as asked for before its id is known."""
        self.ids.setdefault(run_key(snapshot), None)

    async def run_id(self, snapshot: Snapshot) -> int:
        """The id of ``snapshot``'s run, stored the first time (``StoreError`` if it cannot)."""
        key = run_key(snapshot)
        async with self._lock:
            found = self.ids.get(key)
            if found is None:
                found = await asyncio.to_thread(
                    record_run, self.data_dir, snapshot, self.profile, self.host
                )
                self.ids[key] = found
            return found


def save_levels(
    data_dir: Path | None, run_id: int | None, levels: Sequence[LevelFigures], meta: BenchMeta
) -> list[int]:
    """Store each level of one benchmark against run ``run_id``; their ids."""
    with RunStore.open_default(configured=data_dir) as store:
        return [_add(store, run_id, figures, meta) for figures in levels]


def _add(store: RunStore, run_id: int | None, figures: LevelFigures, meta: BenchMeta) -> int:
    return store.add_bench(
        figures, recorded_at=meta.recorded_at, run_id=run_id, profile=meta.profile,
        url=meta.url, endpoint=meta.endpoint, model=meta.model,
    )  # fmt: skip


@dataclass(frozen=True, slots=True)
class Scope:
    """Which runs to compare: those of a profile, or those of a model."""

    kind: str
    """``profile`` or ``model``."""
    value: str

    @property
    def label(self) -> str:
        return f"{self.kind} {sanitize_line(self.value)}"


def _column(run: StoredRun, levels: Mapping[LevelKey, LevelFigures]) -> RunColumn:
    record = run.record
    when = time.strftime("%m-%d %H:%M", time.localtime(record.recorded_at))
    return RunColumn(
        run_id=run.id,
        label=f"#{run.id} {when}",
        recorded_at=record.recorded_at,
        startup_seconds=record.total_seconds,
        levels=levels,
        launch=sanitize_line(record.fingerprint.label),
    )


def load_columns(data_dir: Path | None, scope: Scope, limit: int = RUNS_SHOWN) -> list[RunColumn]:
    """The newest runs of ``scope`` that reached ready or were benchmarked, oldest first."""
    with RunStore.open_default(configured=data_dir) as store:
        if scope.kind == "profile":
            runs = store.runs(profile=scope.value, limit=_SCAN)
        else:
            runs = [r for r in store.runs(limit=_SCAN) if r.record.fingerprint.model == scope.value]
        wanted = {run.id for run in runs}
        benches = [b for b in store.bench_results() if b.run_id in wanted]
    levels = newest_levels(
        BenchLevel(b.run_id, b.concurrency, b.recorded_at, b.result) for b in benches
    )
    shown = [run for run in runs if run.id in levels or run.record.outcome is Outcome.READY][:limit]
    return [_column(run, levels.get(run.id, {})) for run in reversed(shown)]
