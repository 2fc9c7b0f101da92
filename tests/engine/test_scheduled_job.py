"""The judge hears a scheduler's job: QUEUED while held, its own end once it ended (never
starting), and the failing rank's last line in the reason."""

from __future__ import annotations

from tests.engine.engine_helpers import run_text, sglang_lines
from tui.engine.judge.health import HealthState
from tui.engine.judge.judge import Judgement, Signals, judge
from tui.engine.judge.scheduled_job import JobPhase, ScheduledJob
from tui.engine.startup.vocabulary import Verdict
from tui.engine.timing.estimate import default_expectations

STARTING = sglang_lines("Load weight begin. avail mem=70.00 GB", rank="TP0")
QUEUED = ScheduledJob("12", JobPhase.QUEUED, "PENDING", "job 12 PENDING (Resources), queued 5 s",
                      reason="Resources", queued_seconds=5.0)  # fmt: skip
TIMED_OUT = ScheduledJob(
    "12", JobPhase.ENDED, "TIMEOUT", "job 12 TIMEOUT (TimeLimit), signal 15",
    nodes=("gpu1", "gpu2"), exit_code="signal 15", ending=Verdict.FAILED,
)  # fmt: skip
CANCELLED = ScheduledJob("12", JobPhase.ENDED, "CANCELLED", "job 12 CANCELLED, exit 0",
                         ending=Verdict.STOPPED)  # fmt: skip


def _judge(
    text: str, job: ScheduledJob | None, health: HealthState = HealthState.UNKNOWN
) -> Judgement:
    snapshot = run_text(text)[0]
    signals = Signals(connected=True, health=health, job=job)
    return judge(snapshot, signals, default_expectations(600.0), 0.0)


def test_a_queued_job_is_queued_with_the_schedulers_words() -> None:
    judgement = _judge("", QUEUED)
    assert judgement.verdict is Verdict.QUEUED
    assert judgement.reason == QUEUED.summary


def test_a_job_that_ended_while_its_log_said_starting_is_not_starting() -> None:
    for job, verdict in ((TIMED_OUT, Verdict.FAILED), (CANCELLED, Verdict.STOPPED)):
        judgement = _judge(STARTING, job)
        assert judgement.verdict is verdict
        assert judgement.reason.startswith(job.summary)
        assert "last line of node 0 TP0: Load weight begin" in judgement.reason
    assert TIMED_OUT.label == "JOB_TIMEOUT"


def test_without_a_job_nothing_changes() -> None:
    assert _judge(STARTING, None).verdict is Verdict.STARTING
    running = ScheduledJob("12", JobPhase.RUNNING, "RUNNING", "job 12 RUNNING on gpu1")
    assert _judge(STARTING, running).verdict is Verdict.STARTING


def test_a_failure_in_the_log_before_the_job_was_cancelled_stays_failed() -> None:
    """A launcher's cleanup often cancels the job after a rank died: the log's failure is the
    verdict, with the job's end beside it, not a quiet STOPPED."""
    failed = STARTING + (
        sglang_lines("Scheduler hit an exception: Traceback (most recent call last):", rank="TP1")
        + "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1 GiB\n"
    )
    judgement = _judge(failed, CANCELLED)
    assert judgement.verdict is Verdict.FAILED
    assert "CUDA out of memory" in judgement.reason
    assert judgement.reason.endswith(CANCELLED.summary)
