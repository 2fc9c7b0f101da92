"""Start-up history in sqlite: one row per run, one row per rank and stage it went through.

The tables live in the same database file as the other run records and benchmark results; they
are created on first use (``CREATE TABLE IF NOT EXISTS``), so an older database gains them
without a migration of its own. Rows are read defensively: a row with an unknown stage, outcome
or a malformed fingerprint is skipped, never fatal.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

from tui.engine.startup.snapshot import Snapshot
from tui.engine.startup.vocabulary import FailureKind, Outcome, Phase, Stage
from tui.engine.timing.estimate import (
    DEFAULT_STARTUP,
    MAX_RUNS,
    Expectations,
    PhaseSample,
    RunRecord,
    StageSample,
    expectations_for,
    run_record,
)
from tui.engine.timing.fingerprint import Fingerprint, fingerprint_of

SCHEMA = """
CREATE TABLE IF NOT EXISTS startup_runs (
    id INTEGER PRIMARY KEY,
    fingerprint_key TEXT NOT NULL,
    model TEXT,
    fingerprint TEXT NOT NULL,
    profile TEXT,
    outcome TEXT NOT NULL,
    failure TEXT,
    total_seconds REAL,
    recorded_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS startup_runs_by_model ON startup_runs (model, recorded_at);
CREATE TABLE IF NOT EXISTS startup_stages (
    run_id INTEGER NOT NULL REFERENCES startup_runs (id) ON DELETE CASCADE,
    rank TEXT NOT NULL,
    stage TEXT NOT NULL,
    draft INTEGER NOT NULL,
    seconds REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS startup_stages_by_run ON startup_stages (run_id);
CREATE TABLE IF NOT EXISTS startup_phases (
    run_id INTEGER NOT NULL REFERENCES startup_runs (id) ON DELETE CASCADE,
    rank TEXT NOT NULL,
    phase TEXT NOT NULL,
    seconds REAL NOT NULL,
    steps INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS startup_phases_by_run ON startup_phases (run_id);
"""

DATABASE_NAME = "bringup.sqlite3"

_RUN_COLUMNS = "id, fingerprint, profile, outcome, failure, total_seconds, recorded_at"
# Runs read per model when looking for the same or similar fingerprints.
SIMILAR_LIMIT = 10 * MAX_RUNS


def database_path() -> Path:
    """The database file: ``$BRINGUP_DATA_DIR``, else ``$XDG_DATA_HOME/bringup``, else
    ``~/.local/share/bringup``, holding ``bringup.sqlite3``."""
    configured = os.environ.get("BRINGUP_DATA_DIR")
    if configured:
        return Path(configured) / DATABASE_NAME
    xdg = os.environ.get("XDG_DATA_HOME")
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".local" / "share"
    return base / "bringup" / DATABASE_NAME


def connect(path: Path | None = None) -> sqlite3.Connection:
    """Open (creating it and its folder if needed) the database with the history tables."""
    target = database_path() if path is None else path
    target.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(target, timeout=5.0)
    try:
        ensure_schema(db)
    except sqlite3.Error:
        db.close()
        raise
    return db


def ensure_schema(db: sqlite3.Connection) -> None:
    """Create the history tables if this database does not have them yet."""
    db.executescript(SCHEMA)


def add_run(db: sqlite3.Connection, record: RunRecord) -> int:
    """Store ``record``; returns its row id."""
    ensure_schema(db)
    fp = record.fingerprint
    with db:
        cursor = db.execute(
            "INSERT INTO startup_runs (fingerprint_key, model, fingerprint, profile, outcome,"
            " failure, total_seconds, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (fp.key, fp.model, fp.to_json(), record.profile, record.outcome.value,
             record.failure.value if record.failure else None, record.total_seconds,
             record.recorded_at),
        )  # fmt: skip
        run_id = cursor.lastrowid
        if run_id is None:
            raise sqlite3.DatabaseError("the start-up run was not stored")
        db.executemany(
            "INSERT INTO startup_stages (run_id, rank, stage, draft, seconds)"
            " VALUES (?, ?, ?, ?, ?)",
            [(run_id, s.rank, s.stage.value, int(s.draft), s.seconds) for s in record.samples],
        )
        db.executemany(
            "INSERT INTO startup_phases (run_id, rank, phase, seconds, steps)"
            " VALUES (?, ?, ?, ?, ?)",
            [(run_id, p.rank, p.phase.value, p.seconds, p.steps) for p in record.phases],
        )
    return run_id


def record_startup(
    db: sqlite3.Connection,
    fingerprint: Fingerprint,
    snapshot: Snapshot,
    *,
    profile: str | None = None,
    recorded_at: float | None = None,
) -> RunRecord | None:
    """Record a run that reached a final outcome (or was given up on) with its per-rank stage
    times. Returns the record, or ``None`` when the log showed no stage worth keeping."""
    when = time.time() if recorded_at is None else recorded_at
    record = run_record(fingerprint, snapshot, recorded_at=when, profile=profile)
    if not record.samples and record.total_seconds is None:
        return None
    add_run(db, record)
    return record


def runs(
    db: sqlite3.Connection,
    *,
    model: str | None = None,
    profile: str | None = None,
    limit: int | None = None,
) -> list[RunRecord]:
    """Recorded runs, oldest first; only the newest ``limit`` when given."""
    ensure_schema(db)
    where, args = _filters(model=model, profile=profile)
    query = f"SELECT {_RUN_COLUMNS} FROM startup_runs{where} ORDER BY recorded_at DESC, id DESC"
    if limit is not None:
        query += f" LIMIT {int(limit)}"
    with closing(db.execute(query, args)) as cursor:
        rows = cursor.fetchall()
    records = [record for record in _records(db, rows) if record is not None]
    return records[::-1]


def expectations(
    db: sqlite3.Connection, fingerprint: Fingerprint, *, expected_startup: float = DEFAULT_STARTUP
) -> Expectations:
    """What this launch should take, from the runs of the same model (``expectations_for``)."""
    history = runs(db, model=fingerprint.model, limit=SIMILAR_LIMIT) if fingerprint.model else []
    return expectations_for(fingerprint, history, expected_startup=expected_startup)


def _filters(*, model: str | None, profile: str | None) -> tuple[str, list[str]]:
    clauses: list[str] = []
    args: list[str] = []
    for column, value in (("model", model), ("profile", profile)):
        if value is not None:
            clauses.append(f"{column} = ?")
            args.append(value)
    return (" WHERE " + " AND ".join(clauses) if clauses else ""), args


def _records(db: sqlite3.Connection, rows: list[tuple[object, ...]]) -> Iterator[RunRecord | None]:
    samples = _samples(db, [row[0] for row in rows])
    phases = _phases(db, [row[0] for row in rows])
    for run_id, fp_json, profile, outcome, failure, total, recorded_at in rows:
        try:
            fingerprint = Fingerprint.from_json(str(fp_json))
            result = Outcome(outcome)
            kind = FailureKind(failure) if failure is not None else None
        except ValueError:
            yield None
            continue
        yield RunRecord(
            fingerprint, result, _number(total), tuple(samples.get(run_id, ())),
            _number(recorded_at) or 0.0, profile if isinstance(profile, str) else None, kind,
            tuple(phases.get(run_id, ())),
        )  # fmt: skip


def _samples(db: sqlite3.Connection, run_ids: list[object]) -> dict[object, list[StageSample]]:
    """The stage rows of ``run_ids``, by run, skipping rows that make no sense."""
    found: dict[object, list[StageSample]] = {}
    for start in range(0, len(run_ids), _CHUNK):
        chunk = run_ids[start : start + _CHUNK]
        query = (
            "SELECT run_id, rank, stage, draft, seconds FROM startup_stages"
            f" WHERE run_id IN ({', '.join('?' * len(chunk))}) ORDER BY rowid"
        )
        with closing(db.execute(query, chunk)) as cursor:
            for run_id, rank, stage, draft, seconds in cursor.fetchall():
                value = _number(seconds)
                if value is None or value < 0 or stage not in _STAGE_VALUES:
                    continue
                found.setdefault(run_id, []).append(
                    StageSample(str(rank), Stage(stage), bool(draft), value)
                )
    return found


def _phases(db: sqlite3.Connection, run_ids: list[object]) -> dict[object, list[PhaseSample]]:
    """The compile and JIT phase rows of ``run_ids``, by run, skipping rows that make no
    sense."""
    found: dict[object, list[PhaseSample]] = {}
    for start in range(0, len(run_ids), _CHUNK):
        chunk = run_ids[start : start + _CHUNK]
        query = (
            "SELECT run_id, rank, phase, seconds, steps FROM startup_phases"
            f" WHERE run_id IN ({', '.join('?' * len(chunk))}) ORDER BY rowid"
        )
        with closing(db.execute(query, chunk)) as cursor:
            for run_id, rank, phase, seconds, steps in cursor.fetchall():
                value = _number(seconds)
                if value is None or value < 0 or phase not in _PHASE_VALUES:
                    continue
                count = int(steps) if isinstance(steps, int) and 0 <= steps < 10**9 else 1
                found.setdefault(run_id, []).append(
                    PhaseSample(str(rank), Phase(phase), value, count)
                )
    return found


_CHUNK = 500
_STAGE_VALUES = frozenset(stage.value for stage in Stage)
_PHASE_VALUES = frozenset(phase.value for phase in Phase)


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


class StartupHistory:
    """The history as one watch of one server uses it: expectations for the launch the log
    describes (cached per fingerprint) and one record when the start-up ends.

    Nothing here raises: a database that cannot be opened or read means default expectations
    and an unrecorded run, and ``problem`` says why.
    """

    def __init__(
        self,
        path: Path | None = None,
        *,
        profile: str | None = None,
        expected_startup: float = DEFAULT_STARTUP,
        host: str | None = None,
        gpu: str | None = None,
    ) -> None:
        self.path = path
        self.profile = profile
        self.expected_startup = expected_startup
        self.host = host
        self.gpu = gpu
        self.problem: str | None = None
        self.recorded: RunRecord | None = None
        self._cached: tuple[Fingerprint, Expectations] | None = None

    def fingerprint(self, snapshot: Snapshot) -> Fingerprint:
        return fingerprint_of(snapshot.server, gpu=self.gpu, host=self.host)

    def expectations(self, snapshot: Snapshot) -> Expectations:
        """Expectations for the server in ``snapshot``; read once per fingerprint."""
        fingerprint = self.fingerprint(snapshot)
        if self._cached is not None and self._cached[0] == fingerprint:
            return self._cached[1]
        found = self._read(fingerprint)
        self._cached = (fingerprint, found)
        return found

    def _read(self, fingerprint: Fingerprint) -> Expectations:
        default = expectations_for(fingerprint, [], expected_startup=self.expected_startup)
        if fingerprint.model is None:
            return default
        try:
            with closing(connect(self.path)) as db:
                return expectations(db, fingerprint, expected_startup=self.expected_startup)
        except (sqlite3.Error, OSError) as error:
            self.problem = f"start-up history unavailable: {error}"
            return default

    def record(self, snapshot: Snapshot) -> RunRecord | None:
        """Record the run once, when its snapshot shows a final outcome."""
        if self.recorded is not None or snapshot.outcome is Outcome.INCOMPLETE:
            return None
        try:
            with closing(connect(self.path)) as db:
                self.recorded = record_startup(
                    db, self.fingerprint(snapshot), snapshot, profile=self.profile
                )
        except (sqlite3.Error, OSError) as error:
            self.problem = f"start-up not recorded: {error}"
        return self.recorded
