"""The run history store: a real sqlite file in a temporary folder."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest

from tui.engine.bench.level_fields import level_from_fields
from tui.engine.startup.vocabulary import FailureKind, Outcome, Stage
from tui.engine.timing.estimate import RunRecord, StageSample
from tui.engine.timing.fingerprint import Fingerprint
from tui.io.store.run_store import SCHEMA_VERSION, RunStore, StoreError, database_file

KIMI = Fingerprint(engine="sglang", version="0.5.21", model="Kimi-K2.5", tp=8, gpu="H200")
OTHER = Fingerprint(engine="vllm", model="Qwen3-8B", tp=1)


def record(fp: Fingerprint, at: float, load: float, profile: str = "h200") -> RunRecord:
    samples = (
        StageSample("TP0", Stage.WEIGHT_LOADING, False, load),
        StageSample("TP1", Stage.WEIGHT_LOADING, False, load + 5),
        StageSample("TP0", Stage.CUDA_GRAPH, True, 12.5),
    )
    return RunRecord(fp, Outcome.READY, load + 60, samples, recorded_at=at, profile=profile)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[RunStore]:
    with RunStore(tmp_path / "data" / "runs.db") as opened:
        yield opened


def test_runs_round_trip(store: RunStore) -> None:
    first = record(KIMI, 100.0, 200.0)
    failed = RunRecord(OTHER, Outcome.FAILED, None, (), 50.0, "box", FailureKind.OOM)
    assert store.add_run(first) != store.add_run(failed)
    assert [run.record for run in store.runs()] == [first, failed]
    assert [run.record for run in store.runs(profile="box")] == [failed]
    assert len(store.runs(limit=1)) == 1


def test_history_and_stage_durations_by_fingerprint(store: RunStore) -> None:
    for at, load in ((1.0, 100.0), (2.0, 120.0), (3.0, 90.0)):
        store.add_run(record(KIMI, at, load))
    store.add_run(record(OTHER, 4.0, 10.0))
    assert [r.recorded_at for r in store.history("Kimi-K2.5")] == [1.0, 2.0, 3.0]
    assert len(store.history(None)) == 4
    assert len(store.history("Kimi-K2.5", limit=2)) == 2
    durations = store.stage_durations(KIMI)
    assert durations[(Stage.WEIGHT_LOADING, False)] == [105.0, 125.0, 95.0]
    assert durations[(Stage.CUDA_GRAPH, True)] == [12.5, 12.5, 12.5]
    assert store.stage_durations(Fingerprint(model="none")) == {}


def test_bench_results_per_run_and_profile(store: RunStore) -> None:
    run_id = store.add_run(record(KIMI, 1.0, 100.0))
    fields = {"max_concurrency": 4, "completed": 8, "mean_ttft_ms": 51.0, "errors": []}
    figures = level_from_fields(fields)
    store.add_bench(figures, recorded_at=5.0, run_id=run_id, profile="h200", url="http://x")
    store.add_bench(level_from_fields({"max_concurrency": 1}), recorded_at=6.0, profile="cli")
    (attached,) = store.bench_results(run_id=run_id)
    assert (attached.concurrency, attached.url, attached.result) == (4, "http://x", figures)
    assert [b.profile for b in store.bench_results()] == ["cli", "h200"]
    assert [b.concurrency for b in store.bench_results(profile="cli")] == [1]


def test_schema_is_versioned_and_reopened(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    with RunStore(path) as store:
        store.add_run(record(KIMI, 1.0, 100.0))
    with closing(sqlite3.connect(path)) as db:
        assert db.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
    with RunStore(path) as store:
        assert len(store.runs()) == 1
    with closing(sqlite3.connect(path)) as db:
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(StoreError, match="newer bringup"):
        RunStore(path)


def test_a_file_that_is_not_a_database_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError, match=r"runs\.db"):
        RunStore(path)


def test_writes_from_several_threads(store: RunStore) -> None:
    def add(index: int) -> None:
        store.add_run(record(KIMI, float(index), 10.0))

    threads = [threading.Thread(target=add, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(store.runs()) == 8


def test_database_file_order(tmp_path: Path) -> None:
    name = "bringup.sqlite3"
    assert database_file({"BRINGUP_DATA_DIR": str(tmp_path)}, Path("/cfg")) == tmp_path / name
    assert database_file({}, Path("/cfg")) == Path("/cfg") / name
    assert database_file({"XDG_DATA_HOME": "/xdg"}) == Path("/xdg/bringup") / name
    assert database_file({"HOME": "/home/u"}) == Path("/home/u/.local/share/bringup") / name


def test_hostile_rows_are_read_defensively(store: RunStore) -> None:
    run_id = store.add_run(record(KIMI, 1.0, 100.0))
    with closing(sqlite3.connect(store.path)) as db, db:
        db.execute("UPDATE startup_runs SET total_seconds = 'x', fingerprint = '[1]'")
        db.execute("INSERT INTO startup_stages VALUES (?, 'TP9', 'no_stage', 0, 1.0)", [run_id])
        db.execute("INSERT INTO startup_stages VALUES (?, 'TP9', 'kv_cache', 0, 'y')", [run_id])
        db.execute(
            "INSERT INTO bench_results (concurrency, recorded_at, result) VALUES (1, 0, '[')"
        )
    (run,) = store.runs()
    assert (run.record.total_seconds, run.record.fingerprint) == (None, Fingerprint())
    assert len(run.record.samples) == 3
    assert store.bench_results()[0].result == level_from_fields({})
