"""Run records round-trip and reject bad files by field; a run's status from a probe."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest

from tui.engine.launch.launch_plan import LaunchSpec, plan_node
from tui.engine.launch.launch_record import (
    HowEnded,
    RecordError,
    RunState,
    RunStatus,
    closed,
    describe_status,
    new_record,
    parse_record,
    run_status,
)
from tui.engine.launch.launch_report import parse_facts
from tui.engine.startup.vocabulary import Verdict

NOW = datetime(2025, 3, 10, 10, 0, 0, tzinfo=timezone.utc)
BOOT = "b-1"
SPEC = LaunchSpec(profile="qwen", command=("serve",), port=30000, env=(("HF_TOKEN", "secret"),))


def record_json() -> str:
    plan = plan_node(SPEC, 0, "/home/me", NOW)
    return new_record(plan, NOW, previous_run="qwen-20250310-090000").to_json()


def test_records_round_trip_without_environment_values() -> None:
    text = record_json()
    assert "\n" not in text
    assert "secret" not in text
    record = parse_record(text, "r.json")
    assert record.env_names == ("HF_TOKEN",)
    assert record.previous_run == "qwen-20250310-090000"
    assert record.started_at == "2025-03-10T10:00:00Z"
    assert parse_record(record.to_json(), "r.json") == record


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"pid": "12"}, "r.json: pid: expected int"),
        ({"node_rank": True}, "node_rank: expected int"),
        ({"command": "serve"}, "command: expected a list of strings"),
        ({"how_ended": "exploded"}, "how_ended: unknown value"),
        ({"run_id": None}, "run_id: missing"),
    ],
)
def test_bad_records_name_the_field(change: dict[str, object], message: str) -> None:
    data = json.loads(record_json())
    data.update(change)
    with pytest.raises(RecordError, match=message):
        parse_record(json.dumps(data), "r.json")
    with pytest.raises(RecordError, match="not valid JSON"):
        parse_record("{", "r.json")


def status_of(extra: str, with_record: bool = True) -> RunStatus:
    facts = parse_facts(f"boot {BOOT}\nrun qwen-1\n{extra}")
    record = parse_record(record_json(), "r") if with_record else None
    return run_status("gpu-a", facts, record)


def test_status_running_starting_and_none() -> None:
    running = status_of(f"identity 10 100 {BOOT}\nmember 10 100 S sh\nmember 11 101 R py\n")
    assert running.state is RunState.RUNNING
    assert running.verdict is None
    assert running.describe() == "running (2 processes)"
    assert status_of("").state is RunState.STARTING
    assert run_status("gpu-a", parse_facts(f"boot {BOOT}\n"), None).state is RunState.NONE


def test_a_crash_is_failed_with_its_exit_status() -> None:
    crashed = status_of(f"identity 10 100 {BOOT}\nexit 137 1741600000\nmember 10 100 Z sh\n")
    assert crashed.state is RunState.ENDED
    assert crashed.how_ended is HowEnded.FAILED
    assert crashed.verdict is Verdict.FAILED
    assert crashed.describe() == "failed: exited 137 (SIGKILL)"
    clean = status_of(f"identity 10 100 {BOOT}\nexit 0 1741600000\n")
    assert clean.how_ended is HowEnded.EXITED
    assert clean.verdict is Verdict.STOPPED
    vanished = status_of(f"identity 10 100 {BOOT}\n")
    assert vanished.how_ended is HowEnded.VANISHED


def test_closing_a_record_keeps_an_existing_end() -> None:
    crashed = status_of(f"identity 10 100 {BOOT}\nexit 3 1741600000\n")
    assert crashed.record is not None
    final = closed(crashed.record, crashed, None, NOW)
    assert (final.exit_status, final.how_ended, final.ended_at) == (
        3, HowEnded.FAILED, "2025-03-10T10:00:00Z",
    )  # fmt: skip
    assert closed(final, crashed, HowEnded.STOPPED, NOW) is final


def test_exit_statuses_read_like_a_shell() -> None:
    assert describe_status(0) == "exited 0"
    assert describe_status(143) == "exited 143 (SIGTERM)"
    assert describe_status(None) == "exit status unknown"
    assert describe_status(250) == "exited 250"


def test_a_leader_pid_held_by_a_later_process_is_a_strangers_group() -> None:
    text = "boot b\nrun r\nidentity 4242 1000 b\nmember 4242 5000 S sleep\nmember 4250 5001 S sh\n"
    facts = parse_facts(text)
    assert facts.leader_reused
    assert facts.ours() == ()
    assert run_status("h", facts, None).state is RunState.ENDED
    same = parse_facts(text.replace("4242 5000", "4242 1000"))
    assert not same.leader_reused
    assert len(same.ours()) == 2
