"""Reading Slurm's own output: squeue --json (22.05 and later forms), scontrol, sacct."""

from __future__ import annotations

import json

import pytest

from tui.engine.cluster.slurm_jobs import (
    ExitCode,
    SlurmParseError,
    expand_hostlist,
    parse_sacct,
    parse_scontrol_job,
    parse_scontrol_node_addr,
    parse_squeue_json,
    parse_submitted,
)
from tui.engine.cluster.slurm_verdict import (
    JobPhase,
    job_end,
    job_phase,
    pending_note,
    queued_seconds,
    running_seconds,
)
from tui.engine.startup.vocabulary import Verdict

PENDING = (
    "JobId=7 JobName=bringup-big UserId=u(1) JobState=PENDING Reason=Resources "
    "ExitCode=0:0 SubmitTime=2025-03-10T10:00:00 StartTime=Unknown EndTime=Unknown "
    "NodeList= NumNodes=3-3 StdOut=/shared/big-7-batch.log StdErr=/shared/big-7-batch.log"
)
RUNNING = """JobId=8 JobName=bringup-big
   JobState=RUNNING Reason=None Dependency=(null)
   ExitCode=0:0
   SubmitTime=2025-03-10T10:00:00 StartTime=2025-03-10T10:00:30 EndTime=2025-03-10T11:00:30
   NodeList=gpu[1-2] BatchHost=gpu1 NumNodes=2 NumCPUs=2
   StdOut=/shared/big-8-batch.log
"""


def _ended(state: str, reason: str, code: str) -> str:
    return (
        f"JobId=9 JobState={state} Reason={reason} ExitCode={code} "
        "SubmitTime=2025-03-10T10:00:00 StartTime=2025-03-10T10:00:10 "
        "EndTime=2025-03-10T10:01:10 NodeList=gpu[1-2] NumNodes=2"
    )


def test_host_lists_expand_in_order_with_their_padding() -> None:
    assert expand_hostlist("gpu[1-2,07],cpu3") == ("gpu1", "gpu2", "gpu07", "cpu3")
    assert expand_hostlist("n[08-10]") == ("n08", "n09", "n10")
    assert expand_hostlist("") == expand_hostlist("(null)") == ()
    with pytest.raises(SlurmParseError):
        expand_hostlist("gpu[a-b]")


def test_a_pending_job_has_its_reason_and_its_queued_time() -> None:
    job = parse_scontrol_job(PENDING)
    assert (job.job_id, job.state, job.reason, job.nodes, job.node_count) == (
        "7", "PENDING", "Resources", (), 3
    )  # fmt: skip
    assert job.start_time is None
    assert job_phase(job) is JobPhase.QUEUED
    assert job_end(job) is None
    assert job.submit_time is not None
    assert queued_seconds(job, job.submit_time + 80) == 80
    assert pending_note(job, job.submit_time + 80) == "job 7 PENDING (Resources), queued 1m 20s"
    assert job.std_out == "/shared/big-7-batch.log"


def test_a_running_job_has_its_node_list_and_the_queue_time_stops_at_its_start() -> None:
    job = parse_scontrol_job(RUNNING)
    assert (job.state, job.nodes, job.reason) == ("RUNNING", ("gpu1", "gpu2"), None)
    assert job_phase(job) is JobPhase.RUNNING
    assert job.submit_time is not None
    assert job.start_time is not None
    assert queued_seconds(job, job.submit_time + 1000) == 30
    assert running_seconds(job, job.start_time + 12) == 12


@pytest.mark.parametrize(
    ("state", "reason", "code", "exit_code", "verdict"),
    [
        ("FAILED", "NonZeroExitCode", "3:0", ExitCode(3, 0), Verdict.FAILED),
        ("CANCELLED", "None", "0:15", ExitCode(0, 15), Verdict.STOPPED),
        ("TIMEOUT", "TimeLimit", "0:15", ExitCode(0, 15), Verdict.FAILED),
        ("NODE_FAIL", "NodeDown", "0:9", ExitCode(0, 9), Verdict.FAILED),
        ("OUT_OF_MEMORY", "OutOfMemory", "0:125", ExitCode(0, 125), Verdict.FAILED),
        ("PREEMPTED", "None", "0:15", ExitCode(0, 15), Verdict.FAILED),
        ("COMPLETED", "None", "0:0", ExitCode(0, 0), Verdict.STOPPED),
    ],
)
def test_every_end_of_a_job_is_a_verdict_with_reason_and_exit_code(
    state: str, reason: str, code: str, exit_code: ExitCode, verdict: Verdict
) -> None:
    job = parse_scontrol_job(_ended(state, reason, code))
    end = job_end(job)
    assert job_phase(job) is JobPhase.ENDED
    assert end is not None
    assert (end.verdict, end.exit_code, end.engine_verdict) == (f"JOB_{state}", exit_code, verdict)
    assert end.reason == (None if reason == "None" else reason)
    assert end.describe().startswith(f"job 9 {state}")
    assert job.start_time is not None
    assert job.end_time is not None
    assert running_seconds(job, job.end_time + 500) == 60


