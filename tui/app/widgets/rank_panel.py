"""One rank's panel: stage and time in it, progress, memory figures and the last line."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import ClassVar

from textual.content import Content
from textual.geometry import Region
from textual.strip import Strip
from textual.widget import Widget

from tui.app.widgets import cell_format as fmt
from tui.app.widgets.content_line import LineMaker, LineSlot, blank, draw_line
from tui.app.widgets.gpu_widgets import RankGpuView, panel_line
from tui.engine.logs.sanitize import printable
from tui.engine.metrics.figure_text import Cells
from tui.engine.startup.snapshot import PhaseState, Progress, RankState
from tui.engine.startup.vocabulary import Phase

_STATE_CLASSES = ("-starting", "-ready", "-failed", "-lagging")
_FULL_ROWS = 4
"""Stage and timer, progress, memory figures, the last line."""
_COMPACT_ROWS = 2
_LAST_ROW = 3
_MIN_WIDTH = 8


@dataclass(frozen=True, slots=True)
class RankCard:
    """What a panel shows; panels repaint only when this changes."""

    rank: RankState
    seconds_in_stage: int
    usual_seconds: int | None = None
    flag: str = ""
    failing: bool = False
    gpu: RankGpuView | None = None
    """The rank's GPU (telemetry joined with the log's memory figures), when known."""
    approx: Progress | None = None
    """Another rank's progress in the same step, shown as ``≈`` when this one prints no bars."""
    serving: Cells = ()
    """Once serving, the figures that belong on this panel (its engine's, or the server's on
    the first rank's), shown instead of the progress bar."""

    @property
    def lagging(self) -> bool:
        """Lagging the other ranks or stalled in its stage."""
        return bool(self.flag)


