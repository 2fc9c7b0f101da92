"""The monitor app: workers post messages, handlers update state, one timer repaints."""

from __future__ import annotations

import contextlib
import gc
import os
import sys
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import ClassVar

from textual import on
from textual.app import App
from textual.binding import Binding, BindingType
from textual.driver import Driver
from textual.timer import Timer
from textual.worker import Worker, WorkerState

from tui.app.bench.bench_pane import BENCH_ACTIONS, BENCH_BINDINGS, BenchPane
from tui.app.feed.engine_link import EngineLink
from tui.app.feed.feed_sources import FeedSource, ReadingSource
from tui.app.feed.ingest import Ingest
from tui.app.launch.kernel_log_check import KernelLogCheck
from tui.app.launch.launch_actions import (
    LAUNCH_BINDINGS,
    LaunchActions,
    LauncherOpener,
    RunStatusChanged,
)
from tui.app.launch.stack_actions import STACK_ACTIONS, STACK_BINDINGS, StackActions
from tui.app.monitor.alerts import Alerts, NotifyMode
from tui.app.monitor.clipboard_copy import ClipboardCopy
from tui.app.monitor.clock_tick import ClockTick
from tui.app.monitor.monitor_messages import (
    ConnectionChanged,
    HealthPolled,
    JobStateChanged,
    RankFocused,
)
from tui.app.monitor.monitor_state import MonitorState
from tui.app.monitor.palette import MonitorCommands
from tui.app.monitor.themes import DEFAULT_THEME, FALLBACK_THEME, SEMANTIC_DEFAULTS, load_themes
from tui.app.monitor.view_model import (
    EXPECTED_STARTUP_SECONDS,
    ConnectionState,
    MonitorView,
    Target,
)
from tui.app.screens.help_screen import HelpScreen, key_rows
from tui.app.screens.log_view import LogScreen
from tui.app.screens.main_screen import PANEL_CLOCK_STEP, MainScreen, clock_step, counts_seconds
from tui.app.serving.serving_panel import ServingPanel
from tui.app.widgets.failure_panel import failure_report
from tui.app.widgets.gpu_widgets import GpuTelemetryUpdated
from tui.engine.metrics.alarms import ServingAlarm
from tui.engine.startup.vocabulary import Verdict
from tui.io.bench.bench_setup import BenchSetup
from tui.io.gpu.gpu_telemetry import GpuFeed
from tui.io.metrics.metrics_setup import MetricsSetup
from tui.io.transport.host_session import HostSession

FLUSH_SECONDS = 0.1
"""Delay between a change after a quiet spell and the repaint that shows it."""
BUSY_FLUSH_SECONDS = 0.25
"""Least time between two repaints while changes keep coming (a log flood): the screen then
shows the latest state four times a second instead of ten."""
FRAME_SECONDS = PANEL_CLOCK_STEP
"""While the server is READY, readings on a timer (GPUs every 2 s, ``/metrics`` every 2 s) are
shown at the next multiple of this on the monotonic clock, which is when the panels' stepped
clocks turn: a quiet serving screen repaints once per step, everything in one frame. Log lines,
verdicts, alarms, the first figures and keys show at once."""
FRAME_MARGIN = 0.01
"""A frame runs this long after its boundary, so that the stepped clocks have turned in it."""


