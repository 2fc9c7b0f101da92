"""The GPUs of a server over several hosts, put together for the header's totals."""

from __future__ import annotations

from tui.engine.gpu.gpu_state import GpuSnapshot, GpuState, merged
from tui.engine.gpu.gpu_values import GpuSample, NoTelemetry, NoTelemetryKind


def _host(first: int, used: float, seen_at: float | None = 10.0) -> GpuSnapshot:
    gpus = tuple(
        GpuState(GpuSample(index, memory_used_mib=used, memory_total_mib=1000.0))
        for index in range(first, first + 2)
    )
    return GpuSnapshot(gpus=gpus, seen_at=seen_at, samples=3, problem_count=1)


def test_one_host_is_its_own_total() -> None:
    only = _host(0, 100.0)
    assert merged([(0, only)]) is only


def test_several_hosts_add_up_and_are_as_stale_as_the_stalest() -> None:
    total = merged([(0, _host(0, 100.0, seen_at=10.0)), (1, _host(0, 300.0, seen_at=7.0))])
    assert len(total.gpus) == 4
    assert (total.used_mib, total.total_mib) == (800.0, 4000.0)
    assert (total.samples, total.problem_count, total.seen_at) == (6, 2, 7.0)
    assert total.missing is None
    assert total.stale(now=12.5, after=5.0)
    assert not total.stale(now=11.0, after=5.0)
    never = merged([(0, _host(0, 1.0)), (1, GpuSnapshot())])
    assert never.seen_at is None, "a host that never gave a reading leaves the total stale"


def test_a_host_without_telemetry_is_named_by_its_node() -> None:
    absent = GpuSnapshot(missing=NoTelemetry(NoTelemetryKind.NOT_INSTALLED))
    total = merged([(0, _host(0, 100.0)), (2, absent)])
    assert total.missing is not None
    assert total.missing.reason == "node 2: nvidia-smi not found on the host"
    assert len(total.gpus) == 2
    detail = NoTelemetry(NoTelemetryKind.ENDED, "exit status 1", node=1)
    assert detail.reason == "node 1: the telemetry stream ended: exit status 1"
    assert NoTelemetry(NoTelemetryKind.ENDED).reason == "the telemetry stream ended"
