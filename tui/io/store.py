"""Run history: start-ups and benchmark results in one sqlite file.

The file is ``runs.db`` in ``$BRINGUP_DATA_DIR``, else the configuration's ``data_dir``, else
``$XDG_DATA_HOME/bringup`` (by default ``~/.local/share/bringup``). The schema version is kept
in sqlite's ``user_version``; older files are migrated forward when opened, and a file written
by a newer ``bringup`` is refused rather than damaged.

A run is a ``RunRecord`` (``tui.engine.estimate``): the launch fingerprint, the outcome and each
rank's time in each stage. ``history`` and ``stage_durations`` answer the start-up estimate's
question "how long did this stage take in past runs of the same launch?".
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tui.engine.estimate import RunRecord, StageKey, StageSample
from tui.engine.fingerprint import Fingerprint
from tui.engine.stages import FailureKind, Outcome, Stage

SCHEMA_VERSION = 1
_SCHEMA = """
CREATE TABLE runs (
    id INTEGER PRIMARY KEY,
    profile TEXT,
    fingerprint_key TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    engine TEXT, version TEXT, model TEXT, drafter TEXT, speculative TEXT,
    tp INTEGER, dp INTEGER, ep INTEGER, pp INTEGER, nodes INTEGER, gpu TEXT, host TEXT,
    outcome TEXT NOT NULL,
    failure TEXT,
    total_seconds REAL,
    recorded_at REAL NOT NULL
);
CREATE INDEX runs_by_fingerprint ON runs (fingerprint_key, recorded_at);
CREATE INDEX runs_by_model ON runs (model, recorded_at);
CREATE TABLE stage_times (
    run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    rank TEXT NOT NULL,
    stage TEXT NOT NULL,
    draft INTEGER NOT NULL,
    seconds REAL NOT NULL
);
CREATE INDEX stage_times_by_run ON stage_times (run_id);
CREATE TABLE bench_results (
    id INTEGER PRIMARY KEY,
    run_id INTEGER REFERENCES runs (id) ON DELETE SET NULL,
    profile TEXT,
    url TEXT,
    endpoint TEXT,
    model TEXT,
    concurrency INTEGER NOT NULL,
    recorded_at REAL NOT NULL,
    result TEXT NOT NULL
);
CREATE INDEX bench_by_run ON bench_results (run_id);
"""
_MIGRATIONS: dict[int, str] = {0: _SCHEMA}
_RUN_COLUMNS = "id, profile, fingerprint, outcome, failure, total_seconds, recorded_at"
_BATCH = 500


class StoreError(Exception):
    """The history file cannot be opened or used; the message names the file."""


def data_dir(env: Mapping[str, str] | None = None, configured: Path | None = None) -> Path:
    """Where ``runs.db`` lives (see the module docstring for the order)."""
    env = os.environ if env is None else env
    if env.get("BRINGUP_DATA_DIR"):
        return Path(env["BRINGUP_DATA_DIR"]).expanduser()
    if configured is not None:
        return configured
    xdg = env.get("XDG_DATA_HOME", "")
    if xdg and Path(xdg).is_absolute():
        return Path(xdg) / "bringup"
    home = Path(env["HOME"]) if env.get("HOME") else Path.home()
    return home / ".local" / "share" / "bringup"


@dataclass(frozen=True, slots=True)
class StoredRun:
    """A run read back from the store."""

    id: int
    record: RunRecord


@dataclass(frozen=True, slots=True)
class StoredBench:
    """One benchmark level read back: ``result`` holds the ``result_fields`` names."""

    id: int
    run_id: int | None
    profile: str | None
    url: str | None
    endpoint: str | None
    model: str | None
    concurrency: int
    recorded_at: float
    result: dict[str, Any]


class RunStore:
    """The history database. Safe to share between threads; each call is one transaction."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        except (sqlite3.Error, OSError) as exc:
            raise StoreError(f"{path}: {exc}") from None
        try:
            self._db.execute("PRAGMA foreign_keys = ON")
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
        return cls(data_dir(env, configured) / "runs.db")

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

    def _write(self, statements: Sequence[tuple[str, Sequence[object]]]) -> int:
        """Run ``statements`` in one transaction; the last row id of the first one."""
        with self._lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")
                cursor = self._db.execute(*statements[0])
                row_id = cursor.lastrowid or 0
                for sql, args in statements[1:]:
                    self._db.execute(sql, [row_id if a is _ROW else a for a in args])
                self._db.execute("COMMIT")
            except sqlite3.Error as exc:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise StoreError(f"{self.path}: {exc}") from None
        return row_id

    def _read(self, sql: str, args: Sequence[object] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            try:
                return self._db.execute(sql, args).fetchall()
            except sqlite3.Error as exc:
                raise StoreError(f"{self.path}: {exc}") from None

    def add_run(self, record: RunRecord) -> int:
        """Store a finished (or abandoned) start-up; returns its id."""
        fp = record.fingerprint
        insert = (
            "INSERT INTO runs (profile, fingerprint_key, fingerprint, engine, version, model, "
            "drafter, speculative, tp, dp, ep, pp, nodes, gpu, host, outcome, failure, "
            "total_seconds, recorded_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            [record.profile, fp.key, fp.to_json(), fp.engine, fp.version, fp.model, fp.drafter,
             fp.speculative, fp.tp, fp.dp, fp.ep, fp.pp, fp.nodes, fp.gpu, fp.host,
             record.outcome.value, record.failure.value if record.failure else None,
             record.total_seconds, record.recorded_at],
        )  # fmt: skip
        stages = [
            (
                "INSERT INTO stage_times (run_id, rank, stage, draft, seconds) VALUES (?,?,?,?,?)",
                [_ROW, s.rank, s.stage.value, int(s.draft), s.seconds],
            )
            for s in record.samples
        ]
        return self._write([insert, *stages])

    def runs(self, profile: str | None = None, limit: int | None = None) -> list[StoredRun]:
        """Runs, newest first, optionally of one profile."""
        where, args = ("WHERE profile = ?", [profile]) if profile is not None else ("", [])
        sql = f"SELECT {_RUN_COLUMNS} FROM runs {where} ORDER BY recorded_at DESC, id DESC"
        rows = self._read(sql + (" LIMIT ?" if limit else ""), [*args, *([limit] if limit else [])])
        return self._with_samples(rows)

    def history(self, model: str | None, limit: int = 200) -> list[RunRecord]:
        """Past runs of ``model`` (every run when None), newest first, for start-up estimates."""
        where, args = ("WHERE model = ?", [model]) if model is not None else ("", [])
        sql = f"SELECT {_RUN_COLUMNS} FROM runs {where} ORDER BY recorded_at DESC, id DESC LIMIT ?"
        return [run.record for run in self._with_samples(self._read(sql, [*args, limit]))]

    def stage_durations(self, fingerprint: Fingerprint) -> dict[StageKey, list[float]]:
        """Per stage, the slowest rank's seconds in each past run with this exact fingerprint."""
        rows = self._read(
            "SELECT t.stage, t.draft, MAX(t.seconds) FROM stage_times t JOIN runs r "
            "ON r.id = t.run_id WHERE r.fingerprint_key = ? "
            "GROUP BY t.run_id, t.stage, t.draft ORDER BY r.recorded_at",
            [fingerprint.key],
        )
        durations: dict[StageKey, list[float]] = {}
        for stage, draft, seconds in rows:
            if stage in _STAGES:
                durations.setdefault((Stage(stage), bool(draft)), []).append(float(seconds))
        return durations

    def _with_samples(self, rows: list[tuple[Any, ...]]) -> list[StoredRun]:
        if not rows:
            return []
        samples: dict[int, list[StageSample]] = {}
        for start in range(0, len(rows), _BATCH):
            ids = [row[0] for row in rows[start : start + _BATCH]]
            sql = "SELECT run_id, rank, stage, draft, seconds FROM stage_times WHERE run_id IN "
            for run_id, rank, stage, draft, seconds in self._read(sql + _marks(ids), ids):
                if stage in _STAGES:
                    sample = StageSample(rank, Stage(stage), bool(draft), float(seconds))
                    samples.setdefault(run_id, []).append(sample)
        return [_run(row, tuple(samples.get(row[0], ()))) for row in rows]

    def add_bench(
        self,
        fields: Mapping[str, Any],
        *,
        recorded_at: float,
        run_id: int | None = None,
        profile: str | None = None,
        url: str | None = None,
        endpoint: str | None = None,
        model: str | None = None,
    ) -> int:
        """Store one benchmark level (``result_fields`` plus anything JSON can hold)."""
        concurrency = int(fields.get("max_concurrency") or 1)
        return self._write([(
            "INSERT INTO bench_results (run_id, profile, url, endpoint, model, concurrency, "
            "recorded_at, result) VALUES (?,?,?,?,?,?,?,?)",
            [run_id, profile, url, endpoint, model, concurrency, recorded_at,
             json.dumps(dict(fields), default=str)],
        )])  # fmt: skip

    def bench_results(
        self, run_id: int | None = None, profile: str | None = None
    ) -> list[StoredBench]:
        """Benchmark levels, newest first, of one run or one profile or all."""
        pairs = (("run_id = ?", run_id), ("profile = ?", profile))
        clauses = [(c, v) for c, v in pairs if v is not None]
        where = " AND ".join(c for c, _ in clauses)
        rows = self._read(
            "SELECT id, run_id, profile, url, endpoint, model, concurrency, recorded_at, result "
            f"FROM bench_results {'WHERE ' + where if where else ''} "
            "ORDER BY recorded_at DESC, id DESC",
            [v for _, v in clauses],
        )
        return [_bench(row) for row in rows]