class MonitorApp(App[int]):
    """``bringup watch`` and ``bringup demo``: one server's start-up, rank by rank."""

    TITLE = "bringup"
    CSS_PATH = "app.tcss"
    COMMANDS = App.COMMANDS | {MonitorCommands}
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "quit", "Quit", id="quit", priority=True),
        Binding("ctrl+c", "quit", "Quit", id="quit-interrupt", show=False, priority=True),
        Binding("l", "open_log", "Log", id="log"),
        Binding("e", "open_log(True)", "Errors", id="errors-log"),
        Binding("slash", "search_log", "Search", id="search-log"),
        Binding("y", "copy_failure", "Copy failure", id="copy-failure"),
        Binding("r", "reconnect", "Reconnect", id="reconnect"),
        Binding("question_mark", "help", "Help", id="help"),
        *LAUNCH_BINDINGS,
        *BENCH_BINDINGS,
        *STACK_BINDINGS,
        *(
            Binding(str(n), f"focus_rank({n - 1})", f"Rank {n}", id=f"rank-{n}", show=False)
            for n in range(1, 10)
        ),
        Binding("0", "focus_rank(9)", "Rank 10", id="rank-10", show=False),
    ]

    def __init__(
        self,
        *,
        link: EngineLink,
        source: FeedSource,
        target: Target,
        health: ReadingSource | None = None,
        clock: Callable[[], float] = time.monotonic,
        theme: str = DEFAULT_THEME,
        keymap: Mapping[str, str] | None = None,
        notify_mode: NotifyMode = "auto",
        expected_seconds: float = EXPECTED_STARTUP_SECONDS,
        reconnect: Callable[[], Awaitable[None]] | None = None,
        launcher: LauncherOpener | None = None,
        read_only: bool = False,
        bench: BenchSetup | None = None,
        telemetry: Sequence[GpuFeed] = (),
        hosts: Sequence[HostSession] = (),
        metrics: MetricsSetup | None = None,
    ) -> None:
        super().__init__()
        self.state = MonitorState(link, target, clock, expected_seconds)
        self.ingest = Ingest(self.state)
        self._source = source
        self._health = health
        self._telemetry = tuple(telemetry)
        self._wanted_theme = theme
        self._user_keys = dict(keymap or {})
        self._reconnect = reconnect
        self.launch_actions = LaunchActions(launcher, read_only)
        self.bench = BenchPane(bench, lambda: self.state.link.snapshot, id="bench")
        self.stack_actions = StackActions(self.state, hosts, lambda: self.launch_actions.statuses)
        self.kernel_check = KernelLogCheck(hosts)
        self.alerts = Alerts(self, notify_mode)
        self.clipboard_copy = ClipboardCopy(self)
        self.serving = ServingPanel(metrics, self._alarm_raised, id="serving")
        self.bench.serving_during = self.serving.state.during
        self.last_view: MonitorView | None = None
        self._flush_timer: Timer | None = None
        self._flush_at = 0.0
        self._flushed_step = -1
        self._seconds_shown = True
        """The last view has a clock that counts seconds (the panels' short stages)."""
        self._flushed_at = 0.0
        self._gpu_workers: dict[GpuFeed, Worker[None]] = {}
        self._serving = False
        self.clock_tick = ClockTick(self._tick, self._quiet, self.state.clock)

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return dict(SEMANTIC_DEFAULTS)

    def get_default_screen(self) -> MainScreen:
        features = (self.launch_actions, self.stack_actions, self.kernel_check)
        return MainScreen(self.bench, features, self.serving)

    def _start_source(self) -> None:
        """Read the log: items into the ingest queue (awaited), link changes as messages."""
        source = self._source.run(self.post_message, self.ingest.put)
        self.run_worker(source, group="source", exit_on_error=False)

    def get_driver_class(self) -> type[Driver]:
        """Textual's choice, with the Linux driver's input thread made quiet
        (:mod:`~tui.app.monitor.quiet_driver`); a driver named in ``TEXTUAL_DRIVER`` as is."""
        chosen = super().get_driver_class()
        if sys.platform == "win32" or os.environ.get("TEXTUAL_DRIVER"):
            return chosen
        from textual.drivers.linux_driver import LinuxDriver

        from tui.app.monitor.quiet_driver import QuietLinuxDriver

        return QuietLinuxDriver if chosen is LinuxDriver else chosen

    def on_mount(self) -> None:
        self._install_themes()
        if self._user_keys:
            self.set_keymap(self._user_keys)
        self.state.on_change = self._arm_flush
        self.serving.on_change = self.state.touch
        self._arm_flush()
        self.clock_tick.start(self.set_timer)
        self.run_worker(self.ingest.run(), group="ingest", exit_on_error=False)
        self._start_source()
        if self._health is not None:
            health = self._health.run(self.post_message)
            self.run_worker(health, group="health", exit_on_error=False)
        for feed in self._telemetry:
            self._start_gpus(feed)
        # Everything built so far lives as long as the app: keep it out of every future garbage
        # collection, so a full collection during a log flood costs milliseconds, not a freeze.
        self.call_after_refresh(gc.freeze)

    def _install_themes(self) -> None:
        loaded = load_themes()
        for theme in loaded.themes:
            self.register_theme(theme)
        if loaded.errors:
            self.notify("\n".join(loaded.errors), title="Theme files skipped", severity="warning",
                        markup=False)  # fmt: skip
        if self.get_theme(self._wanted_theme) is not None:
            self.theme = self._wanted_theme
        else:
            if self._wanted_theme != DEFAULT_THEME or not loaded.errors:
                self.notify(f"theme {self._wanted_theme!r} is not available; using the default",
                            severity="warning", markup=False)  # fmt: skip
            fallback = DEFAULT_THEME if self.get_theme(DEFAULT_THEME) else FALLBACK_THEME
            self.theme = fallback

    def _start_gpus(self, feed: GpuFeed) -> None:
        worker = self.run_worker(self._read_gpus(feed), group="telemetry", exit_on_error=False)
        self._gpu_workers[feed] = worker

    def _pace_gpus(self, serving: bool) -> None:
        """Once READY the GPUs are read at the serving rate (every 2 s unless configured), and
        at the start-up rate again when the server leaves READY: each reader whose rate
        changes is stopped (which stops its nvidia-smi) and started again."""
        if serving == self._serving:
            return
        self._serving = serving
        self.clock_tick.retime()
        for feed in self._telemetry:
            if feed.channel.pace(serving):
                self._gpu_workers[feed].cancel()
                self._start_gpus(feed)

    async def _read_gpus(self, feed: GpuFeed) -> None:
        """Post every GPU snapshot of one host; closing the iteration also stops its remote
        nvidia-smi."""
        async with contextlib.aclosing(feed.channel.snapshots()) as snapshots:
            async for snapshot in snapshots:
                self.post_message(GpuTelemetryUpdated(snapshot, feed.nodes))

    # --- messages from workers -------------------------------------------------------------

    @on(ConnectionChanged)
    def _connection(self, message: ConnectionChanged) -> None:
        self.state.set_connection(message.state, message.detail)

    @on(JobStateChanged)
    def _job_changed(self, message: JobStateChanged) -> None:
        self.state.set_job(message.job)

    @on(HealthPolled)
    def _health_polled(self, message: HealthPolled) -> None:
        self.state.set_health(message.reading)

    @on(RunStatusChanged)
    def _runs_probed(self, message: RunStatusChanged) -> None:
        """The launched run's status (posted by the launch widget, which handles it too)."""
        self.state.set_runs(message.statuses)

    @on(GpuTelemetryUpdated)
    def _gpus(self, message: GpuTelemetryUpdated) -> None:
        self.state.set_gpu(message.snapshot, message.nodes)

    @on(RankFocused)
    def _rank_focused(self, message: RankFocused) -> None:
        main = self._main()
        if main is not None:
            main.focus_rank(message.tag)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state is WorkerState.ERROR and event.worker.group == "source":
            error = event.worker.error
            self.state.set_connection(ConnectionState.LOST, f"{type(error).__name__}: {error}")
        elif event.state is WorkerState.ERROR:
            self.notify(f"{event.worker.group} stopped: {event.worker.error}", markup=False,
                        severity="warning")  # fmt: skip

    # --- the repaint -----------------------------------------------------------------------

    def _quiet(self) -> bool:
        """No clock on screen counts seconds: the server is READY, no panel shows a short
        stage and the log view is not open (its panels step every ``PANEL_CLOCK_STEP``)."""
        log_open = any(isinstance(screen, LogScreen) for screen in self.screen_stack[-1:])
        return self._serving and not self._seconds_shown and not log_open

    def _tick(self) -> None:
        """The clock moved: repaint now when no repaint is due, so that an idle app wakes once a
        second rather than twice; else the flush already armed (or the flood's pace) shows it.
        On a quiet screen (:meth:`_quiet`) the tick comes when the panels' steps turn
        (:class:`~tui.app.monitor.clock_tick.ClockTick`), and repaints only if they did."""
        if self._quiet() and not self._clock_stepped():
            return
        if self._flush_timer is None and self._flush_seconds_since() >= BUSY_FLUSH_SECONDS:
            self.state.age()
            self._flush_due()
        else:
            self.state.touch()

    def _clock_stepped(self) -> bool:
        """The panels' stepped clocks show another value than at the last repaint."""
        return clock_step(self.state.clock()) != self._flushed_step

    def _flush_seconds_since(self) -> float:
        return time.monotonic() - self._flushed_at

    def _arm_flush(self, lazy: bool = False) -> None:
        """The one flush timer: armed by the first change, so an idle app never wakes for it;
        soon after a quiet spell, at a slower pace while changes keep coming. While the server
        is READY a ``lazy`` change (a reading on a timer) waits for the next frame boundary,
        so the GPU readings, the scrape and the stepped clocks share one repaint."""
        now = time.monotonic()
        delay = max(FLUSH_SECONDS, BUSY_FLUSH_SECONDS - (now - self._flushed_at))
        if lazy and self._serving:
            delay = max(delay, FRAME_SECONDS - now % FRAME_SECONDS + FRAME_MARGIN)
        due = now + delay
        if self._flush_timer is not None and self._flush_at <= due:
            return
        if self._flush_timer is not None:
            self._flush_timer.stop()
        self._flush_at = due
        self._flush_timer = self.set_timer(delay, self._flush_due)

    @property
    def flush_due_at(self) -> float | None:
        """When the armed repaint runs (``time.monotonic``), None when none is armed."""
        return self._flush_at if self._flush_timer is not None else None

    def _flush_due(self) -> None:
        self._flush_timer = None
        self._flushed_at = time.monotonic()
        self.flush()

    def flush(self) -> None:
        """Apply the latest state to the screen, at most ten times a second.

        It runs without a pause, so the screen repaints only after it, all at once: Textual's
        ``batch_update`` would add nothing but a wake-up of the app when it ends."""
        if not self.is_running:
            return  # shutting down: the screens are being taken apart
        log_screen = self.screen if isinstance(self.screen, LogScreen) else None
        if self.state.dirty:
            view = self.state.view()
            self.last_view = view
            self._flushed_step = clock_step(view.now)
            seconds_shown = counts_seconds(view)
            if seconds_shown and not self._seconds_shown:
                self.clock_tick.retime()
            self._seconds_shown = seconds_shown
            self.serving.verdict_seen(view)  # first: the rank panels show what it keeps
            main = self._main()
            if main is not None and main.is_current and main.composed:
                main.show(view)
            self.alerts.verdict_seen(view)
            self._pace_gpus(view.verdict is Verdict.READY)
            self.bench.verdict_seen(view)
        if log_screen is not None and log_screen.composed:
            log_screen.pull()

    def _alarm_raised(self, alarm: ServingAlarm) -> None:
        target = self.state.target
        self.alerts.alarm_raised(alarm.text, target.profile or target.host or "server")

    def _main(self) -> MainScreen | None:
        return next((s for s in self.screen_stack if isinstance(s, MainScreen)), None)

    # --- actions -------------------------------------------------------------------------

    def action_open_log(self, problems_only: bool = False) -> None:
        main = self._main()
        rank = None if problems_only or main is None else main.focused_rank()
        self.push_screen(LogScreen(self.state.log, rank, problems_only), self._log_closed)

    def open_rank_log(self, tag: str) -> None:
        self.push_screen(LogScreen(self.state.log, tag), self._log_closed)

    def action_search_log(self) -> None:
        screen = LogScreen(self.state.log)
        self.push_screen(screen, self._log_closed)
        self.call_after_refresh(screen.action_search)

    def _log_closed(self, _: None) -> None:
        self.state.touch()

    @on(LogScreen.Opened)
    def _log_opened(self) -> None:
        self.clock_tick.retime()

    def action_copy_failure(self) -> None:
        failure = self.state.link.snapshot.failure
        if failure is None:
            self.notify("nothing has failed", markup=False)
            return
        self.clipboard_copy.copy(failure_report(failure), "failure excerpt")

    async def action_reconnect(self) -> None:
        if self._reconnect is None:
            self.notify("this source cannot reconnect", markup=False)
            return
        self.state.set_connection(ConnectionState.RECONNECTING, "asked by the user")
        self.workers.cancel_group(self, "source")
        await self._reconnect()
        self._start_source()

    def action_focus_rank(self, index: int) -> None:
        main = self._main()
        if main is None:
            return
        tags = main.rank_tags()
        if 0 <= index < len(tags):
            main.focus_rank(tags[index])

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in BENCH_ACTIONS:
            return self.bench.check(action)
        if action in STACK_ACTIONS:
            return self.stack_actions.check(action)
        return self.launch_actions.check(action)

    def action_bench(self) -> None:
        self.bench.run_again(self._verdict())

    def action_compare(self) -> None:
        self.bench.compare(self._verdict)

    def action_more_trials(self) -> None:
        self.bench.more_trials(self._verdict())

    def action_choose_level(self) -> None:
        self.bench.choose_level()

    def _verdict(self) -> Verdict | None:
        return None if self.last_view is None else self.last_view.verdict

    def action_dump_stacks(self) -> None:
        main = self._main()
        self.stack_actions.dump(self.last_view, None if main is None else main.focused_rank())

    def action_launch(self) -> None:
        self.launch_actions.launch()

    def action_kill(self) -> None:
        self.launch_actions.kill()

    def action_restart(self) -> None:
        self.launch_actions.restart()

    def action_help(self) -> None:
        groups = [("Monitor", self.BINDINGS), ("Log view", LogScreen.BINDINGS)]
        self.push_screen(HelpScreen(key_rows(groups, self._user_keys)))
