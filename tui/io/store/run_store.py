"""Run history: start-ups and benchmark results in one sqlite file.

The file is the one ``tui.io.store.history_store`` uses: ``bringup.sqlite3`` in
``$BRINGUP_DATA_DIR``,
else the configuration's ``data_dir``, else ``$XDG_DATA_HOME/bringup`` (by default
``~/.local/share/bringup``). Start-up runs and their per-rank stage times are written by
``history_store`` (tables ``startup_runs`` and ``startup_stages``); this module adds the
benchmark results, versioned with sqlite's ``user_version``: older files are migrated forward
when opened, and a file written by a newer ``bringup`` is refused rather than damaged.

``history`` and ``stage_durations`` answer the start-up estimate's question "how long did this
stage take in past runs of the same launch?"; ``runs`` lists runs with their ids so benchmark
results can be attached to them.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from tui.engine.bench.level_fields import level_fields, level_from_fields
from tui.engine.bench.level_figures import LevelFigures
from tui.engine.startup.vocabulary import FailureKind, Outcome, Stage
from tui.engine.timing.estimate import RunRecord, StageKey, StageSample
from tui.engine.timing.fingerprint import Fingerprint
from tui.io.store import history_store

SCHEMA_VERSION = 1
_BENCH_SCHEMA = """
CREATE TABLE IF NOT EXISTS bench_results (
    id INTEGER PRIMARY KEY,
    run_id INTEGER REFERENCES startup_runs (id) ON DELETE SET NULL,
    profile TEXT,
    url TEXT,
    endpoint TEXT,
    model TEXT,
    concurrency INTEGER NOT NULL,
    recorded_at REAL NOT NULL,
    result TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS bench_by_run ON bench_results (run_id);
"""
_MIGRATIONS: dict[int, str] = {0: _BENCH_SCHEMA}
T = TypeVar("T")


class StoreError(Exception):
    """The history file cannot be opened or used; the message names the file."""


def database_file(env: Mapping[str, str] | None = None, configured: Path | None = None) -> Path:
    """The history file: ``$BRINGUP_DATA_DIR``, else ``configured`` (the configuration's
    ``data_dir``), else the XDG data folder; the file name is ``history_store``'s."""
    env = os.environ if env is None else env
    name = history_store.DATABASE_NAME
    if env.get("BRINGUP_DATA_DIR"):
        return Path(env["BRINGUP_DATA_DIR"]).expanduser() / name
    if configured is not None:
        return configured / name
    xdg = env.get("XDG_DATA_HOME", "")
    if xdg and Path(xdg).is_absolute():
        return Path(xdg) / "bringup" / name
    home = Path(env["HOME"]) if env.get("HOME") else Path.home()
    return home / ".local" / "share" / "bringup" / name


@dataclass(frozen=True, slots=True)
class StoredRun:
    """A run read back from the store."""

    id: int
    record: RunRecord


@dataclass(frozen=True, slots=True)
class StoredBench:
    """One benchmark level read back, its figures typed."""

    id: int
    run_id: int | None
    profile: str | None
    url: str | None
    endpoint: str | None
    model: str | None
    concurrency: int
    recorded_at: float
    result: LevelFigures


class RunStore:
    """The history database. Safe to share between threads; each call is one transaction."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(path, check_same_thread=False, timeout=5.0)
        except (sqlite3.Error, OSError) as exc:
            raise StoreError(f"{path}: {exc}") from None
        try:
            history_store.ensure_schema(self._db)
            self._migrate()
        except StoreError:
            self._db.close()
            raise
        except sqlite3.Error as exc:
            self._db.close()
            raise StoreError(f"{path}: {exc}") from None

    @classmethod
    def open_default(
        cls, env: Mapping[str, str] | None = None, configured: Path | None = None
    ) -> RunStore:
        return cls(database_file(env, configured))

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def _migrate(self) -> None:
        (version,) = self._db.execute("PRAGMA user_version").fetchone()
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"{self.path}: written by a newer bringup (schema {version}, "
                f"this one reads up to {SCHEMA_VERSION})"
            )
        for start in range(version, SCHEMA_VERSION):
            self._db.executescript(
                f"BEGIN; {_MIGRATIONS[start]} PRAGMA user_version = {start + 1}; COMMIT;"
            )
        self._db.commit()

    def _guarded(self, call: Callable[[sqlite3.Connection], T]) -> T:
        """``call(db)`` under the lock, its sqlite errors as a ``StoreError`` naming the file."""
        with self._lock:
            try:
                return call(self._db)
            except sqlite3.Error as exc:
                raise StoreError(f"{self.path}: {exc}") from None

    def _write(self, sql: str, args: Sequence[object]) -> int:
        """Run one insert in its own transaction; returns the new row id."""

        def insert(db: sqlite3.Connection) -> int:
            with db:
                return db.execute(sql, args).lastrowid or 0

        return self._guarded(insert)

    def _read(self, sql: str, args: Sequence[object] = ()) -> list[tuple[Any, ...]]:
        return self._guarded(lambda db: db.execute(sql, args).fetchall())

    def add_run(self, record: RunRecord) -> int:
        """Store a finished (or abandoned) start-up; returns its id."""
        return self._guarded(lambda db: history_store.add_run(db, record))

    def runs(self, profile: str | None = None, limit: int | None = None) -> list[StoredRun]:
        """Runs, newest first, optionally of one profile."""
        rows = self._guarded(
            lambda db: history_store.run_rows(db, profile=profile, limit=limit or None)
        )
        return self._with_samples(rows)

    def history(
        self, model: str | None, limit: int = history_store.SIMILAR_LIMIT
    ) -> list[RunRecord]:
        """Past runs of ``model`` (every run when None), oldest first, for start-up estimates."""
        return self._guarded(lambda db: history_store.runs(db, model=model, limit=limit))

    def stage_durations(self, fingerprint: Fingerprint) -> dict[StageKey, list[float]]:
        """Per stage, the slowest rank's seconds in each past run with this exact fingerprint."""
        rows = self._read(
            "SELECT t.stage, t.draft, MAX(t.seconds) FROM startup_stages t JOIN startup_runs r "
            "ON r.id = t.run_id WHERE r.fingerprint_key = ? "
            "GROUP BY t.run_id, t.stage, t.draft ORDER BY r.recorded_at",
            [fingerprint.key],
        )
        durations: dict[StageKey, list[float]] = {}
        for stage, draft, seconds in rows:
            if stage in _STAGES and _is_number(seconds):
                durations.setdefault((Stage(stage), bool(draft)), []).append(float(seconds))
        return durations

    def _with_samples(self, rows: list[tuple[Any, ...]]) -> list[StoredRun]:
        ids = [row[0] for row in rows]
        samples = self._guarded(lambda db: history_store.stage_samples(db, ids))
        return [_run(row, tuple(samples.get(row[0], ()))) for row in rows]

    def add_bench(
        self,
        figures: LevelFigures,
        *,
        recorded_at: float,
        run_id: int | None = None,
        profile: str | None = None,
        url: str | None = None,
        endpoint: str | None = None,
        model: str | None = None,
    ) -> int:
        """Store one benchmark level, as its flat ``level_fields`` in JSON."""
        concurrency = figures.concurrency
        return self._write(
            "INSERT INTO bench_results (run_id, profile, url, endpoint, model, concurrency, "
            "recorded_at, result) VALUES (?,?,?,?,?,?,?,?)",
            [run_id, profile, url, endpoint, model, concurrency, recorded_at,
             json.dumps(level_fields(figures), default=str)],
        )  # fmt: skip

    def bench_results(
        self, run_id: int | None = None, profile: str | None = None
    ) -> list[StoredBench]:
        """Benchmark levels, newest first, of one run or one profile or all."""
        clause, args = history_store.where((("run_id", run_id), ("profile", profile)))
        rows = self._read(
            "SELECT id, run_id, profile, url, endpoint, model, concurrency, recorded_at, result "
            f"FROM bench_results{clause} ORDER BY recorded_at DESC, id DESC",
            args,
        )
        return [_bench(row) for row in rows]


_STAGES = {stage.value for stage in Stage}
_OUTCOMES = {outcome.value for outcome in Outcome}
_FAILURES = {kind.value for kind in FailureKind}


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _bench(row: tuple[Any, ...]) -> StoredBench:
    bench_id, run_id, profile, url, endpoint, model, concurrency, recorded_at, result = row
    return StoredBench(
        bench_id, run_id, profile, url, endpoint, model, concurrency, recorded_at,
        level_from_fields(_json_object(result), concurrency),
    )  # fmt: skip


def _json_object(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _run(row: tuple[Any, ...], samples: tuple[StageSample, ...]) -> StoredRun:
    run_id, fingerprint, profile, outcome, failure, total, recorded_at = row
    try:
        fp = Fingerprint.from_json(str(fingerprint))
    except ValueError:
        fp = Fingerprint()
    record = RunRecord(
        fingerprint=fp,
        outcome=Outcome(outcome) if outcome in _OUTCOMES else Outcome.INCOMPLETE,
        total_seconds=float(total) if _is_number(total) else None,
        samples=samples,
        recorded_at=float(recorded_at) if _is_number(recorded_at) else 0.0,
        profile=profile if isinstance(profile, str) else None,
        failure=FailureKind(failure) if failure in _FAILURES else None,
    )
    return StoredRun(run_id, record)