_ROW = object()
_STAGES = {stage.value for stage in Stage}
_OUTCOMES = {outcome.value for outcome in Outcome}
_FAILURES = {kind.value for kind in FailureKind}


def _marks(ids: Sequence[object]) -> str:
    return "(" + ",".join("?" * len(ids)) + ")"


def _bench(row: tuple[Any, ...]) -> StoredBench:
    bench_id, run_id, profile, url, endpoint, model, concurrency, recorded_at, result = row
    return StoredBench(
        bench_id, run_id, profile, url, endpoint, model, concurrency, recorded_at,
        _json_object(result),
    )  # fmt: skip


def _json_object(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _run(row: tuple[Any, ...], samples: tuple[StageSample, ...]) -> StoredRun:
    run_id, profile, fingerprint, outcome, failure, total, recorded_at = row
    try:
        fp = Fingerprint.from_json(fingerprint)
    except ValueError:
        fp = Fingerprint()
    record = RunRecord(
        fingerprint=fp,
        outcome=Outcome(outcome) if outcome in _OUTCOMES else Outcome.INCOMPLETE,
        total_seconds=total,
        samples=samples,
        recorded_at=recorded_at,
        profile=profile,
        failure=FailureKind(failure) if failure in _FAILURES else None,
    )
    return StoredRun(run_id, record)
