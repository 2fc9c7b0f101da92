"""GPU telemetry on screen: a rank's GPU line, the header total, the rank-to-GPU map.

Every piece is built as :class:`~textual.content.Content` from plain strings (GPU and process
names come from the host and are never read as markup), so the lines can be shown by the
widgets here or spliced into another widget's ``render``. Memory is shown in GiB with a ``G``
suffix, like the log's figures (SGLang's ``avail mem=... GB`` is GiB as well), and the log's
``avail mem`` sits beside the free memory the GPU reports when both exist.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

from textual.content import Content
from textual.message import Message
from textual.widget import Widget

from tui.engine.gpu.gpu_map import MapSource, RankGpu
from tui.engine.gpu.gpu_state import GpuSnapshot, GpuState
from tui.engine.gpu.gpu_values import NoTelemetry
from tui.engine.logs.sanitize import printable
from tui.engine.startup.snapshot import RankState

_LEVELS = " ▁▂▃▄▅▆▇█"
STALE_AFTER = 5.0
"""Seconds without a reading after which figures are shown as stale."""


class GpuTelemetryUpdated(Message):
    """A new GPU snapshot arrived from the telemetry channel of the host running ``nodes``."""

    def __init__(self, snapshot: GpuSnapshot, nodes: tuple[int, ...] = (0,)) -> None:
        super().__init__()
        self.snapshot = snapshot
        self.nodes = nodes

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, GpuTelemetryUpdated) and message.nodes == self.nodes


@dataclass(frozen=True, slots=True)
class RankGpuView:
    """What one rank's GPU line shows; widgets repaint only when this changes."""

    placement: RankGpu | None
    gpu: GpuState | None
    missing: NoTelemetry | None = None
    stale: bool = False
    log_avail_gb: float | None = None


def rank_gpu_view(
    rank: RankState,
    snapshot: GpuSnapshot,
    placements: Sequence[RankGpu],
    now: float,
    stale_after: float = STALE_AFTER,
) -> RankGpuView:
    """Join a rank, its GPU placement and the latest GPU snapshot into one view."""
    placement = next((p for p in placements if p.rank == rank.tag), None)
    gpu = snapshot.gpu(placement.gpu) if placement and placement.gpu is not None else None
    stale = snapshot.missing is not None or snapshot.stale(now, stale_after)
    return RankGpuView(placement, gpu, snapshot.missing, stale and gpu is not None, rank.avail_gb)


def gib(mib: float | None) -> str:
    """MiB as GiB with a ``G`` suffix (``-`` when unknown)."""
    return "-" if mib is None else f"{mib / 1024:.1f}G"


def sparkline(values: Sequence[float], width: int, top: float | None = None) -> str:
    """``values`` squeezed into ``width`` block characters (the highest value of each slice)."""
    if width <= 0 or not values:
        return ""
    ceiling = top if top else max(values)
    peaks = _slice_peaks(values, min(width, len(values)))
    last = len(_LEVELS) - 1
    scale = last / ceiling if ceiling > 0 else 0.0
    return "".join(_LEVELS[min(last, max(0, round(v * scale)))] for v in peaks)


def _slice_peaks(values: Sequence[float], slices: int) -> list[float]:
    """The highest value of each of ``slices`` consecutive, equal slices of ``values``."""
    bounds = [round(i * len(values) / slices) for i in range(slices + 1)]
    return [max(values[start : max(end, start + 1)]) for start, end in pairwise(bounds)]


def _where(placement: RankGpu | None) -> Content:
    if placement is None or placement.gpu is None:
        return Content.styled("GPU ?", "$text-muted")
    guess = "?" if placement.source is MapSource.ORDER else ""
    return Content.styled(f"GPU {placement.gpu}{guess}", "bold")


def _no_telemetry(view: RankGpuView, width: int) -> Content:
    if view.missing is not None:
        text = f" no telemetry ({printable(view.missing.reason)})"
    elif view.placement is not None and view.placement.gpu is not None:
        text = " no reading yet"
    else:
        note = view.placement.note if view.placement else "not mapped"
        text = f" ({printable(note)})"
    line = _where(view.placement) + Content.styled(text, "$text-muted")
    return line.truncate(width, ellipsis=True)


def gpu_line(view: RankGpuView, width: int) -> Content:
    """``GPU 3 41.2/140.4G ▁▂▅█ 100% 690W``, or the reason there is nothing to show.

    When the width is short, power goes first, then the sparkline narrows.
    """
    gpu = view.gpu
    if gpu is None:
        return _no_telemetry(view, width)
    sample = gpu.sample
    memory = f" {gib(sample.memory_used_mib).rstrip('G')}/{gib(sample.memory_total_mib)} "
    util = " util n/a" if sample.util_pct is None else f" {sample.util_pct:.0f}%"
    power = "" if sample.power_w is None else f" {sample.power_w:.0f}W"
    stale = " stale" if view.stale else ""
    head = _where(view.placement) + Content(memory)
    room = width - head.cell_length - len(util) - len(stale)
    if room < len(power) + 4:
        power = ""
    room = max(0, room - len(power))
    spark = sparkline(gpu.memory_mib, min(room, 24), sample.memory_total_mib)
    line = head + Content.styled(spark, "$progress-done") + Content(util + power + stale)
    line = line.truncate(width, ellipsis=True)
    return line.stylize("dim") if view.stale else line


