"""After READY a failing port is DEGRADED, READY again when it answers, FAILED after the grace.

The judge is fed what a caller feeds it: the previous judgement's memory in ``Signals.serving``,
the latest health poll, and the injected clock.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from tests.engine.engine_helpers import run_text, sglang_lines
from tui.engine.judge.health import HealthState
from tui.engine.judge.judge import Judgement, Signals, judge
from tui.engine.judge.verdict import Watched
from tui.engine.startup.snapshot import Snapshot
from tui.engine.startup.vocabulary import Verdict
from tui.engine.timing.estimate import default_expectations

READY_LOG = sglang_lines("The server is fired up and ready to roll!", rank="")
CRASH = (
    sglang_lines("Scheduler hit an exception: Traceback (most recent call last):", rank="TP0")
    + "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1 GiB\n"
)
PLAN = default_expectations(600.0)


def snap(text: str) -> Snapshot:
    return run_text(text)[0]


@dataclass
class Caller:
    """What the app and ``bringup wait`` do: judge, keep the memory, judge again."""

    snapshot: Snapshot = field(default_factory=lambda: snap(READY_LOG))
    grace: float = 60.0
    watched: Watched = field(default_factory=Watched)
    last: Judgement | None = None

    process_ended: Verdict | None = None

    def at(self, now: float, health: HealthState, detail: str = "") -> Judgement:
        signals = Signals(
            health=health,
            health_detail=detail,
            watched=self.watched,
            serving=self.last.serving if self.last is not None else None,
            health_grace=self.grace,
            process_ended=self.process_ended,
        )
        self.last = judge(self.snapshot, signals, PLAN, now)
        return self.last


def test_a_503_after_ready_is_degraded_with_its_reason_and_then_ready_again() -> None:
    caller = Caller()
    assert caller.at(100.0, HealthState.READY).verdict is Verdict.READY
    blip = caller.at(101.0, HealthState.STARTING)
    assert blip.verdict is Verdict.DEGRADED
    assert blip.reason == "health 503 for 0 s since READY, FAILED after 60 s"
    later = caller.at(105.0, HealthState.STARTING)
    assert (later.verdict, later.reason) == (
        Verdict.DEGRADED,
        "health 503 for 4 s since READY, FAILED after 60 s",
    )
    assert not later.final
    again = caller.at(106.0, HealthState.READY)
    assert again.verdict is Verdict.READY
    assert again.serving is not None
    assert again.serving.ready_at == 100.0
    assert again.serving.failing_since is None


def test_a_timeout_or_a_refused_port_is_degraded_too_and_the_time_runs_across_kinds() -> None:
    caller = Caller()
    caller.at(10.0, HealthState.READY)
    timeout = caller.at(11.0, HealthState.UNHEALTHY, "ReadTimeout")
    assert timeout.verdict is Verdict.DEGRADED
    assert timeout.reason.startswith("health error (ReadTimeout) for 0 s")
    refused = caller.at(20.0, HealthState.REFUSED)
    assert refused.verdict is Verdict.DEGRADED
    assert refused.reason.startswith("port refused for 9 s")


def test_degraded_becomes_failed_only_after_the_grace() -> None:
    caller = Caller(grace=30.0)
    caller.at(0.0, HealthState.READY)
    caller.at(1.0, HealthState.STARTING)
    assert caller.at(31.0, HealthState.STARTING).verdict is Verdict.DEGRADED
    failed = caller.at(31.5, HealthState.STARTING)
    assert failed.verdict is Verdict.FAILED
    assert failed.final
    assert failed.reason == "health 503 for 30 s, longer than the 30 s grace after READY"


def test_a_port_the_monitor_cannot_reach_stays_degraded_past_the_grace() -> None:
    caller = Caller(grace=30.0)
    caller.at(0.0, HealthState.READY)
    caller.at(1.0, HealthState.NO_LINK, "connection lost")
    blind = caller.at(100.0, HealthState.NO_LINK, "connection lost")
    assert blind.verdict is Verdict.DEGRADED
    assert blind.reason == (
        "port unreachable (connection lost) for 99 s since READY "
        "(the monitor cannot reach the port)"
    )
    assert caller.at(101.0, HealthState.STARTING).verdict is Verdict.DEGRADED
    assert caller.at(131.5, HealthState.STARTING).verdict is Verdict.FAILED


def test_the_grace_counts_from_the_last_good_poll() -> None:
    caller = Caller(grace=30.0)
    caller.at(0.0, HealthState.READY)
    caller.at(1.0, HealthState.STARTING)
    caller.at(25.0, HealthState.READY)
    caller.at(26.0, HealthState.STARTING)
    assert caller.at(50.0, HealthState.STARTING).verdict is Verdict.DEGRADED


def test_a_fatal_line_while_degraded_fails_at_once() -> None:
    caller = Caller()
    caller.at(0.0, HealthState.READY)
    assert caller.at(1.0, HealthState.STARTING).verdict is Verdict.DEGRADED
    caller.snapshot = snap(READY_LOG + CRASH)
    failed = caller.at(2.0, HealthState.STARTING)
    assert failed.verdict is Verdict.FAILED
    assert failed.reason.startswith("oom on TP0")


def test_a_process_gone_while_degraded_ends_it_at_once() -> None:
    caller = Caller()
    caller.at(0.0, HealthState.READY)
    assert caller.at(1.0, HealthState.REFUSED).verdict is Verdict.DEGRADED
    caller.process_ended = Verdict.FAILED
    failed = caller.at(2.0, HealthState.REFUSED)
    assert (failed.verdict, failed.reason) == (
        Verdict.FAILED,
        "the server's process ended after READY (failed)",
    )


def test_a_stop_while_degraded_is_stopped() -> None:
    caller = Caller()
    caller.at(0.0, HealthState.READY)
    caller.at(1.0, HealthState.REFUSED)
    caller.snapshot = snap(READY_LOG + sglang_lines("SIGTERM received. signum=15.", rank=""))
    assert caller.at(2.0, HealthState.REFUSED).verdict is Verdict.STOPPED


def test_a_503_before_ready_is_still_starting() -> None:
    caller = Caller()
    assert caller.at(0.0, HealthState.STARTING).verdict is Verdict.STARTING
    assert caller.last is not None
    assert caller.last.serving is None


def test_a_new_run_in_the_log_is_a_new_start_up() -> None:
    caller = Caller()
    caller.at(0.0, HealthState.READY)
    caller.snapshot = replace(snap(""), runs_before=1)
    assert caller.at(1.0, HealthState.STARTING).verdict is Verdict.STARTING


def test_without_health_followed_a_ready_run_stays_ready() -> None:
    caller = Caller(watched=Watched(log=True, health=False))
    assert caller.at(0.0, HealthState.UNKNOWN).verdict is Verdict.READY
    assert caller.at(100.0, HealthState.UNKNOWN).verdict is Verdict.READY