def test_squeue_json_of_slurm_22_05_reads_raw_wait_statuses() -> None:
    text = json.dumps({"jobs": [
        {"job_id": 2, "job_state": "FAILED", "state_reason": "NonZeroExitCode", "nodes": "gpu1",
         "exit_code": 768, "submit_time": 100, "start_time": 101, "end_time": 102,
         "node_count": 1, "standard_output": "/s/o-%j.txt"},
        {"job_id": 5, "job_state": "CANCELLED", "state_reason": "None", "nodes": "gpu[1-2]",
         "exit_code": 15, "submit_time": 100, "start_time": 0, "end_time": 0},
        {"job_id": 4, "job_state": "PENDING", "state_reason": "PartitionNodeLimit",
         "nodes": "", "exit_code": 0, "submit_time": 100, "start_time": 0},
    ]})  # fmt: skip
    failed, cancelled, pending = parse_squeue_json(text)
    assert (failed.exit_code, failed.nodes, failed.start_time) == (ExitCode(3), ("gpu1",), 101)
    assert (cancelled.exit_code, cancelled.nodes) == (ExitCode(0, 15), ("gpu1", "gpu2"))
    assert cancelled.start_time is None
    assert (pending.state, pending.reason, job_phase(pending)) == (
        "PENDING", "PartitionNodeLimit", JobPhase.QUEUED
    )  # fmt: skip


def test_squeue_json_of_later_releases_reads_lists_and_number_objects() -> None:
    text = json.dumps({"jobs": [{
        "job_id": 11, "job_state": ["TIMEOUT"], "state_reason": "TimeLimit",
        "nodes": "gpu[1-2]", "node_count": {"set": True, "infinite": False, "number": 2},
        "exit_code": {"status": ["SIGNALED"], "return_code": {"set": True, "number": 0},
                      "signal": {"id": {"set": True, "number": 15}, "name": "TERM"}},
        "submit_time": {"set": True, "number": 100},
        "start_time": {"set": True, "number": 130},
        "end_time": {"set": False, "number": 0},
    }]})  # fmt: skip
    (job,) = parse_squeue_json(text)
    assert (job.state, job.node_count, job.exit_code) == ("TIMEOUT", 2, ExitCode(0, 15))
    assert (job.submit_time, job.start_time, job.end_time) == (100, 130, None)


def test_output_that_is_not_a_job_is_refused() -> None:
    with pytest.raises(SlurmParseError):
        parse_squeue_json("slurm_load_jobs error: Invalid job id specified")
    with pytest.raises(SlurmParseError):
        parse_scontrol_job("slurm_load_jobs error: Invalid job id specified")
    with pytest.raises(SlurmParseError):
        parse_submitted("sbatch: error: Batch job submission failed")
    assert parse_submitted("42;cluster\n") == parse_submitted("42") == "42"


def test_sacct_and_scontrol_node_are_read_where_they_exist() -> None:
    text = (
        "12|TIMEOUT|0:15|TimeLimit|gpu[1-2]|2025-03-10T10:00:00|2025-03-10T10:00:05|"
        "2025-03-10T10:01:05|2\n"
        "12.batch|CANCELLED|0:15||gpu1|2025-03-10T10:00:05|2025-03-10T10:00:05|"
        "2025-03-10T10:01:05|1\n"
    )
    job = parse_sacct(text, "12")
    assert job is not None
    assert (job.state, job.reason, job.nodes, job.exit_code) == (
        "TIMEOUT", "TimeLimit", ("gpu1", "gpu2"), ExitCode(0, 15)
    )  # fmt: skip
    assert parse_sacct(text, "13") is None
    assert parse_scontrol_node_addr("NodeName=gpu1 Arch=x86_64\n   NodeAddr=10.0.0.7 ") == (
        "10.0.0.7"
    )
