"""Live GPU state: bounded histories over the whole start, gaps, and busy GPUs before a launch."""

from __future__ import annotations

from pathlib import Path

from tui.engine.gpu.gpu_csv import (
    ComputeApp,
    GpuBatch,
    GpuSample,
    NoTelemetry,
    NoTelemetryKind,
    RowProblem,
    parse_query_gpu,
)
from tui.engine.gpu.gpu_state import GpuTelemetry, busy_gpus


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _sample(index: int, used: float, util: float = 0.0, uuid: str = "") -> GpuSample:
    return GpuSample(
        index=index,
        uuid=uuid or f"GPU-{index}",
        memory_used_mib=used,
        memory_total_mib=1000.0,
        util_pct=util,
    )


def test_snapshot_holds_latest_reading_history_and_peak() -> None:
    clock = FakeClock()
    model = GpuTelemetry(clock)
    for used in (0.0, 300.0, 200.0):
        clock.now += 0.5
        model.apply(GpuBatch((_sample(0, used), _sample(1, used / 2))))
    snap = model.snapshot()
    gpu = snap.gpu(0)
    assert gpu is not None
    assert gpu.sample.memory_used_mib == 200.0
    assert gpu.memory_mib == (0.0, 300.0, 200.0)
    assert gpu.peak_used_mib == 300.0
    assert gpu.free_mib == 800.0
    assert (snap.used_mib, snap.total_mib, snap.samples) == (300.0, 2000.0, 6)
    assert snap.seen_at == 101.5
    assert not snap.stale(102.0, after=2.0)
    assert snap.stale(104.0, after=2.0)


def test_history_stays_bounded_and_keeps_the_peak_of_the_whole_start() -> None:
    model = GpuTelemetry(FakeClock(), history=16)
    for step in range(1000):
        used = 9000.0 if step == 3 else float(step)
        model.apply(GpuBatch((_sample(0, used),)))
    gpu = model.snapshot().gpus[0]
    assert len(gpu.memory_mib) <= 17
    assert max(gpu.memory_mib) == 9000.0
    assert gpu.memory_mib[-1] >= 990.0


def test_failure_keeps_last_states_and_samples_clear_it() -> None:
    model = GpuTelemetry(FakeClock())
    model.apply(GpuBatch((_sample(0, 10.0),)))
    driver = NoTelemetry(NoTelemetryKind.DRIVER, "NVIDIA-SMI has failed")
    model.apply(GpuBatch(failure=driver))
    snap = model.snapshot()
    assert snap.missing == driver
    assert len(snap.gpus) == 1
    model.lost(NoTelemetry(NoTelemetryKind.ENDED))
    assert model.snapshot().missing == NoTelemetry(NoTelemetryKind.ENDED)
    model.apply(GpuBatch((_sample(0, 20.0),)))
    assert model.snapshot().missing is None


def test_problems_are_counted_and_only_the_latest_kept() -> None:
    model = GpuTelemetry(FakeClock())
    for line in range(1, 21):
        model.apply(GpuBatch(problems=(RowProblem(line, "", "short"),)))
    snap = model.snapshot()
    assert snap.problem_count == 20
    assert [problem.line for problem in snap.problems] == [16, 17, 18, 19, 20]


def test_a_different_gpu_at_the_same_index_starts_a_new_history() -> None:
    model = GpuTelemetry(FakeClock())
    model.apply(GpuBatch((_sample(0, 10.0, uuid="GPU-a"),)))
    model.apply(GpuBatch((_sample(0, 20.0, uuid="GPU-b"),)))
    assert model.snapshot().gpus[0].memory_mib == (20.0,)


def test_fixture_stream_fills_history_in_step(shared: Path) -> None:
    data = (shared / "fixtures" / "gpu-h200" / "query-gpu-lms250.csv").read_bytes()
    model = GpuTelemetry(FakeClock(), history=40)
    model.apply(parse_query_gpu(data))
    gpu = model.snapshot().gpus[0]
    assert gpu.peak_used_mib == 103411.0
    assert gpu.memory_mib[0] == 0.0
    assert max(gpu.memory_mib) == 103411.0
    assert max(gpu.util_pct) == 100.0


def test_busy_gpus_names_memory_and_processes() -> None:
    gpus = [_sample(0, 0.0), _sample(1, 41478.0), _sample(2, 3.0)]
    apps = [
        ComputeApp(419, "python3", 41478.0, gpu_uuid="GPU-1"),
        ComputeApp(77, "stray", 2.0, gpu_uuid="GPU-2"),
        ComputeApp(5, "elsewhere", None, gpu_uuid="GPU-zzz"),
    ]
    busy = busy_gpus(gpus, apps)
    assert [gpu.index for gpu in busy] == [1, 2, None]
    assert busy[0].describe() == "GPU 1: 41478 MiB used; pid 419 python3 (41478 MiB)"
    assert busy[2].describe() == "a GPU: memory unknown; pid 5 elsewhere"


def test_idle_host_has_no_busy_gpus_and_one_gpu_owns_unlabelled_apps() -> None:
    assert busy_gpus([_sample(0, 0.0), _sample(1, 500.0)], []) == ()
    (busy,) = busy_gpus([_sample(0, 0.0)], [ComputeApp(419, "python3", 41478.0)])
    assert busy.index == 0
