"""Telling the user the verdict changed: a toast always, the bell and the terminal title when
they are not looking (or always, when configured).

DEGRADED is not an alarm: a READY server whose port missed a poll gets a quiet toast and the
title, never the bell, and its return to READY a toast only; it rings only if it turns FAILED."""

from __future__ import annotations

import re
from typing import Literal, Protocol

from textual.notifications import SeverityLevel

from tui.app.monitor.view_model import MonitorView
from tui.engine.startup.vocabulary import Verdict

NotifyMode = Literal["auto", "always", "never"]
NOTIFY_MODES: tuple[NotifyMode, ...] = ("auto", "always", "never")

ALERTING = frozenset({Verdict.READY, Verdict.FAILED, Verdict.STALLED})
QUIET = frozenset({Verdict.DEGRADED})
"""Verdicts told by a toast and the title, without the bell."""
_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f]")


class AlertTarget(Protocol):
    """The parts of the app alerts use."""

    app_focus: bool

    def bell(self) -> None: ...

    def notify(
        self, message: str, *, title: str = ..., severity: SeverityLevel = ..., markup: bool = ...
    ) -> None: ...


def terminal_title(text: str) -> str:
    """The escape sequence that sets the terminal window's title, with control bytes removed."""
    return f"\x1b]2;{_UNPRINTABLE.sub('', text)[:120]}\x07"


class Alerts:
    """Remembers the last verdict and alerts once per change into READY, FAILED or STALLED."""

    def __init__(self, app: AlertTarget, mode: NotifyMode = "auto") -> None:
        self.app = app
        self.mode = mode
        self.verdict: Verdict | None = None
        self.rang = 0
        self.titles: list[str] = []

    def verdict_seen(self, view: MonitorView) -> None:
        previous, self.verdict = self.verdict, view.verdict
        if previous is None or previous is view.verdict:
            return
        who = view.target.profile or view.target.host or "server"
        if view.verdict in QUIET or (view.verdict is Verdict.READY and previous in QUIET):
            self._quietly(view, who, back=view.verdict is Verdict.READY)
            return
        if view.verdict not in ALERTING:
            return
        self.app.notify(f"{who}: {view.verdict.value}", title="bringup", markup=False)
        if self._ring():
            self.rang += 1
            self.app.bell()
            self._title(f"{view.verdict.value} · {who} · bringup")

    def _quietly(self, view: MonitorView, who: str, back: bool) -> None:
        """DEGRADED, or READY again after it: a toast (and the title), no bell."""
        text = f"{who}: READY again" if back else f"{who}: DEGRADED: {view.reason}"
        severity: SeverityLevel = "information" if back else "warning"
        self.app.notify(text, title="bringup", severity=severity, markup=False)
        if self._ring():
            self._title(f"{view.verdict.value} · {who} · bringup")

    def _ring(self) -> bool:
        return self.mode == "always" or (self.mode == "auto" and not self.app.app_focus)

    def _title(self, text: str) -> None:
        self.titles.append(text)
        self._set_title(text)

    def alarm_raised(self, text: str, who: str) -> None:
        """A serving alarm started: a toast, and the bell and the title as for a verdict."""
        self.app.notify(f"{who}: {text}", title="bringup alarm", markup=False)
        if self._ring():
            self.rang += 1
            self.app.bell()
            self._title(f"ALARM {text} · {who} · bringup")

    def _set_title(self, text: str) -> None:
        driver = getattr(self.app, "_driver", None)
        if driver is not None and not getattr(self.app, "is_headless", True):
            driver.write(terminal_title(text))
