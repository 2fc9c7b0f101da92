"""The main screen: header, rank grid, benchmark pane, failure view and the footer of keys."""

from __future__ import annotations

from collections.abc import Sequence

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer

from tui.app.bench.bench_pane import BenchPane
from tui.app.launch.kernel_log_check import KernelLogCheck
from tui.app.monitor.view_model import MonitorView
from tui.app.serving.serving_panel import ServingPanel
from tui.app.serving.serving_state import ServingState
from tui.app.widgets.failure_panel import FailurePanel
from tui.app.widgets.gpu_widgets import RankGpuView, rank_gpu_view
from tui.app.widgets.header import StatusHeader
from tui.app.widgets.rank_grid import RankGrid
from tui.app.widgets.rank_panel import RankCard, RankPanel
from tui.engine.judge.stall import usual_for
from tui.engine.metrics.figure_text import panel_cells
from tui.engine.startup.snapshot import Progress, RankState
from tui.engine.startup.vocabulary import Stage, Verdict
from tui.engine.timing.estimate import startup_ranks

PANEL_CLOCK_STEP = 10.0
"""Seconds between steps of the panels' stage timers in a stage that usually lasts a minute or
more, and while serving. They all step together, aligned to the clock, so a quiet screen
repaints its panels every ten seconds rather than every second (the header's timer still counts
seconds while the server starts); a stage that usually lasts less counts in seconds. A quiet
READY screen repaints once per step (``FRAME_SECONDS``), with every reading taken since."""
FINE_CLOCK_BELOW = 60.0


def clock_step(now: float) -> int:
    """Which step of the panels' stepped clocks ``now`` falls in."""
    return int(now // PANEL_CLOCK_STEP)


def _usual(view: MonitorView, rank: RankState, ended: bool) -> float | None:
    """How long the rank's stage usually lasts (None once it is over: in service, failed or
    ended), which sets whether its clock counts seconds."""
    if ended or rank.failed or rank.stage.order >= Stage.READY.order:
        return None
    return usual_for(view.plan, rank.stage, rank.draft).median


def counts_seconds(view: MonitorView) -> bool:
    """Some rank panel's clock counts every second (a short stage still running)."""
    ended = view.snapshot.stopped or view.snapshot.failure is not None
    for rank in startup_ranks(view.snapshot):
        usual = _usual(view, rank, ended)
        if usual is not None and usual < FINE_CLOCK_BELOW:
            return True
    return False


def rank_cards(view: MonitorView, serving: ServingState | None = None) -> list[RankCard]:
    """One card per rank, with the time spent in its current stage from the injected clock,
    whether or not the rank prints (in steps of ``PANEL_CLOCK_STEP`` in a long stage and while
    serving, taken together for every panel); a failed rank's stops at its last line, every
    rank's at the last line once the server stopped or failed. A serving rank of a DEGRADED
    server is flagged ``degraded``; once the server serves, each card carries the figures of
    ``serving`` that belong to it."""
    failure = view.snapshot.failure
    failing = failure.rank if failure is not None else None
    flags = {status.tag: status.health.value for status in view.statuses if status.flagged}
    cards = []
    shown = startup_ranks(view.snapshot)
    ended = view.snapshot.stopped or failure is not None
    last_word = max((rank.last_seen_at for rank in shown), default=view.now)
    stepped = view.now - view.now % PANEL_CLOCK_STEP
    cells = (
        {}
        if serving is None
        else panel_cells([r.tag for r in shown], serving.figures, serving.ranks)
    )
    for rank in shown:
        in_service = rank.stage.order >= Stage.READY.order
        frozen = ended or rank.failed or in_service
        usual = _usual(view, rank, ended)
        fine = usual is not None and usual < FINE_CLOCK_BELOW
        running = view.now if fine else stepped
        end = last_word if ended else rank.last_seen_at if rank.failed else running
        degraded = in_service and not ended and view.verdict is Verdict.DEGRADED
        cards.append(
            RankCard(
                rank=rank,
                seconds_in_stage=int(max(0.0, end - rank.stage_started_at)),
                usual_seconds=None if usual is None else int(usual),
                flag="degraded" if degraded else flags.get(rank.tag, ""),
                failing=rank.tag == failing,
                gpu=_gpu_view(view, rank),
                approx=None if frozen else approximate_progress(rank, shown),
                serving=cells.get(rank.tag, ()),
            )
        )
    return cards


_BARS_ON_ONE_RANK = (Stage.WEIGHT_LOADING, Stage.CUDA_GRAPH)


def approximate_progress(rank: RankState, ranks: Sequence[RankState]) -> Progress | None:
    """For a rank without bars of its own in weight loading or graph capture: the progress of a
    rank in the same step that prints them (SGLang draws the bars on TP0 only)."""
    if rank.progress is not None or rank.stage not in _BARS_ON_ONE_RANK:
        return None
    return next(
        (other.progress for other in ranks
         if other.progress is not None and other.stage is rank.stage and other.draft == rank.draft),
        None,
    )  # fmt: skip


def _gpu_view(view: MonitorView, rank: RankState) -> RankGpuView | None:
    snapshot = view.node_gpu(rank.node)
    if snapshot is None:
        return None
    return rank_gpu_view(rank, snapshot, view.placements, view.now)


class MainScreen(Screen[None]):
    """Where users spend the start: every rank at a glance."""

    # Textual declares this as a plain class attribute, so it cannot be marked ClassVar here.
    HORIZONTAL_BREAKPOINTS = [  # noqa: RUF012
        (0, "-narrow"),
        (100, "-medium"),
        (180, "-wide"),
    ]

    composed = False

    def __init__(
        self,
        bench: BenchPane | None = None,
        features: Sequence[Widget] = (),
        serving: ServingPanel | None = None,
    ) -> None:
        """``features`` are widgets without looks that own a key's work (launch, stacks);
        ``serving`` the engine's figures, under the header."""
        super().__init__()
        self._serving = serving
        self._view: MonitorView | None = None
        self._bench = bench if bench is not None else BenchPane(id="bench")
        self._features = tuple(features)
        self._header = StatusHeader()
        self._grid = RankGrid(id="grid")
        self._failure = FailurePanel(id="failure")

    def compose(self) -> ComposeResult:
        yield self._header
        if self._serving is not None:
            yield self._serving
        yield self._grid
        yield self._bench
        yield self._failure
        yield from self._features
        yield Footer()

    def on_mount(self) -> None:
        self.composed = True

    def show(self, view: MonitorView) -> None:
        """Apply one view to every widget (the caller batches the repaint)."""
        self._view = view
        self._header.show(view)
        self._show_ranks(view)
        job = view.job
        if view.snapshot.failure is None and job is not None and job.ended:
            self._failure.show_job(job, view.job_lines)
        else:
            self._failure.show(view.snapshot.failure)
        for feature in self._features:
            if isinstance(feature, KernelLogCheck):
                feature.saw(view)

    def _show_ranks(self, view: MonitorView) -> None:
        serving = self._serving.state if self._serving is not None else None
        self._grid.show(rank_cards(view, serving), view.snapshot.nodes, view.now)

    def focused_rank(self) -> str | None:
        focused = self.focused
        return focused.tag if isinstance(focused, RankPanel) else None

    def focus_rank(self, tag: str) -> bool:
        for panel in self.query(RankPanel):
            if panel.tag == tag:
                panel.focus()
                return True
        return False

    def rank_tags(self) -> list[str]:
        return [panel.tag for panel in self._grid.panels()]
