"""Short, fixed-width renderings of times, sizes and bars, built as Content (never markup)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from textual.content import Content

from tui.engine.logs.sanitize import printable
from tui.engine.startup.snapshot import RankState
from tui.engine.startup.vocabulary import Stage

_BAR_DONE = "━"
_BAR_TODO = "─"


def clock(seconds: float) -> str:
    """``mm:ss`` below an hour, ``h:mm:ss`` above."""
    if not math.isfinite(seconds):
        return "--:--"
    whole = max(0, int(seconds))
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes:02d}:{secs:02d}"


def gigabytes(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}G"


def tokens(value: int | None) -> str:
    """Token counts the way people say them: 950, 12.3k, 1.19M."""
    if value is None:
        return "-"
    if value >= 1_000_000:
        return f"{value / 1_000_000:.2f}M"
    if value >= 1_000:
        return f"{value / 1_000:.1f}k"
    return str(value)


def bar(fraction: float, width: int, style: str = "$progress-done") -> Content:
    """A horizontal bar; the empty part uses the theme's track colour."""
    width = max(1, width)
    clamped = min(1.0, max(0.0, fraction))
    done = round(clamped * width)
    return Content.assemble(
        (_BAR_DONE * done, style), (_BAR_TODO * (width - done), "$progress-track")
    )


def progress_label(label: str) -> str:
    """A progress bar's description cut to what fits beside a bar: ``shards``, ``bs=64``."""
    if "(bs=" in label:
        return label[label.index("(bs=") + 1 :].split()[0].rstrip(")")
    words = label.split()
    return words[-1] if words else ""


def stage_label(rank: RankState) -> str:
    """The stage as the panel titles it, marking the draft model's part."""
    label = rank.stage.label
    if rank.draft and rank.stage in (Stage.WEIGHT_LOADING, Stage.KV_CACHE, Stage.CUDA_GRAPH):
        return f"{label} (draft)"
    return label


def stage_style(rank: RankState, lagging: bool) -> str:
    """The semantic colour of a rank's state."""
    if rank.failed:
        return "$rank-failed"
    if lagging:
        return "$rank-stalled"
    if rank.stage.order >= Stage.READY.order:
        return "$rank-ready"
    if rank.stage in (Stage.CUDA_GRAPH, Stage.WARMUP):
        return "$stage-graph"
    if rank.stage in (Stage.PROCESS_START, Stage.ARGS):
        return "$stage-waiting"
    return "$stage-loading"


def state_class(rank: RankState, lagging: bool) -> str:
    """The CSS class that colours a rank panel."""
    if rank.failed:
        return "-failed"
    if lagging:
        return "-lagging"
    if rank.stage.order >= Stage.READY.order:
        return "-ready"
    return "-starting"


def single_line(text: str, width: int) -> Content:
    """One line of untrusted text, plain (no markup), cut to ``width`` cells with an ellipsis."""
    first = text.splitlines()[0] if text else ""
    return Content(printable(first[: width * 4])).truncate(max(1, width), ellipsis=True)


def cells_line(cells: Sequence[tuple[str, str]], width: int, gap: str = "  ") -> Content:
    """``tok/s 1600  run 4  queue 0`` with as many cells as fit ``width``, never wrapped."""
    line = Content("")
    for label, value in cells:
        part = Content.assemble(gap if line else "", (f"{label} ", "$text-muted"), (value, "bold"))
        if line.cell_length + part.cell_length > width:
            break
        line = line + part
    return line
