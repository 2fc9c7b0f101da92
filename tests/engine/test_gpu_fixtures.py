"""Every file of the real H200 capture is read exactly, and the GPU tells the start-up's story."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from tui.engine.gpu.gpu_csv import GpuSample, parse_compute_apps, parse_query_gpu
from tui.engine.gpu.gpu_formats import parse_dmon, parse_gpu_list, parse_query_xml, parse_summary

UUID = "GPU-e631629d-2256-277a-404b-d2ae4d3da19f"


@pytest.fixture
def h200(shared: Path) -> Path:
    return shared / "fixtures" / "gpu-h200"


def _list(path: Path) -> None:
    gpus, failure = parse_gpu_list(path.read_text())
    assert failure is None
    (gpu,) = gpus
    assert (gpu.index, gpu.name, gpu.uuid, gpu.mig) == (0, "NVIDIA H200", UUID, ())


def _dmon(path: Path) -> None:
    rows, problems = parse_dmon(path.read_text())
    assert problems == ()
    assert len(rows) == 34
    assert {row.gpu for row in rows} == {0}
    first = rows[0]
    assert (first.get("pwr"), first.get("gtemp"), first.get("mtemp")) == (104.0, 35.0, 38.0)
    assert (first.get("sm"), first.get("mclk"), first.get("pclk")) == (0.0, 3201.0, 375.0)
    assert (first.get("fb"), first.get("bar1"), first.get("ccpm")) == (0.0, 1.0, 0.0)
    assert max(row.get("fb") or 0.0 for row in rows) == 103411.0
    assert max(row.get("pwr") or 0.0 for row in rows) == 691.0


def _summary(path: Path) -> None:
    report = parse_summary(path.read_text())
    assert (report.driver_version, report.cuda_version, report.failure) == (
        "580.159.04",
        "13.0",
        None,
    )
    (gpu,) = report.gpus
    assert (gpu.index, gpu.name, gpu.bus_id) == (0, "NVIDIA H200", "00000000:00:06.0")
    assert (gpu.temperature_c, gpu.power_w, gpu.power_limit_w) == (36.0, 115.0, 700.0)
    assert (gpu.memory_used_mib, gpu.memory_total_mib, gpu.util_pct) == (0.0, 143771.0, 0.0)
    assert report.apps == ()


def _xml(path: Path) -> None:
    report = parse_query_xml(path.read_text())
    assert (report.driver_version, report.cuda_version, report.failure) == (
        "580.159.04",
        "13.0",
        None,
    )
    (gpu,) = report.gpus
    assert (gpu.index, gpu.uuid, gpu.name, gpu.mig_mode) == (0, UUID, "NVIDIA H200", "Disabled")
    assert (gpu.memory_used_mib, gpu.memory_total_mib) == (0.0, 143771.0)
    assert (gpu.util_pct, gpu.mem_util_pct, gpu.temperature_c) == (0.0, 0.0, 35.0)
    assert (gpu.power_w, gpu.power_limit_w, gpu.sm_clock_mhz) == (78.94, 700.0, 405.0)
    assert report.apps == ()


def _query(path: Path) -> None:
    batch = parse_query_gpu(path.read_bytes())
    assert (len(batch.samples), batch.problems, batch.failure) == (132, (), None)
    assert {sample.uuid for sample in batch.samples} == {UUID}
    assert all(sample.memory_total_mib == 143771.0 for sample in batch.samples)


def _apps_during(path: Path) -> None:
    (app,) = parse_compute_apps(path.read_text()).apps
    assert (app.pid, app.process_name, app.used_memory_mib) == (419, "python3", 41478.0)


def _apps_after(path: Path) -> None:
    listed = parse_compute_apps(path.read_text())
    assert (listed.apps, listed.problems, listed.failure) == ((), (), None)


def _phases(path: Path) -> None:
    assert len(_phase_times(path)) == 15


def _readme(path: Path) -> None:
    listed = set(re.findall(r"`([\w.-]+\.(?:txt|xml|csv|log))`", path.read_text()))
    assert listed == set(READERS) - {"README.md"}


READERS: dict[str, Callable[[Path], None]] = {
    "README.md": _readme,
    "nvidia-smi-L.txt": _list,
    "dmon.txt": _dmon,
    "nvidia-smi.txt": _summary,
    "nvidia-smi-q.xml": _xml,
    "query-gpu-lms250.csv": _query,
    "compute-apps.csv": _apps_during,
    "compute-apps-after.csv": _apps_after,
    "torch-phases.log": _phases,
}


def test_every_fixture_file_has_a_reader(h200: Path) -> None:
    assert sorted(path.name for path in h200.iterdir()) == sorted(READERS)


@pytest.mark.parametrize("name", sorted(READERS))
def test_fixture_file_reads_exactly(h200: Path, name: str) -> None:
    READERS[name](h200 / name)


def _phase_times(path: Path) -> dict[str, float]:
    times: dict[str, float] = {}
    for line in path.read_text().splitlines():
        stamp, _, what = line.partition(" ")
        times[what] = float(stamp)
    return times


def _used_at(samples: tuple[GpuSample, ...], when: float) -> float:
    """Memory of the last reading at or before ``when``."""
    before = [s for s in samples if s.timestamp is not None and s.timestamp <= when]
    return before[-1].memory_used_mib or 0.0 if before else 0.0


def test_memory_climbs_shard_by_shard_then_jumps_at_kv_cache(h200: Path) -> None:
    samples = parse_query_gpu((h200 / "query-gpu-lms250.csv").read_bytes()).samples
    phases = _phase_times(h200 / "torch-phases.log")
    shard = 5 * 1024
    assert _used_at(samples, phases["load weights begin"]) == 0.0
    for number in range(1, 9):
        settled = phases[f"shard {number}/8 loaded"] + 0.9
        assert _used_at(samples, settled) >= number * shard
    before_kv = _used_at(samples, phases["kv cache alloc"])
    after_kv = _used_at(samples, phases["kv cache alloc"] + 1.5)
    assert after_kv - before_kv >= 60 * 1024 * 0.99


def test_utilisation_is_busy_only_while_the_program_works(h200: Path) -> None:
    samples = parse_query_gpu((h200 / "query-gpu-lms250.csv").read_bytes()).samples
    phases = _phase_times(h200 / "torch-phases.log")
    begin, end = phases["busy begin"], phases["busy end"]
    busy = [s for s in samples if s.timestamp and begin + 1.0 < s.timestamp < end - 0.5]
    idle = [s for s in samples if s.timestamp and s.timestamp < phases["kv cache alloc"]]
    assert busy
    assert all(s.util_pct == 100.0 for s in busy)
    assert all(s.util_pct == 0.0 for s in idle)
    after_exit = [s for s in samples if s.timestamp and s.timestamp > phases["exit"] + 1.0]
    assert after_exit
    assert all(s.memory_used_mib == 0.0 for s in after_exit)
