"""The server verdict over the log, the connection, /health and a test generation."""

from __future__ import annotations

import pytest

from tests.engine.engine_helpers import run_text, sglang_lines
from tui.engine.judge.health import HealthState
from tui.engine.judge.verdict import VerdictReport, decide_verdict
from tui.engine.startup.snapshot import Snapshot
from tui.engine.startup.vocabulary import Verdict

READY = sglang_lines("The server is fired up and ready to roll!", rank="")
STARTING = sglang_lines("Load weight begin. avail mem=70.00 GB")
FAILED = (
    sglang_lines(
        "Load weight begin. avail mem=70.00 GB",
        "Scheduler hit an exception: Traceback (most recent call last):",
        rank="TP1",
    )
    + "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1 GiB\n"
)
STOPPED = READY + sglang_lines("SIGTERM received. signum=15. Draining requests", rank="")


def snap(text: str) -> Snapshot:
    return run_text(text)[0]


def verdict(
    text: str,
    health: HealthState = HealthState.HEALTHY,
    generation_ok: bool | None = True,
    connected: bool = True,
    stalled: tuple[str, ...] = (),
) -> VerdictReport:
    return decide_verdict(
        snap(text),
        connected=connected,
        health=health,
        generation_ok=generation_ok,
        stalled_ranks=stalled,
    )


def test_ready_needs_the_line_health_and_a_generation() -> None:
    assert verdict(READY) == VerdictReport(Verdict.READY)
    assert verdict(READY, HealthState.READY, None).verdict is Verdict.READY
    assert verdict(READY, generation_ok=None).verdict is Verdict.STARTING
    assert verdict(READY, HealthState.UNKNOWN).verdict is Verdict.STARTING


@pytest.mark.parametrize(
    ("health", "generation_ok", "note"),
    [
        (HealthState.STARTING, None, "ready line seen but /health answers 503"),
        (HealthState.REFUSED, None, "ready line seen but the port refuses connections"),
        (HealthState.HEALTHY, False, "ready line seen but the test generation failed"),
    ],
)
def test_a_ready_line_contradicted_by_http_is_reported(
    health: HealthState, generation_ok: bool | None, note: str
) -> None:
    report = verdict(READY, health, generation_ok)
    assert report.verdict is Verdict.STARTING
    assert report.disagreements == (note,)


def test_failure_wins_over_a_healthy_endpoint_and_says_so() -> None:
    report = verdict(FAILED, HealthState.HEALTHY, True)
    assert report.verdict is Verdict.FAILED
    assert report.disagreements == (
        "/health answers 200 but the log shows a failure (oom on TP1)",
        "a generation was answered but the log shows a failure",
    )


def test_health_before_the_ready_line_is_a_disagreement() -> None:
    report = verdict(STARTING, HealthState.HEALTHY, None)
    assert report.verdict is Verdict.STARTING
    assert report.disagreements == ("/health answers 200 but the log shows no ready line yet",)


def test_stopped_stalled_and_connecting() -> None:
    assert verdict(STOPPED, HealthState.REFUSED, None).verdict is Verdict.STOPPED
    stalled = verdict(STARTING, HealthState.REFUSED, None, stalled=("TP3",))
    assert stalled == VerdictReport(Verdict.STALLED)
    connecting = verdict(STARTING, HealthState.UNKNOWN, None, connected=False)
    assert connecting.verdict is Verdict.CONNECTING
    assert verdict(FAILED, HealthState.UNKNOWN, None, connected=False).verdict is Verdict.FAILED
