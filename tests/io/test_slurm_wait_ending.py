"""How ``bringup wait`` names the judge's verdict on a Slurm job at its output: a FAILED or
STOPPED of a job that ended is ``JOB_<STATE>`` (exit 1); every other verdict is itself."""

from __future__ import annotations

from tui.commands.wait import EXIT_FAILED, WaitEnding, exit_code
from tui.commands.wait_slurm import job_ending
from tui.engine.judge.scheduled_job import JobPhase, ScheduledJob
from tui.engine.startup.vocabulary import Verdict


def _ended(state: str, ending: Verdict) -> ScheduledJob:
    return ScheduledJob("12", JobPhase.ENDED, state, f"job 12 {state}", ending=ending)


def test_an_ended_job_names_the_wait_after_its_state() -> None:
    cases = [
        (Verdict.FAILED, _ended("TIMEOUT", Verdict.FAILED), WaitEnding.JOB_TIMEOUT),
        (Verdict.STOPPED, _ended("CANCELLED", Verdict.STOPPED), WaitEnding.JOB_CANCELLED),
        (Verdict.FAILED, _ended("CANCELLED", Verdict.STOPPED), WaitEnding.JOB_CANCELLED),
        (Verdict.FAILED, _ended("BOOT_FAIL", Verdict.FAILED), WaitEnding.JOB_ENDED),
    ]
    for verdict, job, ending in cases:
        assert job_ending(verdict, job) is ending
        assert exit_code(ending) == EXIT_FAILED


def test_a_running_or_absent_job_leaves_the_verdict_as_it_is() -> None:
    running = ScheduledJob("12", JobPhase.RUNNING, "RUNNING", "job 12 RUNNING on gpu1")
    for verdict in (Verdict.FAILED, Verdict.STOPPED, Verdict.READY, Verdict.STALLED):
        assert job_ending(verdict, running) is verdict
        assert job_ending(verdict, None) is verdict
    assert job_ending(WaitEnding.TIMEOUT, _ended("FAILED", Verdict.FAILED)) is WaitEnding.TIMEOUT
