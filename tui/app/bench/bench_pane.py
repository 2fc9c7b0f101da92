"""The benchmark pane: fired when the server becomes ready, ``b`` again, ``c`` to compare.

The pane owns the benchmark: its state, the workers that fill it and the handlers of their
messages. When the verdict first becomes READY for a run it records the run (start-up timeline
and launch fingerprint) in the history file, then benchmarks according to the profile's
``bench.mode``: ``auto`` at once, ``ask`` after a yes, ``off`` only on ``b``. The benchmark
itself is :func:`tui.io.bench.bench_service.run_benchmark`, run in the pane's worker; what it
tells comes back to the pane as :class:`~tui.app.bench.bench_messages.BenchEvent` messages.
"""

from __future__ import annotations

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
)
from tui.app.bench.bench_state import BenchPhase, BenchState
from tui.app.bench.bench_text import (
    errors_text,
    hint_text,
    progress_line,
    results_table,
    title_line,
)
from tui.app.bench.compare_screen import CompareScreen
from tui.app.monitor.view_model import MonitorView
from tui.engine.bench.bench_view import throughputs
from tui.engine.bench.level_figures import LevelFigures
from tui.engine.startup.snapshot import Snapshot
from tui.engine.startup.vocabulary import Verdict
from tui.io.bench.bench_client import clean
from tui.io.bench.bench_service import (
    BenchRequest,
    BenchRunFailed,
    ServingDuring,
    run_benchmark,
)
from tui.io.bench.bench_setup import BenchOptions, BenchSetup
from tui.io.bench.builtin_run import SETTLE_SECONDS
from tui.io.store.run_records import RunKey, RunRecorder, Scope, run_key
from tui.io.store.run_store import StoreError

BENCH_ACTIONS = frozenset({"bench", "compare"})
BENCH_BINDINGS: list[BindingType] = [
    Binding("b", "bench", "Bench", id="bench"),
    Binding("c", "compare", "Compare", id="compare"),
]


class _Messenger:
    """Tells the pane what the running benchmark did, as messages."""

    def __init__(self, post: Callable[[Message], bool]) -> None:
        self.post = post

    def started(self, title: str, levels: Sequence[int], per_level: int | None) -> None:
        self.post(BenchStarted(title, tuple(levels), per_level))

    def progressed(self, concurrency: int, done: int, failed: int) -> None:
        self.post(BenchProgressed(concurrency, done, failed))

    def level_finished(self, concurrency: int, figures: LevelFigures) -> None:
        self.post(BenchLevelFinished(concurrency, figures))


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
        yield Static(Content(""), id="bench-errors")
        yield Static(Content(""), id="bench-hint")

    def show(self, state: BenchState) -> None:
        """Redraw from ``state`` (only when it changed since the last call)."""
        if state.version == self.version:
            return
        self.version = state.version
        self.set_class(bool(state.runs or state.note or state.phase is not BenchPhase.IDLE),
                       "-shown")  # fmt: skip
        self.query_one("#bench-title", Static).update(title_line(state))
        progress = Content("\n").join(progress_line(level) for level in state.levels)
        self.query_one("#bench-progress", Static).update(progress)
        results = state.results
        table = results_table(results) if results else Content("")
        self.query_one("#bench-table", Static).update(table)
        spark_row = self.query_one("#bench-spark-row", Horizontal)
        spark_row.set_class(bool(results), "-shown")
        self.query_one("#bench-spark", Sparkline).data = throughputs(results)
        errors = errors_text(state)
        shown = self.query_one("#bench-errors", Static)
        shown.update(errors)
        shown.display = bool(errors.plain)
        self.query_one("#bench-hint", Static).update(hint_text(state))

    def check(self, action: str) -> bool | None:
        """For ``check_action``: ``b`` and ``c`` need a server port (without one the app
        records nothing), and ``b`` no benchmark running."""
        if action not in BENCH_ACTIONS:
            return True
        if self.setup is None:
            return False
        return None if action == "bench" and self.busy else True

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

    def start(self) -> None:
        """Benchmark now, unless one is already running."""
        if self.setup is None:
            self.notify("no server port to benchmark", markup=False)
            return
        if self.busy:
            self.notify("a benchmark is already running", markup=False)
            return
        self._set_busy(True)
        self.run_worker(self._bench(self.setup), group="bench", exit_on_error=False)

    def _set_busy(self, busy: bool) -> None:
        self.busy = busy
        self.app.refresh_bindings()

    async def _bench(self, setup: BenchSetup) -> None:
        try:
            run_id = await self._record(self.snapshot())
            request = BenchRequest(setup, self.snapshot, run_id, self.settle, self.serving_during)
            note = await run_benchmark(request, _Messenger(self.post_message))
            self.post_message(BenchFinished(note))
        except BenchRunFailed as exc:
            self.post_message(BenchFailed(str(exc)))
        finally:
            self._set_busy(False)

    # --- what the benchmark told ---------------------------------------------------------

    @on(BenchStarted)
    def _started(self, event: BenchStarted) -> None:
        self.state.started(event.title, event.levels, event.per_level)
        self._redraw()

    @on(BenchProgressed)
    def _progressed(self, event: BenchProgressed) -> None:
        self.state.progressed(event.concurrency, event.done, event.failed)
        self._redraw()

    @on(BenchLevelFinished)
    def _level_finished(self, event: BenchLevelFinished) -> None:
        self.state.level_finished(event.concurrency, event.figures)
        self._redraw()

    @on(BenchFinished)
    def _finished(self, event: BenchFinished) -> None:
        self.state.finished(event.note)
        self._redraw()

    @on(BenchFailed)
    def _failed(self, event: BenchFailed) -> None:
        self.state.failed(event.error)
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

    def compare(self) -> None:
        """Open the comparison view (the ``c`` key)."""
        self.app.push_screen(CompareScreen(self.scopes(), self.options.data_dir))


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
