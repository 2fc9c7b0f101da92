"""The serving panel under the header: the engine's own figures once the server is READY.

The panel owns the scrape: its worker starts when the verdict becomes READY (a benchmark runs
while it is READY, so it is scraped then too), goes on while it is DEGRADED (still serving) and
stops when the verdict leaves both. Each
scrape comes back as a message; alarms that start are handed to ``on_alarm`` (a toast, the
bell and the title, as for the verdicts). Without ``/metrics`` the panel says so and shows
the decode lines' figures instead.

While the scrapes are spaced out for an idle server, the log showing the server at work (a
decode line with tokens generated, or a request that is not the monitor's own) wakes the
scraper: it scrapes at once and at its interval again.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from functools import partial

from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.worker import Worker

from tui.app.monitor.view_model import MonitorView
from tui.app.serving.serving_messages import MetricsMissed, MetricsRead
from tui.app.serving.serving_state import ServingState
from tui.app.serving.serving_text import figures_line, status_line
from tui.app.widgets.content_line import ContentLine
from tui.engine.metrics.alarms import ServingAlarm
from tui.engine.startup.snapshot import DecodeSummary, Snapshot
from tui.io.metrics.metrics_scrape import MetricsScraped, MetricsScraper
from tui.io.metrics.metrics_setup import MetricsSetup

AlarmSink = Callable[[ServingAlarm], None]
ChangeSink = Callable[[bool], None]
"""Told that the figures changed; ``True`` when showing them may wait for the next frame."""
Work = tuple[int, int]
"""What the log showed of the server's work so far: decode lines, and requests that are not
the monitor's own."""


def work_seen(snapshot: Snapshot) -> Work:
    """The work ``snapshot``'s log showed so far."""
    return (snapshot.decode.lines, snapshot.requests)


def at_work(before: Work, snapshot: Snapshot) -> bool:
    """The log showed the server at work since ``before``: a request that is not the
    monitor's, or a decode line with tokens generated (vLLM's older engine logs its figures
    every ten seconds, idle or not, with a throughput of 0)."""
    lines, requests = work_seen(snapshot)
    if requests > before[1]:
        return True
    if lines <= before[0]:
        return False
    throughput = snapshot.decode.gen_throughput
    return not throughput or throughput[-1] > 0


class ServingLine(ContentLine):
    """One line of the serving panel, made for the width it is drawn at."""

    DEFAULT_CSS = "ServingLine { width: 1fr; height: 1; }"


class ServingPanel(Vertical):
    """Shown once the server serves and a scrape said something."""

    DEFAULT_CSS = """
    ServingPanel {
        display: none;
        height: auto;
        background: $panel;
        padding: 0 1;
        &.-shown { display: block; }
        & > #serving-status { display: none; }
        & > #serving-status.-shown { display: block; }
    }
    """

    def __init__(
        self,
        setup: MetricsSetup | None = None,
        on_alarm: AlarmSink | None = None,
        *,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self.setup = setup
        self.on_alarm = on_alarm
        self.state = ServingState()
        self.worker: Worker[None] | None = None
        self.scraper: MetricsScraper | None = None
        """The scraper the worker runs (None while not scraping)."""
        self._work: Work = (0, 0)
        self.on_change: ChangeSink | None = None
        """Who repaints: told of each scrape, which is then drawn by the next
        :meth:`verdict_seen` (None: drawn at once)."""
        self._pending = False
        self._decode = DecodeSummary()
        self._figures = ServingLine(id="serving-figures")
        self._status = ServingLine(id="serving-status")

    def compose(self) -> ComposeResult:
        yield self._figures
        yield self._status

    def verdict_seen(self, view: MonitorView) -> None:
        """Called on every repaint: scrape while the verdict is READY (or DEGRADED: it still
        serves, and its figures say how)."""
        self._decode = view.snapshot.decode
        serving = view.verdict.serving
        if serving:
            self.start()
        else:
            self.stop()
        self._wake_at_work(view.snapshot)
        if self.state.absent or self._pending:
            self._redraw()

    def _wake_at_work(self, snapshot: Snapshot) -> None:
        """Wake a scraper that spaced its scrapes out when the log shows the server at work."""
        before, scraper = self._work, self.scraper
        self._work = work_seen(snapshot)
        if scraper is not None and scraper.idle and at_work(before, snapshot):
            scraper.wake()

    def start(self) -> None:
        """Scrape from now on (nothing happens while already scraping or without a setup)."""
        if self.worker is None and self.setup is not None:
            self.scraper = self.setup.scraper()
            self.worker = self.run_worker(self._scrape(self.scraper), group="serving",
                                          exit_on_error=False)  # fmt: skip

    def stop(self) -> None:
        """Stop scraping and hide the figures (they would be stale)."""
        if self.worker is not None:
            self.worker.cancel()
            self.worker = self.scraper = None
            self.state.stopped()
            self._redraw()

    async def _scrape(self, scraper: MetricsScraper) -> None:
        async with contextlib.aclosing(scraper.scrapes()) as reports:
            async for report in reports:
                if isinstance(report, MetricsScraped):
                    self.post_message(MetricsRead(report))
                else:
                    self.post_message(MetricsMissed(report))

    @on(MetricsRead)
    def _read(self, message: MetricsRead) -> None:
        first = self.state.figures is None
        self.state.read(message.report)
        if self.on_alarm is not None:
            for alarm in message.report.started:
                self.on_alarm(alarm)
        self._changed(urgent=first or bool(message.report.started))

    @on(MetricsMissed)
    def _missed(self, message: MetricsMissed) -> None:
        self.state.missed(message.report)
        self._changed(urgent=True)

    def _changed(self, urgent: bool) -> None:
        """Draw the new figures with the next repaint; the first figures, an alarm and a
        scrape that failed at once, later ones with the next frame of a quiet screen."""
        if urgent or self.on_change is None:
            self._redraw()
        else:
            self._pending = True
        if self.on_change is not None:
            self.on_change(not urgent)  # the rank panels show their share with the repaint

    def _redraw(self) -> None:
        self._pending = False
        state = self.state
        self.set_class(state.figures is not None or state.missing is not None, "-shown")
        if self._figures.display != (state.figures is not None):
            self._figures.display = state.figures is not None
        self._figures.show_line(partial(figures_line, state), state.version)
        shown = bool(state.alarms or state.missing)
        self._status.set_class(shown, "-shown")
        decode = self._decode
        self._status.show_line(partial(status_line, state, decode), (state.version, decode))
