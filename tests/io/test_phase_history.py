"""Compile and JIT phase times are kept with each start-up in the history database, so that
the stall rules learn a phase's usual step time across runs."""

from __future__ import annotations

from contextlib import closing
from pathlib import Path

from tui.engine.startup.vocabulary import Outcome, Phase
from tui.engine.timing.estimate import PhaseSample, RunRecord, from_runs
from tui.engine.timing.fingerprint import Fingerprint
from tui.io.store.history_store import add_run, connect, runs

FP = Fingerprint(engine="sglang", version="0.5.21", model="DeepSeek-V3", tp=8, gpu="MI300X")


def test_phase_samples_round_trip_and_teach_the_step_time(tmp_path: Path) -> None:
    samples = (PhaseSample("TP0", Phase.AITER_BUILD, 28.7, 1),
               PhaseSample("TP0", Phase.TORCH_COMPILE, 40.0, 4))  # fmt: skip
    with closing(connect(tmp_path / "h.sqlite3")) as db:
        add_run(db, RunRecord(FP, Outcome.READY, 600.0, (), 1.0, None, None, samples))
        db.execute(  # a hostile row: unknown phase, negative time
            "INSERT INTO startup_phases (run_id, rank, phase, seconds, steps)"
            " VALUES (1, 'TP1', 'no_such_phase', -1, 'x')"
        )
        db.commit()
        read = runs(db)
    assert read[0].phases == samples
    learned = from_runs(read)
    assert learned.phase_step(Phase.TORCH_COMPILE).median == 10.0
    assert learned.phase_step(Phase.AITER_BUILD).median == 28.7
