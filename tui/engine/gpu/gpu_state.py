"""Live GPU state: the latest reading per GPU, its memory over the whole start, and gaps.

:class:`GpuTelemetry` takes the batches the parser produces and hands out frozen
:class:`GpuSnapshot` values for the screen. Memory and utilisation histories stay bounded however
long the stream runs: when a history is full, neighbouring points are merged (keeping the higher
one, so a peak is never averaged away) and new points cover twice the time, so the sparkline
always spans the whole start. :func:`busy_gpus` names the GPUs already holding memory or
processes, for the warning before a launch.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from tui.engine.gpu.gpu_values import ComputeApp, GpuBatch, GpuSample, NoTelemetry, RowProblem

HISTORY = 120
"""Points kept per GPU history (older points are merged, never dropped)."""

BUSY_MIB = 1024.0
"""Memory above which an idle GPU counts as already in use before a launch."""


@dataclass(slots=True)
class _History:
    """A bounded series covering the whole stream: full means pairs merge and strides double."""

    size: int
    points: list[float] = field(default_factory=list)
    stride: int = 1
    bucket: float | None = None
    filled: int = 0

    def add(self, value: float) -> None:
        self.bucket = value if self.bucket is None else max(self.bucket, value)
        self.filled += 1
        if self.filled < self.stride:
            return
        self.points.append(self.bucket)
        self.bucket, self.filled = None, 0
        if len(self.points) >= self.size:
            pairs = zip(self.points[0::2], self.points[1::2], strict=False)
            merged = [max(a, b) for a, b in pairs]
            self.points = merged + (self.points[-1:] if len(self.points) % 2 else [])
            self.stride *= 2

    def values(self) -> tuple[float, ...]:
        pending = () if self.bucket is None else (self.bucket,)
        return (*self.points, *pending)


@dataclass(frozen=True, slots=True)
class GpuState:
    """One GPU as the screen shows it: the latest sample and its history since the start."""

    sample: GpuSample
    memory_mib: tuple[float, ...] = ()
    util_pct: tuple[float, ...] = ()
    peak_used_mib: float | None = None
    seen_at: float = 0.0

    @property
    def index(self) -> int:
        return self.sample.index

    @property
    def free_mib(self) -> float | None:
        used, total = self.sample.memory_used_mib, self.sample.memory_total_mib
        return None if used is None or total is None else max(total - used, 0.0)


@dataclass(frozen=True, slots=True)
class GpuSnapshot:
    """Every GPU of a host at one instant, or why there is no telemetry (``missing``).

    The last known GPU states are kept while ``missing`` is set, so a screen can show them as
    stale instead of going blank.
    """

    gpus: tuple[GpuState, ...] = ()
    missing: NoTelemetry | None = None
    seen_at: float | None = None
    samples: int = 0
    problems: tuple[RowProblem, ...] = ()
    problem_count: int = 0

    def gpu(self, index: int) -> GpuState | None:
        return next((gpu for gpu in self.gpus if gpu.index == index), None)

    @property
    def used_mib(self) -> float:
        return sum(gpu.sample.memory_used_mib or 0.0 for gpu in self.gpus)

    @property
    def total_mib(self) -> float:
        return sum(gpu.sample.memory_total_mib or 0.0 for gpu in self.gpus)

    def stale(self, now: float, after: float) -> bool:
        """True when the newest reading is older than ``after`` seconds (or there is none)."""
        return self.seen_at is None or now - self.seen_at > after


def merged(snapshots: Sequence[tuple[int, GpuSnapshot]]) -> GpuSnapshot:
    """The GPUs of several hosts as one snapshot (node by node), for totals: stale as soon as
    one host is, and without telemetry, with the first such node named, when one host has
    none."""
    if len(snapshots) == 1:
        return snapshots[0][1]
    missing = next(
        (replace(s.missing, node=node) for node, s in snapshots if s.missing is not None),
        None,
    )  # fmt: skip
    seen = [s.seen_at for _, s in snapshots]
    return GpuSnapshot(
        gpus=tuple(gpu for _, s in snapshots for gpu in s.gpus),
        missing=missing,
        seen_at=None if None in seen else min(t for t in seen if t is not None),
        samples=sum(s.samples for _, s in snapshots),
        problems=tuple(problem for _, s in snapshots for problem in s.problems),
        problem_count=sum(s.problem_count for _, s in snapshots),
    )


@dataclass(slots=True)
class _Gpu:
    sample: GpuSample
    memory: _History
    util: _History
    peak: float | None = None
    seen_at: float = 0.0

    def update(self, sample: GpuSample, now: float) -> None:
        self.sample, self.seen_at = sample, now
        if sample.memory_used_mib is not None:
            self.memory.add(sample.memory_used_mib)
            self.peak = max(self.peak or 0.0, sample.memory_used_mib)
        if sample.util_pct is not None:
            self.util.add(sample.util_pct)

    def state(self) -> GpuState:
        return GpuState(
            self.sample, self.memory.values(), self.util.values(), self.peak, self.seen_at
        )


class GpuTelemetry:
    """Accumulates parsed batches into snapshots; time comes from the injected ``clock``."""

    def __init__(self, clock: Callable[[], float], history: int = HISTORY) -> None:
        self._clock = clock
        self._history = max(history, 2)
        self._gpus: dict[int, _Gpu] = {}
        self._missing: NoTelemetry | None = None
        self._seen_at: float | None = None
        self._samples = 0
        self._problems: deque[RowProblem] = deque(maxlen=5)
        self._problem_count = 0

    def apply(self, batch: GpuBatch) -> None:
        """Take one batch: samples update their GPU, a failure becomes the missing reason."""
        now = self._clock()
        for sample in batch.samples:
            self._gpu(sample).update(sample, now)
        if batch.samples:
            self._samples += len(batch.samples)
            self._seen_at, self._missing = now, None
        if batch.failure is not None:
            self._missing = batch.failure
        self._problems.extend(batch.problems)
        self._problem_count += len(batch.problems)

    def lost(self, reason: NoTelemetry) -> None:
        """The channel has no telemetry now (stream ended, host unreachable, no nvidia-smi)."""
        self._missing = reason

    def snapshot(self) -> GpuSnapshot:
        states = tuple(self._gpus[index].state() for index in sorted(self._gpus))
        return GpuSnapshot(
            states,
            self._missing,
            self._seen_at,
            self._samples,
            tuple(self._problems),
            self._problem_count,
        )

    def _gpu(self, sample: GpuSample) -> _Gpu:
        known = self._gpus.get(sample.index)
        if known is None or (known.sample.uuid and sample.uuid != known.sample.uuid):
            known = _Gpu(sample, _History(self._history), _History(self._history))
            self._gpus[sample.index] = known
        return known


@dataclass(frozen=True, slots=True)
class BusyGpu:
    """A GPU already holding memory or processes (``index`` None: a GPU nvidia-smi did not name)."""

    index: int | None
    uuid: str | None
    used_mib: float | None
    total_mib: float | None
    apps: tuple[ComputeApp, ...] = ()

    def describe(self) -> str:
        """One line such as ``GPU 3: 41478 MiB used; pid 419 python3 (41478 MiB)``."""
        where = f"GPU {self.index}" if self.index is not None else "a GPU"
        used = f"{self.used_mib:.0f} MiB used" if self.used_mib is not None else "memory unknown"
        holders = "; ".join(_holder(app) for app in self.apps)
        return f"{where}: {used}" + (f"; {holders}" if holders else "")


def _holder(app: ComputeApp) -> str:
    used = f" ({app.used_memory_mib:.0f} MiB)" if app.used_memory_mib is not None else ""
    return f"pid {app.pid} {app.process_name}".rstrip() + used


def gpu_of(app: ComputeApp, gpus: Sequence[GpuSample]) -> int | None:
    """The index of the GPU a process runs on, from its GPU index, UUID or bus id (with a
    single GPU, that one)."""
    for gpu in gpus:
        if app.gpu_index is not None and app.gpu_index == gpu.index:
            return gpu.index
        if app.gpu_uuid and gpu.uuid and app.gpu_uuid.lower() == gpu.uuid.lower():
            return gpu.index
        if app.gpu_bus_id and gpu.bus_id and app.gpu_bus_id.lower() == gpu.bus_id.lower():
            return gpu.index
    return gpus[0].index if len(gpus) == 1 else None


def busy_gpus(
    gpus: Sequence[GpuSample], apps: Sequence[ComputeApp], min_used_mib: float = BUSY_MIB
) -> tuple[BusyGpu, ...]:
    """GPUs holding a process or more than ``min_used_mib`` of memory, in index order."""
    placed: dict[int | None, list[ComputeApp]] = {}
    for app in apps:
        placed.setdefault(gpu_of(app, gpus), []).append(app)
    busy = [
        BusyGpu(gpu.index, gpu.uuid, gpu.memory_used_mib, gpu.memory_total_mib, tuple(holders))
        for gpu in sorted(gpus, key=lambda sample: sample.index)
        if (holders := placed.get(gpu.index, [])) or (gpu.memory_used_mib or 0.0) > min_used_mib
    ]
    if placed.get(None):
        busy.append(BusyGpu(None, None, None, None, tuple(placed[None])))
    return tuple(busy)
