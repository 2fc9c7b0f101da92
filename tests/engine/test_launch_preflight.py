"""Host script output read into facts, and the reasons to refuse a launch."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from tui.engine.launch.launch_plan import LaunchSpec, NodePlan, plan_node
from tui.engine.launch.launch_preflight import RefusalKind, evaluate, needed_gpus
from tui.engine.launch.launch_report import parse_facts, parse_ss_line

NOW = datetime(2025, 3, 10, 10, 0, 0, tzinfo=timezone.utc)
BOOT = "e70ad404-de13-44db-81c2-b91857fcbee5"
UUID0 = "GPU-e631629d-2256-277a-404b-d2ae4d3da19f"
UUID1 = "GPU-11111111-2222-3333-4444-555555555555"
QUIET = f"boot {BOOT}\nsetsid yes\nlisten-source ss\ngpu-source nvidia-smi\ngpu 0, {UUID0}\n"


def plan(**changes: object) -> NodePlan:
    values: dict[str, object] = {
        "profile": "qwen", "command": ("serve", "{model}"), "port": 30000, "model": "/m",
    }  # fmt: skip
    values.update(changes)
    return plan_node(LaunchSpec(**values), 0, "/home/me", NOW)  # type: ignore[arg-type]


def kinds(text: str, node: NodePlan | None = None) -> list[RefusalKind]:
    return [r.kind for r in evaluate(node or plan(), parse_facts(text)).refusals]


def test_a_quiet_host_is_fine() -> None:
    checked = evaluate(plan(), parse_facts(QUIET + "model yes\n"))
    assert checked.ok
    assert checked.notes == ()


def test_port_in_use_names_the_process() -> None:
    row = 'LISTEN 0 2048 0.0.0.0:30000 0.0.0.0:* users:(("python3",pid=4242,fd=7))'
    checked = evaluate(plan(), parse_facts(QUIET + f"ss {row}\n"))
    assert [r.kind for r in checked.refusals] == [RefusalKind.PORT_IN_USE]
    assert "pid 4242 (python3)" in checked.refusals[0].message
    hidden = parse_ss_line("LISTEN 0 2048 0.0.0.0:30000 0.0.0.0:*")
    assert hidden[0].describe() == "a process this user cannot see"
    from_proc = QUIET.replace("listen-source ss", "listen-source proc") + "listen 77 uvicorn\n"
    assert "pid 77 (uvicorn)" in evaluate(plan(), parse_facts(from_proc)).refusals[0].message


def test_hostile_process_names_are_cleaned() -> None:
    row = 'LISTEN 0 1 *:30000 *:* users:(("\x1b]0;pwned\x07evil\x1b[31m",pid=9,fd=3))'
    message = evaluate(plan(), parse_facts(QUIET + f"ss {row}\n")).refusals[0].message
    assert "\x1b" not in message
    assert "\x07" not in message


def test_previous_run_alive_counts_only_its_own_live_processes() -> None:
    previous = (
        "run qwen-20250310-090000\n"
        f"identity 500 1000 {BOOT}\n"
        "member 500 1000 S sh\n"
        "member 501 1001 R python3\n"
        "member 502 1002 Z python3\n"
    )
    refusals = evaluate(plan(), parse_facts(QUIET + previous)).refusals
    assert [r.kind for r in refusals] == [RefusalKind.PREVIOUS_RUN_ALIVE]
    assert "qwen-20250310-090000" in refusals[0].message
    assert "2 processes" in refusals[0].message
    assert "bringup kill qwen" in refusals[0].message
    zombies = previous.replace(" S sh", " Z sh").replace(" R python3", " Z python3")
    assert kinds(QUIET + zombies) == []
    older = previous.replace("member 501 1001", "member 501 900").replace("500 1000 S", "500 9 S")
    assert kinds(QUIET + older) == []
    rebooted = previous.replace(f"identity 500 1000 {BOOT}", "identity 500 1000 other-boot")
    assert kinds(QUIET + rebooted) == []


def test_busy_gpus_only_count_when_the_run_needs_them() -> None:
    two = QUIET + f"gpu 1, {UUID1}\napp 419, 41478, {UUID1}, python3\n"
    assert kinds(two) == [RefusalKind.GPU_BUSY]
    message = evaluate(plan(), parse_facts(two)).refusals[0].message
    assert "pid 419 (python3) using 41478 MiB on GPU 1" in message
    only_zero = plan(env=(("CUDA_VISIBLE_DEVICES", "0"),))
    assert kinds(two, only_zero) == []
    by_uuid = plan(env=(("CUDA_VISIBLE_DEVICES", UUID1),))
    assert kinds(two, by_uuid) == [RefusalKind.GPU_BUSY]
    facts = parse_facts(two)
    assert needed_gpus(plan(env=(("CUDA_VISIBLE_DEVICES", "MIG-x"),)), facts.gpus) is None


def test_real_nvidia_smi_process_lists(shared: Path) -> None:
    fixtures = shared / "fixtures" / "gpu-h200"
    during = (fixtures / "compute-apps.csv").read_text()
    after = (fixtures / "compute-apps-after.csv").read_text()
    lines = "".join(f"app {line}\n" for line in during.splitlines())
    facts = parse_facts(QUIET + lines)
    assert [(a.pid, a.process_name, a.used_memory_mib) for a in facts.gpu_apps] == [
        (419, "python3", 41478.0)
    ]
    assert kinds(QUIET + lines) == [RefusalKind.GPU_BUSY]
    empty = "".join(f"app {line}\n" for line in after.splitlines())
    assert kinds(QUIET + empty) == []


def test_skipped_checks_become_notes() -> None:
    text = f"boot {BOOT}\nsetsid yes\nlisten-source none\ngpu-source none\n"
    checked = evaluate(plan(), parse_facts(text))
    assert checked.ok
    assert any("port 30000" in note for note in checked.notes)
    assert any("GPU check skipped" in note for note in checked.notes)
    failing = "gpu-source error\ngpu-error NVIDIA-SMI has failed\n"
    notes = evaluate(plan(), parse_facts(f"boot {BOOT}\n{failing}")).notes
    assert any("NVIDIA-SMI has failed" in note for note in notes)


def test_model_setsid_and_host_errors() -> None:
    assert kinds(QUIET + "model no\n") == [RefusalKind.MODEL_MISSING]
    assert kinds(QUIET + "model no\n", plan(model="Qwen/Qwen3-8B")) == []
    no_setsid = QUIET.replace("setsid yes", "setsid no")
    assert kinds(no_setsid) == [RefusalKind.NO_SETSID]
    assert not RefusalKind.NO_SETSID.forceable
    assert RefusalKind.PORT_IN_USE.forceable
    assert kinds(QUIET + "error cannot create the folder /x\n") == [RefusalKind.HOST_FAILED]


def test_malformed_lines_are_ignored() -> None:
    text = "identity nope\nmember x y\nexit 999 1\nexit\nmember 5\nlisten abc\n\x00\n"
    facts = parse_facts(text)
    assert facts.identity is None
    assert facts.members == ()
    assert facts.ended is None
    assert facts.listeners[0].pid is None