class RankPanel(Widget, can_focus=True):
    """A rank's state, full (bordered, four lines) or compact (two lines) when ranks are many.

    The panel draws its lines itself, each laid out for the width it has, and repaints only the
    line that changed (usually the last log line, or the stage timer).
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = {"rank-panel--last"}
    DEFAULT_CSS = """
    RankPanel {
        width: 1fr;
        height: 6;
        border: round $stage-loading;
        border-title-color: $foreground;
        padding: 0 1;
        &.-ready { border: round $rank-ready; }
        &.-failed { border: heavy $rank-failed; }
        &.-lagging { border: round $rank-stalled; }
        &.-failing { border: double $rank-failed; }
        &:focus { border-title-style: reverse; }
        & > .rank-panel--last { color: $text-muted; }
        &.-compact {
            height: 2;
            border: none;
            padding: 0 1 0 0;
            border-left: outer $stage-loading;
            &.-ready { border-left: outer $rank-ready; }
            &.-failed, &.-failing { border-left: outer $rank-failed; }
            &.-lagging { border-left: outer $rank-stalled; }
            &:focus { background: $boost; }
        }
    }
    """

    def __init__(self, tag: str) -> None:
        super().__init__()
        self.tag = tag
        self.card: RankCard | None = None
        self.border_title = Content(printable(tag))
        self._slots = [LineSlot() for _ in range(_FULL_ROWS)]

    @property
    def line_width(self) -> int:
        return max(_MIN_WIDTH, self.size.width)

    @property
    def rows(self) -> int:
        """The lines shown: all four, or the first two when compact."""
        return _COMPACT_ROWS if self.has_class("-compact") else _FULL_ROWS

    def on_resize(self) -> None:
        self.redraw()

    def redraw(self) -> None:
        """Lay the current card out again (after a size or compact change)."""
        card, self.card = self.card, None
        for slot in self._slots:
            slot.key = None
        self.refresh()
        if card is not None:
            self.show(card)

    def show(self, card: RankCard) -> None:
        """Take the latest state; repaint only the lines that differ from what is on screen."""
        if card == self.card:
            return
        self.card = card
        wanted = fmt.state_class(card.rank, card.lagging)
        for name in _STATE_CLASSES:
            self.set_class(name == wanted, name)
        self.set_class(card.failing, "-failing")
        width = self.line_width
        for row, (slot, (make, key)) in enumerate(zip(self._slots, self.lines(card), strict=True)):
            if slot.set(make, key, width) and row < self.rows:
                self.refresh(Region(0, row, width, 1))

    def render(self) -> Content:
        """The lines on screen (what a text selection copies)."""
        return Content("\n").join(slot.drawn or Content("") for slot in self._slots[: self.rows])

    def render_line(self, y: int) -> Strip:
        line = self._slots[y].line(self.line_width) if y < self.rows else Content("")
        style = self.get_visual_style("rank-panel--last") if y == _LAST_ROW else self.visual_style
        return draw_line(self, line, y, style)

    def lines(self, card: RankCard) -> list[tuple[LineMaker, object]]:
        """The four lines (compact: the first two carry everything), as functions of width,
        each with the values it depends on."""
        rank = card.rank
        stage_key = (card.seconds_in_stage, card.usual_seconds, card.flag, card.failing,
                     rank.tag, rank.stage, rank.draft, rank.failed)  # fmt: skip
        if self.has_class("-compact"):
            bar_key = ("compact", rank.progress, card.approx, rank.kv_tokens, card.serving,
                       rank.phase)  # fmt: skip
            return [
                (partial(self._stage_line, card, with_tag=True), ("compact", stage_key)),
                (partial(self._compact_bar, card), bar_key),
                (blank, "blank"),
                (blank, "blank"),
            ]
        return [
            (partial(self._stage_line, card, with_tag=False), stage_key),
            (
                partial(self._progress_line, card),
                (rank.progress, card.approx, rank.phase, card.serving),
            ),
            (partial(self._memory, card), (rank.avail_gb, rank.used_gb, rank.kv_tokens, card.gpu)),
            (partial(_last_line, rank.last_message or rank.last_line), rank.last_line),
        ]

    def render_text(self) -> str:
        """What the panel shows, as plain text (for tests and screen readers)."""
        shown = [slot.make(self.line_width).plain for slot in self._slots[: self.rows]]
        return "\n".join(shown)

    def _memory(self, card: RankCard, width: int) -> Content:
        return panel_line(card.gpu, width) or self._memory_line(card.rank, width)

    def _stage_line(self, card: RankCard, width: int, with_tag: bool) -> Content:
        rank = card.rank
        label = fmt.stage_label(rank)
        if card.flag:
            label = f"{label} · {card.flag}"
        if rank.failed:
            label = f"{label} · FAILED"
        timer = fmt.clock(card.seconds_in_stage)
        if card.usual_seconds is not None and not with_tag:
            timer = f"{timer} / ~{fmt.clock(card.usual_seconds)}"
        tag = Content.styled(f"{printable(rank.tag)} ", "bold") if with_tag else Content("")
        room = max(1, width - len(timer) - 1 - tag.cell_length)
        left = tag + Content.styled(label, f"bold {fmt.stage_style(rank, card.lagging)}")
        left = left.truncate(room + tag.cell_length, ellipsis=True)
        gap = max(1, width - left.cell_length - len(timer))
        return Content.assemble(left, " " * gap, timer)

    def _progress_line(self, card: RankCard, width: int) -> Content:
        if card.serving:
            return fmt.cells_line(card.serving, width)
        phase = card.rank.phase
        if phase is not None and phase.running and phase.stage is card.rank.stage:
            return _phase_line(phase, width)
        progress = card.rank.progress or card.approx
        if progress is None:
            return fmt.bar(0.0, width).stylize("dim")
        approx = "≈ " if card.rank.progress is None else ""
        detail = f" {approx}{progress.done}/{progress.total} {fmt.progress_label(progress.label)}"
        detail = detail[: max(0, width // 2)]
        return fmt.bar(progress.fraction, width - len(detail)) + Content(detail)

    def _memory_line(self, rank: RankState, width: int) -> Content:
        parts = [
            ("avail ", fmt.gigabytes(rank.avail_gb)),
            ("  used ", fmt.gigabytes(rank.used_gb)),
            ("  KV ", fmt.tokens(rank.kv_tokens)),
        ]
        content = Content.assemble(
            *(piece for name, value in parts for piece in ((name, "$text-muted"), value))
        )
        return content.truncate(width, ellipsis=True)

    def _compact_bar(self, card: RankCard, width: int) -> Content:
        if card.serving:
            return fmt.cells_line(card.serving, width)
        phase = card.rank.phase
        if phase is not None and phase.running and phase.stage is card.rank.stage:
            return _compact_phase(phase, width)
        progress = card.rank.progress or card.approx
        fraction = progress.fraction if progress is not None else 0.0
        tail = f" {fmt.tokens(card.rank.kv_tokens)} KV" if card.rank.kv_tokens else ""
        if progress is not None:
            approx = "≈" if card.rank.progress is None else ""
            tail = f" {approx}{progress.done}/{progress.total}"
        return fmt.bar(fraction, max(1, width - len(tail))) + Content(tail)


def _phase_line(phase: PhaseState, width: int) -> Content:
    """A compile or JIT phase inside the stage: its bar when it draws one, else its count."""
    detail = f" {printable(phase.label)}"[: max(0, width // 2 if phase.total else width - 4)]
    fraction = phase.done / phase.total if phase.total else 0.0
    bar = fmt.bar(fraction, max(1, width - len(detail)))
    return (bar if phase.total else bar.stylize("dim")) + Content(detail)


_SHORT_PHASES = {
    Phase.TORCH_COMPILE: "compile",
    Phase.FLASHINFER_AUTOTUNE: "autotune",
    Phase.FLASHINFER_JIT: "JIT",
    Phase.DEEPGEMM_JIT: "JIT",
    Phase.AITER_BUILD: "build",
}
"""A phase's name where a compact panel has a few cells for it."""


def _compact_phase(phase: PhaseState, width: int) -> Content:
    """``JIT 3/8`` (or ``build 3``) after the phase's bar, on a compact panel's second line."""
    count = f"{phase.done}/{phase.total}" if phase.total is not None else str(phase.done)
    tail = f" {_SHORT_PHASES.get(phase.phase, phase.phase.label)} {count}"[: max(0, width - 1)]
    fraction = phase.done / phase.total if phase.total else 0.0
    bar = fmt.bar(fraction, max(1, width - len(tail)))
    return (bar if phase.total else bar.stylize("dim")) + Content(tail)


def _last_line(text: str, width: int) -> Content:
    return fmt.single_line(text, width)