def panel_line(view: RankGpuView | None, width: int) -> Content | None:
    """The rank panel's memory line with the GPU's figures and the log's ``avail mem``;
    None when the GPU has given no reading (the panel keeps its log-only line)."""
    if view is None or view.gpu is None:
        return None
    avail = "" if view.log_avail_gb is None else f" · avail {view.log_avail_gb:.1f}G"
    if width - len(avail) < 28:
        avail = ""
    return gpu_line(view, width - len(avail)) + Content.styled(avail, "$text-muted")


def memory_pair(view: RankGpuView) -> Content | None:
    """``free 63.3G GPU · avail 63.1G log`` when both the GPU and the log give a figure."""
    free = view.gpu.free_mib if view.gpu is not None else None
    if free is None or view.log_avail_gb is None:
        return None
    return Content.assemble(
        ("free ", "$text-muted"),
        gib(free),
        (" GPU · avail ", "$text-muted"),
        f"{view.log_avail_gb:.1f}G",
        (" log", "$text-muted"),
    )


def summary_line(snapshot: GpuSnapshot, now: float, stale_after: float = STALE_AFTER) -> Content:
    """The header's total: ``GPU 412.3/1150.2G · 8 GPUs · util 97%``, or why there is none."""
    if not snapshot.gpus:
        reason = snapshot.missing.reason if snapshot.missing else "waiting for nvidia-smi"
        return Content.assemble(("GPU ", "bold"), (f"no telemetry ({printable(reason)})", "dim"))
    utils = [g.sample.util_pct for g in snapshot.gpus if g.sample.util_pct is not None]
    count = len(snapshot.gpus)
    parts: list[str | tuple[str, str]] = [
        ("GPU ", "bold"),
        f"{gib(snapshot.used_mib).rstrip('G')}/{gib(snapshot.total_mib)}",
        (f" · {count} GPU{'s' if count != 1 else ''}", "$text-muted"),
    ]
    if utils:
        parts.append((f" · util {sum(utils) / len(utils):.0f}%", "$text-muted"))
    if snapshot.missing is not None:
        parts.append((f" · stale: {printable(snapshot.missing.reason)}", "$warning"))
    elif snapshot.stale(now, stale_after):
        parts.append((" · stale", "$warning"))
    return Content.assemble(*parts)


def map_lines(placements: Sequence[RankGpu]) -> Content:
    """One line per rank: ``TP0 → GPU 4  launch: device 0 of CUDA_VISIBLE_DEVICES=4,5,6,7``."""
    lines = []
    several = any(placement.node for placement in placements)
    for placement in placements:
        target = "?" if placement.gpu is None else str(placement.gpu)
        if several:
            target = f"{target} on node {placement.node}"
        note = f": {placement.note}" if placement.note else ""
        lines.append(
            Content.assemble(
                (printable(placement.rank), "bold"),
                f" → GPU {target}  ",
                (f"{placement.source.value}{printable(note)}", "$text-muted"),
            )
        )
    return Content("\n").join(lines) if lines else Content("no ranks yet")


class GpuGauge(Widget):
    """One rank's GPU: memory used/total with its sparkline since the start, utilisation, power;
    the log's ``avail mem`` beside the GPU's free memory; or "no telemetry (reason)"."""

    DEFAULT_CSS = """
    GpuGauge { height: auto; min-height: 1; }
    """

    def __init__(self, view: RankGpuView | None = None, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.view = view

    def show(self, view: RankGpuView) -> None:
        """Take the latest view; repaint only when it changed."""
        if view != self.view:
            self.view = view
            self.refresh(layout=True)

    def render(self) -> Content:
        if self.view is None:
            return Content.styled("GPU ? waiting for telemetry", "$text-muted")
        width = max(10, self.content_region.width)
        pair = memory_pair(self.view)
        first = gpu_line(self.view, width)
        return first if pair is None else Content("\n").join([first, pair.truncate(width)])


class GpuSummary(Widget):
    """The header's total GPU memory, GPU count and mean utilisation, or "no telemetry"."""

    DEFAULT_CSS = """
    GpuSummary { height: 1; width: 1fr; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.snapshot = GpuSnapshot()
        self.now = 0.0
        self._shown: Content | None = None

    def show(self, snapshot: GpuSnapshot, now: float) -> None:
        """Take the latest telemetry; repaint only when the line changed (the widget takes its
        row's width, so a longer or shorter line never lays the header out again)."""
        self.snapshot, self.now = snapshot, now
        line = summary_line(snapshot, now)
        if self._shown is None or not line.is_same(self._shown):
            self._shown = line
            self.refresh()

    def render(self) -> Content:
        return summary_line(self.snapshot, self.now)


class GpuMapList(Widget):
    """Which GPU each rank is on and how that was found, so a wrong guess can be corrected."""

    DEFAULT_CSS = """
    GpuMapList { height: auto; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.placements: tuple[RankGpu, ...] = ()

    def show(self, placements: Sequence[RankGpu]) -> None:
        if tuple(placements) != self.placements:
            self.placements = tuple(placements)
            self.refresh(layout=True)

    def render(self) -> Content:
        return map_lines(self.placements)
