"""The monitor's clock tick: every second while a clock on screen counts seconds, and only when
the panels' stepped clocks turn while none does.

A repeating one-second timer wakes the app sixty times a minute; on a quiet READY screen (no
clock that counts seconds, the log view closed) fifty-nine of those wake-ups change nothing on
screen. :class:`ClockTick` arms one timer at a time instead, for the next moment the screen can
change: a second ahead while seconds are shown, the next turn of the panels' clocks otherwise.
When the screen starts counting seconds again (the server leaves READY, a rank enters a short
stage, the log view opens) :meth:`ClockTick.retime` brings a far tick forward.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from textual.timer import Timer

from tui.app.screens.main_screen import PANEL_CLOCK_STEP

SECOND = 1.0
"""Seconds between ticks while a clock on screen counts seconds."""
STEP_MARGIN = 0.01
"""A quiet tick runs this long after a step's boundary, so that the step has turned in it."""
EARLY = 0.05
"""A tick due later than the pace needs by more than this is brought forward."""

TimerSetter = Callable[[float, Callable[[], None]], Timer]
"""``App.set_timer``: a one-shot timer running a callback after so many seconds."""


def quiet_delay(now: float) -> float:
    """Seconds from ``now`` to just after the next turn of the panels' stepped clocks."""
    return PANEL_CLOCK_STEP - now % PANEL_CLOCK_STEP + STEP_MARGIN


class ClockTick:
    """Runs ``on_tick`` at the pace ``quiet`` asks for, one armed timer at a time.

    ``quiet`` says whether no clock on screen counts seconds; ``clock`` is the clock the panels'
    steps are counted on (the monitor's).
    """

    def __init__(
        self,
        on_tick: Callable[[], None],
        quiet: Callable[[], bool],
        clock: Callable[[], float],
    ) -> None:
        self._on_tick = on_tick
        self._quiet = quiet
        self._clock = clock
        self._timer: Timer | None = None
        self._due = 0.0
        self._set_timer: TimerSetter | None = None

    @property
    def due_in(self) -> float | None:
        """Seconds until the armed tick (None before :meth:`start`)."""
        return None if self._timer is None else self._due - time.monotonic()

    def delay(self) -> float:
        """Seconds to the next tick at the pace the screen needs now."""
        return quiet_delay(self._clock()) if self._quiet() else SECOND

    def start(self, set_timer: TimerSetter) -> None:
        """Arm the first tick with ``set_timer`` (the app's, once it runs)."""
        self._set_timer = set_timer
        self._arm()

    def retime(self) -> None:
        """The pace may have changed: bring the armed tick forward when it is due later than
        the pace needs now (a later one waits; the tick after it keeps the new pace)."""
        if self._timer is None:
            return
        if self._due - time.monotonic() > self.delay() + EARLY:
            self._timer.stop()
            self._arm()

    def _arm(self) -> None:
        assert self._set_timer is not None
        delay = self.delay()
        self._due = time.monotonic() + delay
        self._timer = self._set_timer(delay, self._run)

    def _run(self) -> None:
        self._timer = None
        try:
            self._on_tick()
        finally:
            self._arm()
