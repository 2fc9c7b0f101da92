"""The benchmark pane: fired when the server becomes ready, ``b`` again, ``c`` to compare,
``t`` for more trials of the level ``v`` chose (or of every level).

The pane owns the benchmark: its state, the workers that fill it and the handlers of their
messages. When the verdict first becomes READY for a run it records the run (start-up timeline
and launch fingerprint) in the history file, then benchmarks according to the profile's
``bench.mode``: ``auto`` at once, ``ask`` after a yes, ``off`` only on ``b``. The benchmark
itself is :func:`tui.io.bench.bench_service.run_benchmark`, run in the pane's worker; what it
tells comes back to the pane as :class:`~tui.app.bench.bench_messages.BenchEvent` messages.
More trials are pooled with the earlier ones and then tested, figure by figure, against an
earlier run's with Welch's t-test, as ``bringup runs --compare`` does. Its tables fit the pane's
width: columns are dropped by priority (and said so) rather than wrapped.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Button, Sparkline, Static

from tui.app.bench.bench_messages import (
    BenchFailed,
    BenchFinished,
    BenchLevelFinished,
    BenchProgressed,
    BenchStarted,
    BenchTrialsAdded,
    BenchVerdictsRead,
)
from tui.app.bench.bench_state import BenchPhase, BenchState
from tui.app.bench.bench_text import (
    errors_text,
    hint_text,
    progress_line,
    results_table,
    title_line,
    verdict_text,
)
from tui.app.bench.compare_screen import CompareScreen
from tui.app.monitor.view_model import MonitorView
from tui.engine.bench.bench_view import throughputs
from tui.engine.bench.level_figures import LevelFigures
from tui.engine.bench.level_key import LevelKey
from tui.engine.bench.run_compare import RunColumn, compare_rows, level_metrics
from tui.engine.startup.snapshot import Snapshot
from tui.engine.startup.vocabulary import Verdict
from tui.io.bench.bench_client import clean
from tui.io.bench.bench_service import (
    BenchRequest,
    BenchRunFailed,
    MoreTrials,
    ServingDuring,
    run_benchmark,
)
from tui.io.bench.bench_setup import BenchOptions, BenchSetup
from tui.io.bench.builtin_run import SETTLE_SECONDS
from tui.io.store.run_records import RunKey, RunRecorder, Scope, load_columns, run_key
from tui.io.store.run_store import StoreError

BENCH_ACTIONS = frozenset({"bench", "compare", "more_trials", "choose_level"})
BENCH_BINDINGS: list[BindingType] = [
    Binding("b", "bench", "Bench", id="bench"),
    Binding("c", "compare", "Compare", id="compare"),
    Binding("t", "more_trials", "More trials", id="bench-more-trials"),
    Binding("v", "choose_level", "Level", id="bench-choose-level"),
]
MORE_TRIALS = 3
"""Trials ``t`` adds to the chosen level (or to every level)."""


class _Messenger:
    """Tells the pane what the running benchmark did, as messages."""

    def __init__(self, post: Callable[[Message], bool], more: bool = False) -> None:
        self.post = post
        self.more = more

    def started(self, title: str, levels: Sequence[str], per_level: int | None) -> None:
        self.post(BenchStarted(title, tuple(levels), per_level, self.more))

    def progressed(self, level: str, done: int, failed: int) -> None:
        self.post(BenchProgressed(level, done, failed))

    def level_finished(self, level: str, figures: LevelFigures) -> None:
        self.post(BenchLevelFinished(level, figures))


class BenchPane(Vertical):
    """Under the rank grid once the server is ready or a benchmark has run."""

    DEFAULT_CSS = """
    BenchPane {
        display: none;
        height: auto;
        max-height: 50%;
        border-top: heavy $accent;
        background: $surface;
        padding: 0 1;
        &.-shown { display: block; }
        & > Static { height: auto; }
        & > #bench-title { height: 1; }
        & > #bench-spark-row { height: 1; display: none; }
        & > #bench-spark-row.-shown { display: block; }
        & #bench-spark-label { width: auto; color: $text-muted; }
        & Sparkline { width: 24; }
        & Sparkline > .sparkline--max-color { color: $success; }
        & Sparkline > .sparkline--min-color { color: $accent; }
        & > #bench-hint { height: 1; }
    }
    """

    def __init__(
        self,
        setup: BenchSetup | None = None,
        snapshot: Callable[[], Snapshot] = Snapshot,
        *,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self.version = -1
        self.setup = setup
        self.snapshot = snapshot
        self.state = BenchState()
        self.settle = SETTLE_SECONDS
        self.busy = False
        options = self.options
        host = None if setup is None else setup.host
        self.recorder = RunRecorder(options.data_dir, options.profile, host)
        self._seen_ready: set[RunKey] = set()
        self.serving_during: ServingDuring | None = None
        """The engine's ``/metrics`` figures during a level (from the serving panel)."""
        self.baseline_run: int | None = None
        """The run more trials are tested against (chosen in the comparison view)."""

    @property
    def options(self) -> BenchOptions:
        return self.setup.options if self.setup is not None else BenchOptions()

    def compose(self) -> ComposeResult:
        yield Static(Content(""), id="bench-title")
        yield Static(Content(""), id="bench-progress")
        yield Static(Content(""), id="bench-table")
        with Horizontal(id="bench-spark-row"):
            yield Static(Content("tok/s by level "), id="bench-spark-label")
            yield Sparkline([], id="bench-spark")
        yield Static(Content(""), id="bench-verdict")
        yield Static(Content(""), id="bench-errors")
        yield Static(Content(""), id="bench-hint")

    def show(self, state: BenchState) -> None:
        """Redraw from ``state`` (only when it changed since the last call)."""
        if state.version == self.version:
            return
        self.version = state.version
        self.set_class(bool(state.runs or state.note or state.phase is not BenchPhase.IDLE),
                       "-shown")  # fmt: skip
        width = self._width()
        self.query_one("#bench-title", Static).update(title_line(state, width))
        # Once the levels are in the table, its done/fail column says what progress said; a
        # level with failed requests keeps its red line.
        running = [
            level for level in state.levels if state.running or not level.finished or level.failed
        ]
        progress = Content("\n").join(progress_line(level) for level in running)
        shown_progress = self.query_one("#bench-progress", Static)
        shown_progress.update(progress)
        shown_progress.display = bool(running)
        results = state.results
        self.query_one("#bench-table", Static).update(results_table(state, width))
        verdict = verdict_text(state, width)
        shown_verdict = self.query_one("#bench-verdict", Static)
        shown_verdict.update(verdict)
        shown_verdict.display = bool(verdict.plain)
        spark_row = self.query_one("#bench-spark-row", Horizontal)
        spark_row.set_class(bool(results), "-shown")
        self.query_one("#bench-spark", Sparkline).data = throughputs(results)
        errors = errors_text(state)
        shown = self.query_one("#bench-errors", Static)
        shown.update(errors)
        shown.display = bool(errors.plain)
        self.query_one("#bench-hint", Static).update(hint_text(state, width))

    def _width(self) -> int:
        """Cells a line of the pane has (the screen's width before the first layout)."""
        width = self.content_size.width or (self.app.size.width - 2)
        return max(width, 20)

    def on_resize(self) -> None:
        """Fit the tables to the new width."""
        self.version = -1
        self._redraw()

    def check(self, action: str) -> bool | None:
        """For ``check_action``: ``b``, ``c``, ``t`` and ``v`` need a server port (without one
        the app records nothing), ``t`` and ``v`` a result (they are hidden before), and ``b``
        and ``t`` no benchmark running."""
        if action not in BENCH_ACTIONS:
            return True
        if self.setup is None:
            return False
        if action in ("more_trials", "choose_level") and not self.state.results:
            return False
        return None if action in ("bench", "more_trials") and self.busy else True

    # --- the verdict ---------------------------------------------------------------------

    def verdict_seen(self, view: MonitorView) -> None:
        """Called on every repaint: the first READY (or FAILED) of a run is acted on once."""
        key = run_key(view.snapshot)
        if view.verdict is Verdict.FAILED and not self.recorder.noted(view.snapshot):
            self._record_later(view.snapshot)
        if view.verdict is not Verdict.READY or key in self._seen_ready:
            return
        self._seen_ready.add(key)
        if self.setup is None:
            return
        self._record_later(view.snapshot)
        mode = self.options.config.mode
        if mode == "auto":
            self.start()
        elif mode == "ask":
            self.ask()
        else:
            self.state.declined("benchmark mode is off; b runs it")
            self._redraw()

    def _record_later(self, snapshot: Snapshot) -> None:
        if self.setup is not None:
            self.recorder.note(snapshot)
            self.run_worker(self._record(snapshot), group="bench-record", exit_on_error=False)

    async def _record(self, snapshot: Snapshot) -> int | None:
        """The history id of ``snapshot``'s run (None, and a warning, when it is not stored)."""
        try:
            return await self.recorder.run_id(snapshot)
        except StoreError as exc:
            self.notify(f"run not recorded: {clean(str(exc))}", markup=False, severity="warning")
            return None

    def ask(self) -> None:
        self.state.asking()
        self._redraw()
        self.app.push_screen(BenchAskScreen(), self._answered)

    def _answered(self, yes: bool | None) -> None:
        if yes:
            self.start()
        else:
            self.state.declined()
            self._redraw()

    # --- running -------------------------------------------------------------------------

    def run_again(self, verdict: Verdict | None) -> None:
        """The ``b`` key: benchmark now if the verdict on screen is READY, else say why not."""
        if verdict is not Verdict.READY:
            shown = "not known yet" if verdict is None else verdict.value
            self.notify(f"not benchmarked: the server is {shown}, not READY", markup=False,
                        severity="warning")  # fmt: skip
            return
        self.start()

    def start(self, more: MoreTrials | None = None) -> None:
        """Benchmark now (or run ``more`` trials), unless one is already running."""
        if self.setup is None:
            self.notify("no server port to benchmark", markup=False)
            return
        if self.busy:
            self.notify("a benchmark is already running", markup=False)
            return
        self._set_busy(True)
        self.run_worker(self._bench(self.setup, more), group="bench", exit_on_error=False)

    def more_trials(self, verdict: Verdict | None, baseline: int | None = None) -> None:
        """The ``t`` key: more trials of the chosen level (or of every level), pooled with the
        earlier ones, then each figure tested against an earlier run's."""
        chosen = self.state.chosen()
        if not chosen:
            self.notify("no benchmark result to add trials to yet", markup=False)
            return
        if verdict is not Verdict.READY:
            shown = "not known yet" if verdict is None else verdict.value
            self.notify(f"no trials run: the server is {shown}, not READY", markup=False,
                        severity="warning")  # fmt: skip
            return
        self.baseline_run = baseline
        self.start(MoreTrials(tuple(chosen), MORE_TRIALS))

    def choose_level(self) -> None:
        """The ``v`` key: the next level for ``t``, then every level again."""
        self.state.select_next()
        self._redraw()

    def _set_busy(self, busy: bool) -> None:
        self.busy = busy
        self.app.refresh_bindings()

    async def _bench(self, setup: BenchSetup, more: MoreTrials | None = None) -> None:
        try:
            run_id = await self._record(self.snapshot())
            request = BenchRequest(
                setup, self.snapshot, run_id, self.settle, self.serving_during, more
            )
            note = await run_benchmark(request, _Messenger(self.post_message, more is not None))
            self.post_message(BenchFinished(note))
            if more is not None:
                self.post_message(BenchTrialsAdded(run_id))
        except BenchRunFailed as exc:
            self.post_message(BenchFailed(str(exc)))
        finally:
            self._set_busy(False)

    async def _judge(self, run_id: int | None) -> None:
        """Test the levels just measured against an earlier run's (the baseline chosen in the
        comparison, else the newest earlier run that has one of these levels)."""
        scopes = self.scopes()
        columns: list[RunColumn] = []
        if scopes:
            try:
                columns = await asyncio.to_thread(load_columns, self.options.data_dir, scopes[0])
            except StoreError as exc:
                self.notify(f"no comparison: {clean(str(exc))}", markup=False,
                            severity="warning")  # fmt: skip
        current = {LevelKey.of(figures): figures for figures in self.state.chosen()}
        base = _baseline(columns, run_id, self.baseline_run, set(current))
        if base is None:
            self.post_message(BenchVerdictsRead("", ()))
            return
        now = RunColumn(run_id or 0, "now", 0.0, None, current)
        metrics = [metric for key in sorted(current) for metric in level_metrics(key)]
        rows = compare_rows([base, now], 0, metrics)
        shown = [row for row in rows if row.cells[-1].text != "-" and row.cells[0].text != "-"]
        self.post_message(BenchVerdictsRead(base.label, tuple(shown)))

    # --- what the benchmark told ---------------------------------------------------------

    @on(BenchStarted)
    def _started(self, event: BenchStarted) -> None:
        self.state.started(event.title, event.levels, event.per_level, event.more)
        self._redraw()

    @on(BenchProgressed)
    def _progressed(self, event: BenchProgressed) -> None:
        self.state.progressed(event.level, event.done, event.failed)
        self._redraw()

    @on(BenchLevelFinished)
    def _level_finished(self, event: BenchLevelFinished) -> None:
        first = not self.state.results
        self.state.level_finished(event.level, event.figures)
        self._redraw()
        if first:
            self.app.refresh_bindings()  # t and v have a level to work on now

    @on(BenchFinished)
    def _finished(self, event: BenchFinished) -> None:
        self.state.finished(event.note)
        self._redraw()

    @on(BenchFailed)
    def _failed(self, event: BenchFailed) -> None:
        self.state.failed(event.error)
        self._redraw()

    @on(BenchTrialsAdded)
    def _trials_added(self, event: BenchTrialsAdded) -> None:
        self.run_worker(self._judge(event.run_id), group="bench-judge", exit_on_error=False)

    @on(BenchVerdictsRead)
    def _verdicts(self, event: BenchVerdictsRead) -> None:
        self.state.verdicts_read(event.baseline, event.rows)
        self._redraw()

    def _redraw(self) -> None:
        if self.is_mounted:
            self.show(self.state)

    # --- comparison ----------------------------------------------------------------------

    def scopes(self) -> list[Scope]:
        """What the comparison can list: the profile's runs, then the model's."""
        found = []
        if self.options.profile:
            found.append(Scope("profile", self.options.profile))
        model = self.snapshot().server.model
        if model:
            found.append(Scope("model", model))
        return found

    def compare(self, verdict: Callable[[], Verdict | None] = lambda: None) -> None:
        """Open the comparison view (the ``c`` key); its ``t`` comes back here as more trials
        tested against the baseline chosen there (``verdict`` is the one on screen then)."""

        def closed(baseline: int | None) -> None:
            if baseline is not None:
                self.more_trials(verdict(), baseline)

        self.app.push_screen(CompareScreen(self.scopes(), self.options.data_dir), closed)


