"""Launch plans: placeholders fill argv elements, never shell text; paths and run ids."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tui.engine.launch.launch_plan import (
    LaunchSpec,
    PlanError,
    expand_home,
    fill,
    is_local_path,
    latest_log_path,
    plan_launch,
    plan_node,
    run_id,
    run_stem,
)

NOW = datetime(2025, 3, 10, 10, 0, 5, tzinfo=timezone.utc)
HOSTILE = ["a b", "x'y\"z", "; rm -rf /", "$(touch /tmp/x)", "`id`", "line1\nline2", "{model}", ""]


def spec(**changes: object) -> LaunchSpec:
    base: dict[str, object] = {
        "profile": "qwen",
        "command": ("python", "-m", "sglang.launch_server", "--model-path", "{model}",
                    "--port", "{port}"),
        "log_dir": "~/logs",
        "port": 30000,
        "model": "/models/qwen",
    }  # fmt: skip
    base.update(changes)
    return LaunchSpec(**base)  # type: ignore[arg-type]


def test_placeholders_fill_argv_elements() -> None:
    plan = plan_node(spec(), 0, "/home/me", NOW)
    assert plan.argv == (
        "python", "-m", "sglang.launch_server", "--model-path", "/models/qwen", "--port", "30000",
    )  # fmt: skip


@pytest.mark.parametrize("value", HOSTILE)
def test_hostile_values_stay_one_literal_argument(value: str) -> None:
    plan = plan_node(spec(command=("printf", "%s\\n", "{model}"), model=value), 0, "/h", NOW)
    assert plan.argv == ("printf", "%s\\n", value)


@given(st.text())
def test_any_value_is_substituted_verbatim(value: str) -> None:
    assert fill("--x={model}!", {"model": value}) == f"--x={value}!"


def test_literal_braces_and_unknown_or_missing_placeholders() -> None:
    assert fill("{{json}}", {}) == "{json}"
    with pytest.raises(PlanError, match=r"unknown placeholder \{nope\}"):
        fill("{nope}", {})
    with pytest.raises(PlanError, match=r"uses \{drafter\} but the profile sets no launch.drafter"):
        plan_node(spec(command=("x", "{drafter}")), 0, "/h", NOW)
    with pytest.raises(PlanError, match="unknown placeholder"):
        fill("{model.__class__}", {"model": "m"})
    with pytest.raises(PlanError, match=r"launch\.command"):
        fill("{", {})


def test_files_of_a_run() -> None:
    plan = plan_node(spec(), 0, "/home/me", NOW)
    assert plan.run_id == "qwen-20250310-100005"
    assert plan.paths.log == "/home/me/logs/qwen-20250310-100005.log"
    assert plan.paths.latest_log == "/home/me/logs/qwen-latest.log"
    assert plan.paths.record == "/home/me/logs/.bringup/qwen-20250310-100005.json"
    assert plan.paths.current == "/home/me/logs/.bringup/qwen-current.json"
    assert plan.paths.pid_file.endswith(".pid")
    assert plan.paths.exit_file.endswith(".exit")
    assert plan_node(spec(), 0, "/home/me", NOW, attempt=2).run_id == "qwen-20250310-100005-2"


def test_multi_node_plans_fill_rank_and_rendezvous() -> None:
    command = ("serve", "{node_rank}/{nnodes}", "{dist_init_addr}", "{host}")
    plans = plan_launch(spec(command=command, hosts=("gpu-a", "gpu-b")), ["/ha", "/hb"], NOW)
    assert [p.argv for p in plans] == [
        ("serve", "0/2", "gpu-a:20000", "gpu-a"),
        ("serve", "1/2", "gpu-a:20000", "gpu-b"),
    ]
    assert [p.stem for p in plans] == ["qwen-node0", "qwen-node1"]
    assert plans[1].paths.log == "/hb/logs/qwen-node1-20250310-100005.log"
    explicit = plan_node(spec(command=command, hosts=("a", "b"), dist_init_addr="10.0.0.1:5000"),
                         1, "/h", NOW)  # fmt: skip
    assert explicit.argv[2] == "10.0.0.1:5000"


def test_home_expansion_and_local_model_detection() -> None:
    assert expand_home("~/x", "/home/me") == "/home/me/x"
    assert expand_home("~", "/home/me") == "/home/me"
    assert expand_home("rel/dir", "/home/me") == "/home/me/rel/dir"
    assert expand_home("/abs/../dir", "/home/me") == "/dir"
    assert is_local_path("/m")
    assert is_local_path("~/m")
    assert is_local_path("./m")
    assert not is_local_path("Qwen/Qwen3-8B")
    plan = plan_node(spec(model="~/models/q", cwd="~/work", venv="~/venv"), 0, "/home/me", NOW)
    assert plan.model_path == "/home/me/models/q"
    assert plan.argv[4] == "/home/me/models/q"
    assert (plan.cwd, plan.venv) == ("/home/me/work", "/home/me/venv")
    assert plan_node(spec(model="Qwen/Qwen3-8B"), 0, "/h", NOW).model_path is None


def test_gpu_selection_from_the_environment() -> None:
    chosen = plan_node(spec(env=(("CUDA_VISIBLE_DEVICES", "0, 3"),)), 0, "/h", NOW)
    assert chosen.gpus == ("0", "3")
    assert plan_node(spec(), 0, "/h", NOW).gpus is None


def test_invalid_specs_name_the_field() -> None:
    with pytest.raises(PlanError, match=r"launch\.command is not set"):
        plan_node(spec(command=()), 0, "/h", NOW)
    with pytest.raises(PlanError, match=r"launch\.env"):
        plan_node(spec(env=(("BAD-NAME", "x"),)), 0, "/h", NOW)
    with pytest.raises(PlanError, match="home folders"):
        plan_launch(spec(), [], NOW)


def test_stems_and_ids_are_safe_file_names() -> None:
    assert run_stem("../evil/x", 0, 1) == "_evil_x"
    assert run_stem("p", 2, 3) == "p-node2"
    local_noon = datetime(2025, 1, 2, 12, 0, 0, tzinfo=timezone.utc)
    assert run_id("p", local_noon) == "p-20250102-120000"


def test_the_latest_log_link_of_node_zero() -> None:
    assert latest_log_path("q", "/logs", 1) == "/logs/q-latest.log"
    assert latest_log_path("q", "~/logs", 2) == "logs/q-node0-latest.log"
    assert latest_log_path("q", "~/logs", 1, home="/home/me") == "/home/me/logs/q-latest.log"
