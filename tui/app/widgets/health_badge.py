"""The verdict badge and the health indicator shown in the header."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static

from tui.app.monitor.view_model import HealthReading
from tui.engine.judge.health import HealthState
from tui.engine.startup.vocabulary import Verdict

_VERDICT_MARK = {
    Verdict.CONNECTING: "…",
    Verdict.QUEUED: "◷",
    Verdict.STARTING: "▶",
    Verdict.READY: "✔",
    Verdict.DEGRADED: "◐",
    Verdict.FAILED: "✖",
    Verdict.STALLED: "⚠",
    Verdict.STOPPED: "■",
}

_HEALTH_TEXT = {
    HealthState.UNKNOWN: "health ?",
    HealthState.NO_LINK: "health error",
    HealthState.REFUSED: "port refused",
    HealthState.STARTING: "health 503",
    HealthState.UNHEALTHY: "health error",
    HealthState.HEALTHY: "health 200",
    HealthState.READY: "health 200",
}


class VerdictBadge(Static):
    """The server verdict in a coloured block; the text carries the meaning without colour."""

    DEFAULT_CSS = """
    VerdictBadge {
        width: auto;
        min-width: 14;
        padding: 0 1;
        text-style: bold;
        content-align: center middle;
        color: $background;
        background: $verdict-connecting;
        &.-starting { background: $verdict-starting; }
        &.-ready { background: $verdict-ready; }
        &.-degraded { background: $verdict-degraded; }
        &.-failed { background: $verdict-failed; }
        &.-stalled { background: $verdict-stalled; }
        &.-stopped { background: $verdict-stopped; }
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(Content(" CONNECTING"), id=id)
        self.verdict = Verdict.CONNECTING

    def show(self, verdict: Verdict) -> None:
        if verdict is self.verdict:
            return
        self.remove_class(f"-{self.verdict.value.lower()}")
        self.verdict = verdict
        self.add_class(f"-{verdict.value.lower()}")
        self.update(Content(f"{_VERDICT_MARK[verdict]} {verdict.value}"))


def health_text(reading: HealthReading) -> Content:
    """``health 200 12 ms · gen ok`` styled by the reading's meaning."""
    style = {
        HealthState.HEALTHY: "$health-ok",
        HealthState.READY: "$health-ok",
        HealthState.STARTING: "$health-starting",
        HealthState.REFUSED: "$health-down",
        HealthState.UNHEALTHY: "$health-down",
        HealthState.NO_LINK: "$health-down",
    }.get(reading.state, "$text-muted")
    parts: list[str | tuple[str, str]] = [(_HEALTH_TEXT[reading.state], f"bold {style}")]
    if reading.latency_ms is not None:
        parts.append(f" {reading.latency_ms:.0f} ms")
    if reading.generation_ok is True:
        parts.append((" · generation ok", "$health-ok"))
    elif reading.generation_ok is False:
        parts.append((" · generation failed", "$health-down"))
    return Content.assemble(*parts)


class HealthBadge(Static):
    """The latest health poll: refused, 503, 200, and whether a real generation answered."""

    DEFAULT_CSS = """
    HealthBadge { width: auto; padding: 0 1; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(health_text(HealthReading()), id=id)
        self.reading = HealthReading()

    def show(self, reading: HealthReading) -> None:
        if reading == self.reading:
            return
        self.reading = reading
        self.update(health_text(reading))