def _baseline(
    columns: Sequence[RunColumn], run_id: int | None, chosen: int | None, keys: set[LevelKey]
) -> RunColumn | None:
    """The run to test against: ``chosen`` when it is another run, else the newest earlier run
    with one of ``keys``."""
    others = [column for column in columns if column.run_id != run_id]
    picked = next((column for column in others if column.run_id == chosen), None)
    if picked is not None:
        return picked
    return next((c for c in reversed(others) if keys & set(c.levels)), None)


class BenchAskScreen(ModalScreen[bool]):
    """``bench.mode = "ask"``: benchmark the server that just became ready? (default Yes)."""

    DEFAULT_CSS = """
    BenchAskScreen { align: center middle; }
    BenchAskScreen > Vertical {
        width: 60; height: auto; border: thick $accent; background: $surface; padding: 1 2;
    }
    BenchAskScreen .question { text-style: bold; }
    BenchAskScreen Horizontal { height: auto; margin-top: 1; align-horizontal: right; }
    BenchAskScreen Button { margin-left: 2; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Yes", id="bench-yes"),
        Binding("n,escape", "answer(False)", "No", id="bench-no"),
    ]

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Content("The server is ready. Benchmark it now?"), classes="question")
            with Horizontal():
                yield Button("Yes", id="yes", variant="primary")
                yield Button("No", id="no")

    def on_mount(self) -> None:
        self.query_one("#yes", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)
