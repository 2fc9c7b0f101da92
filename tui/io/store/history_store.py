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
from collections.abc import Iterable, Iterator, Sequence
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

RUN_COLUMNS = "id, fingerprint, profile, outcome, failure, total_seconds, recorded_at"
"""The columns of ``startup_runs`` that ``run_rows`` reads, in its order."""
STAGE_COLUMNS = ("run_id", "rank", "stage", "draft", "seconds")
PHASE_COLUMNS = ("run_id", "rank", "phase", "seconds", "steps")
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
        _insert_rows(
            db, "startup_stages", STAGE_COLUMNS,
            [(run_id, s.rank, s.stage.value, int(s.draft), s.seconds) for s in record.samples],
        )  # fmt: skip
        _insert_rows(
            db, "startup_phases", PHASE_COLUMNS,
            [(run_id, p.rank, p.phase.value, p.seconds, p.steps) for p in record.phases],
        )  # fmt: skip
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
    rows = run_rows(db, model=model, profile=profile, limit=limit)
    records = [record for record in _records(db, rows) if record is not None]
    return records[::-1]


def run_rows(
    db: sqlite3.Connection,
    *,
    model: str | None = None,
    profile: str | None = None,
    limit: int | None = None,
) -> list[tuple[object, ...]]:
    """The ``RUN_COLUMNS`` of the recorded runs, newest first; only the newest ``limit`` when
    given."""
    clause, args = where((("model", model), ("profile", profile)))
    query = f"SELECT {RUN_COLUMNS} FROM startup_runs{clause} ORDER BY recorded_at DESC, id DESC"
    if limit is not None:
        query += " LIMIT ?"
        args.append(int(limit))
    with closing(db.execute(query, args)) as cursor:
        return cursor.fetchall()


def expectations(
    db: sqlite3.Connection, fingerprint: Fingerprint, *, expected_startup: float = DEFAULT_STARTUP
) -> Expectations:
    """What this launch should take, from the runs of the same model (``expectations_for``)."""
    history = runs(db, model=fingerprint.model, limit=SIMILAR_LIMIT) if fingerprint.model else []
    return expectations_for(fingerprint, history, expected_startup=expected_startup)


def where(pairs: Iterable[tuple[str, object]]) -> tuple[str, list[object]]:
    """`` WHERE column = ? AND ...`` for the (column, value) pairs whose value is not None, and
    its arguments; nothing when every value is None."""
    kept = [(column, value) for column, value in pairs if value is not None]
    clause = " AND ".join(f"{column} = ?" for column, _ in kept)
    return (f" WHERE {clause}" if kept else ""), [value for _, value in kept]


def rows_of_runs(
    db: sqlite3.Connection, table: str, columns: tuple[str, ...], run_ids: Sequence[object]
) -> Iterator[tuple[object, ...]]:
    """``columns`` of the rows of ``table`` that belong to ``run_ids``, in the order they were
    written; asked for a chunk of ids at a time, under sqlite's limit of arguments."""
    for start in range(0, len(run_ids), _CHUNK):
        chunk = list(run_ids[start : start + _CHUNK])
        query = (
            f"SELECT {', '.join(columns)} FROM {table}"
            f" WHERE run_id IN ({', '.join('?' * len(chunk))}) ORDER BY rowid"
        )
        with closing(db.execute(query, chunk)) as cursor:
            rows = cursor.fetchall()
        yield from rows


def _insert_rows(
    db: sqlite3.Connection, table: str, columns: tuple[str, ...], rows: list[tuple[object, ...]]
) -> None:
    marks = ", ".join("?" * len(columns))
    db.executemany(f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})", rows)


def _records(db: sqlite3.Connection, rows: list[tuple[object, ...]]) -> Iterator[RunRecord | None]:
    samples = stage_samples(db, [row[0] for row in rows])
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


def stage_samples(
    db: sqlite3.Connection, run_ids: Sequence[object]
) -> dict[object, list[StageSample]]:
    """The stage rows of ``run_ids``, by run, skipping rows that make no sense."""
    found: dict[object, list[StageSample]] = {}
    for run_id, rank, stage, draft, seconds in rows_of_runs(
        db, "startup_stages", STAGE_COLUMNS, run_ids
    ):
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
    for run_id, rank, phase, seconds, steps in rows_of_runs(
        db, "startup_phases", PHASE_COLUMNS, run_ids
    ):
        value = _number(seconds)
        if value is None or value < 0 or phase not in _PHASE_VALUES:
            continue
        count = int(steps) if isinstance(steps, int) and 0 <= steps < 10**9 else 1
        found.setdefault(run_id, []).append(PhaseSample(str(rank), Phase(phase), value, count))
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
