"""The start-up history tables in a real sqlite file."""

from __future__ import annotations

import dataclasses
import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest

from tests.engine.startup_factory import FP, finished_run, rank_at, snapshot_of
from tui.engine.startup.vocabulary import FailureKind, Outcome, Stage
from tui.engine.timing.estimate import Basis
from tui.io.store.history_store import (
    StartupHistory,
    add_run,
    connect,
    database_path,
    ensure_schema,
    expectations,
    record_startup,
    runs,
)


@pytest.fixture
def db(tmp_path: Path) -> Iterator[sqlite3.Connection]:
    connection = sqlite3.connect(tmp_path / "bringup.sqlite3")
    yield connection
    connection.close()


def test_a_run_round_trips(db: sqlite3.Connection) -> None:
    record = dataclasses.replace(finished_run(1.0, recorded_at=5.0), profile="kimi")
    add_run(db, record)
    assert runs(db) == [record]


def test_record_startup_keeps_the_final_snapshot(db: sqlite3.Connection) -> None:
    ready = snapshot_of([rank_at(700.0, tag="TP0"), rank_at(700.0, tag="TP1")], ready_at=600.0)
    record = record_startup(db, FP, ready, profile="kimi", recorded_at=10.0)
    assert record is not None
    assert record.total_seconds == pytest.approx(600.0)
    (stored,) = runs(db, profile="kimi")
    assert stored == record
    assert record_startup(db, FP, snapshot_of([]), recorded_at=11.0) is None


def test_expectations_come_from_the_same_fingerprint_first(db: sqlite3.Connection) -> None:
    for i, scale in enumerate((1.0, 1.1, 0.9)):
        add_run(db, finished_run(scale, recorded_at=float(i)))
    other = dataclasses.replace(FP, tp=8)
    add_run(db, finished_run(3.0, fingerprint=other, recorded_at=9.0))
    same = expectations(db, FP)
    assert (same.basis, same.runs) == (Basis.HISTORY, 3)
    assert same.total.median == pytest.approx(600.0)
    similar = expectations(db, dataclasses.replace(FP, gpu="B200"))
    assert (similar.basis, similar.runs) == (Basis.SIMILAR, 3)
    cold = expectations(db, dataclasses.replace(FP, model="other"), expected_startup=300.0)
    assert (cold.basis, cold.total.median) == (Basis.DEFAULT, 300.0)


def test_failed_runs_are_kept_with_their_failure(db: sqlite3.Connection) -> None:
    failed = dataclasses.replace(
        finished_run(1.0), outcome=Outcome.FAILED, failure=FailureKind.HANG, total_seconds=None
    )
    add_run(db, failed)
    assert runs(db) == [failed]
    assert expectations(db, FP).basis is Basis.DEFAULT


def test_newest_runs_only_when_limited(db: sqlite3.Connection) -> None:
    for i in range(5):
        add_run(db, finished_run(1.0 + i / 10, recorded_at=float(i)))
    assert [r.recorded_at for r in runs(db, limit=2)] == [3.0, 4.0]
    assert runs(db, model="nobody") == []


def test_hostile_rows_are_skipped_not_fatal(db: sqlite3.Connection) -> None:
    add_run(db, finished_run(1.0, recorded_at=1.0))
    ensure_schema(db)
    with db:
        db.execute(
            "INSERT INTO startup_runs (fingerprint_key, model, fingerprint, outcome, recorded_at)"
            " VALUES ('k', ?, '{not json', 'ready', 2.0), ('k', ?, '{}', 'exploded', 3.0)",
            (FP.model, FP.model),
        )
        db.execute(
            "INSERT INTO startup_stages (run_id, rank, stage, draft, seconds) VALUES"
            " (1, 'TP0', 'teleport', 0, 5.0), (1, 'TP0', 'warmup', 0, -1.0),"
            " (1, 'TP0', 'warmup', 0, 'soon')"
        )
    (kept,) = runs(db)
    assert kept == finished_run(1.0, recorded_at=1.0)
    assert kept.stage_seconds()[(Stage.WARMUP, False)] == pytest.approx(80.0)


def test_connect_creates_the_folder_and_tables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BRINGUP_DATA_DIR", str(tmp_path / "deep" / "data"))
    with closing(connect()) as db:
        add_run(db, finished_run(1.0))
    assert (tmp_path / "deep" / "data" / "bringup.sqlite3").is_file()
    monkeypatch.delenv("BRINGUP_DATA_DIR")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert database_path() == tmp_path / "xdg" / "bringup" / "bringup.sqlite3"


def test_schema_sits_beside_other_tables(db: sqlite3.Connection) -> None:
    with db:
        db.execute("CREATE TABLE benchmark_results (id INTEGER PRIMARY KEY, value REAL)")
    ensure_schema(db)
    ensure_schema(db)
    tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"benchmark_results", "startup_runs", "startup_stages"} <= tables


def test_startup_history_reads_once_and_records_once(tmp_path: Path) -> None:
    path = tmp_path / "bringup.sqlite3"
    with closing(connect(path)) as db:
        for i in range(3):
            add_run(db, finished_run(1.0, recorded_at=float(i)))
    watch = StartupHistory(path, profile="kimi", host=FP.host, gpu=FP.gpu)
    running = snapshot_of([rank_at(100.0, tag="TP0"), rank_at(100.0, tag="TP1")])
    running = dataclasses.replace(
        running, server=dataclasses.replace(running.server, version="0.5.21")
    )
    seen = watch.expectations(running)
    assert (seen.basis, seen.runs) == (Basis.HISTORY, 3)
    assert watch.expectations(running) is seen
    assert watch.record(running) is None
    ready = snapshot_of([rank_at(700.0, tag="TP0"), rank_at(700.0, tag="TP1")], ready_at=600.0)
    ready = dataclasses.replace(ready, server=running.server)
    assert watch.record(ready) is not None
    assert watch.record(ready) is None
    with closing(connect(path)) as db:
        assert [r.profile for r in runs(db)] == [None, None, None, "kimi"]


def test_startup_history_never_raises(tmp_path: Path) -> None:
    broken = tmp_path / "bringup.sqlite3"
    broken.write_bytes(b"not a database at all" * 64)
    watch = StartupHistory(broken, expected_startup=300.0)
    ready = snapshot_of([rank_at(700.0)], ready_at=600.0)
    expected = watch.expectations(ready)
    assert (expected.basis, expected.total.median) == (Basis.DEFAULT, 300.0)
    assert watch.record(ready) is None
    assert watch.problem is not None
    assert "not recorded" in watch.problem
