"""The start-up schedule, read without running it: tags, stages, bars and failures."""

from __future__ import annotations

import re

import pytest

from tui.sim.layout import ranks_for
from tui.sim.sglang_startup import build_sglang, capture_sizes
from tui.sim.sim_cli import parse
from tui.sim.timeline import Log, Raw, Ready, Signal, Spawn, Timeline

SPEC = ["--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "d/eagle3"]


def _timeline(*argv: str) -> Timeline:
    return build_sglang(parse(list(argv)))


def _tags(timeline: Timeline) -> set[str | None]:
    return {log.who for log in timeline.logs()}


def _by(timeline: Timeline, who: str | None) -> list[str]:
    return [log.msg for log in timeline.logs() if log.who == who]


@pytest.mark.parametrize(
    ("argv", "tags"),
    [
        ([], {""}),
        (["--tp", "4"], {"TP0", "TP1", "TP2", "TP3"}),
        (["--tp", "2", "--ep", "2"], {"TP0 EP0", "TP1 EP1"}),
        (
            ["--tp", "4", "--dp", "2", "--enable-dp-attention", "--ep", "4"],
            {"DP0 TP0 EP0", "DP0 TP1 EP1", "DP1 TP2 EP2", "DP1 TP3 EP3"},
        ),
        (["--tp", "2", "--dp", "2"], {"DP0 TP0", "DP0 TP1", "DP1 TP0", "DP1 TP1"}),
        (["--dp", "2"], {"DP0", "DP1"}),
        (["--tp", "8", "--nnodes", "2", "--node-rank", "1"], {"TP4", "TP5", "TP6", "TP7"}),
    ],
)
def test_rank_tags_as_sglang_builds_them(argv: list[str], tags: set[str]) -> None:
    assert {rank.tag for rank in ranks_for(parse(argv))} == tags
    assert _tags(_timeline(*argv)) - {None} == tags


def test_tp1_prints_no_rank_tag() -> None:
    lines = _by(_timeline(), "")
    assert "Init parallel begin." in lines
    assert any(line.startswith("max_total_num_tokens=") for line in lines)


def test_every_rank_walks_the_stages_in_order() -> None:
    timeline = _timeline("--tp", "4", *SPEC)
    order = [
        "Init parallel begin.",
        "Init parallel ends.",
        "Memory baseline taken.",
        "Load weight begin.",
        "Load weight end.",
        "Load weight begin.",
        "Load weight end.",
        "KV Cache is allocated.",
        "Memory pool end.",
        "KV Cache is allocated.",
        "Memory pool end.",
        "Capture target verify CUDA graph begin.",
        "Capture target verify CUDA graph end.",
    ]
    for tag in ("TP0", "TP1", "TP2", "TP3"):
        lines, start = _by(timeline, tag), 0
        for marker in order:
            found = [i for i in range(start, len(lines)) if lines[i].startswith(marker)]
            assert found, f"{tag}: {marker!r} missing after line {start}"
            start = found[0] + 1
    assert timeline.ready


def test_draft_graphs_and_summary_only_on_tp0() -> None:
    timeline = _timeline("--tp", "4", *SPEC)
    tp0, tp1 = _by(timeline, "TP0"), _by(timeline, "TP1")
    assert any(line.startswith("Capture draft decode CUDA graph begin.") for line in tp0)
    assert any(line.startswith("Capture draft extend CUDA graph end.") for line in tp0)
    assert not any("draft" in line for line in tp1 if line.startswith("Capture"))
    assert sum(line.startswith("max_total_num_tokens=") for line in tp0) == 1
    assert not any(line.startswith("max_total_num_tokens=") for line in tp1)
    assert any("type=LlamaForCausalLMEagle3" in line for line in tp1)


def test_bars_are_untagged_carriage_return_redraws_closed_by_one_newline() -> None:
    timeline = _timeline("--tp", "2")
    raws = [step.action.text for step in timeline.steps if isinstance(step.action, Raw)]
    assert raws
    assert all(text.startswith("\r") for text in raws)
    shards = [text for text in raws if "checkpoint shards" in text]
    graphs = [text for text in raws if text.startswith("\rCapturing batches (bs=")]
    assert sum(text.endswith("\n") for text in shards) == 1
    assert sum(text.endswith("\n") for text in graphs) == 1
    first_shard = r"\rLoading safetensors checkpoint shards: +0% Completed \| 0/\d+ \["
    assert re.match(first_shard, shards[0])
    assert "bs=256 " in graphs[0]
    assert "bs=1 " in graphs[-1]
    assert "36/36" in graphs[-1]


def test_nodes_above_zero_draw_no_bars_and_print_no_timings() -> None:
    timeline = _timeline("--tp", "4", "--nnodes", "2", "--node-rank", "1")
    assert not any(isinstance(step.action, Raw) for step in timeline.steps)
    assert not any(msg.startswith("Engine startup timings") for msg in _by(timeline, None))
    assert isinstance(timeline.steps[-1].action, Ready)


def test_server_args_echo_unknown_flags() -> None:
    main = _by(_timeline("--tp", "2", "--trust-remote-code", "--cuda-graph-max-bs", "16"), None)
    args = next(line for line in main if line.startswith("server_args={"))
    assert "'tp_size': 2" in args
    assert "'trust_remote_code': True" in args
    assert "'cuda_graph_max_bs': 16" in args


def test_children_are_spawned_after_the_arguments() -> None:
    timeline = _timeline("--tp", "2")
    spawn = next(step for step in timeline.steps if isinstance(step.action, Spawn))
    args = next(
        step
        for step in timeline.steps
        if isinstance(step.action, Log) and step.action.msg.startswith("server_args=")
    )
    assert spawn.at > args.at
    assert isinstance(spawn.action, Spawn)
    assert [name for name, _ in spawn.action.children] == [
        "scheduler_0",
        "scheduler_1",
        "detokenizer",
    ]


def test_capture_sizes_match_sglang_defaults() -> None:
    assert len(capture_sizes(256)) == 36
    assert capture_sizes(48) == [1, 2, 4, 8, 12, 16, 24, 32, 40, 48]


def test_time_scale_shrinks_reported_durations() -> None:
    slow = _by(_timeline("--tp", "2", "--time-scale", "1"), "TP0")
    fast = _by(_timeline("--tp", "2", "--time-scale", "0.01"), "TP0")
    assert "Load weight end. elapsed=330.00 s" in "\n".join(slow)
    assert "Load weight end. elapsed=3.30 s" in "\n".join(fast)


@pytest.mark.parametrize(
    ("scenario", "text", "signal"),
    [
        ("rank-crash", "Scheduler hit an exception: Traceback", "sigquit"),
        (
            "oom-kv-cache",
            "Not enough memory. Please try to increase --mem-fraction-static.",
            "sigquit",
        ),
        ("cuda-graph-hang", "Scheduler watchdog timeout (self.watchdog_timeout=", "sigquit"),
        ("nccl-timeout", "Watchdog caught collective operation timeout", "abort"),
    ],
)
def test_failure_scenarios_end_in_their_failure(scenario: str, text: str, signal: str) -> None:
    timeline = _timeline("--tp", "4", "--scenario", scenario, "--fail-rank", "2")
    assert not timeline.ready
    written = "\n".join(
        [log.msg for log in timeline.logs()]
        + [step.action.text for step in timeline.steps if isinstance(step.action, Raw)]
    )
    assert text in written
    last = timeline.steps[-1].action
    assert isinstance(last, Signal)
    assert last.how == signal
    assert "The server is fired up" not in written


def test_cuda_graph_hang_stops_one_rank_mid_capture() -> None:
    timeline = _timeline("--tp", "4", "--scenario", "cuda-graph-hang", "--fail-rank", "2")
    for tag in ("TP0", "TP1", "TP2", "TP3"):
        lines = _by(timeline, tag)
        assert any(line.startswith("Capture target decode CUDA graph begin.") for line in lines)
        assert not any(line.startswith("Capture target decode CUDA graph end.") for line in lines)
    assert _by(timeline, "TP2")[-1].startswith("Scheduler watchdog timeout")


def test_slow_rank_finishes_loading_last_but_the_start_completes() -> None:
    timeline = _timeline("--tp", "4", "--scenario", "slow-rank", "--fail-rank", "3")
    ends = [
        (step.at, step.action.who)
        for step in timeline.steps
        if isinstance(step.action, Log) and step.action.msg.startswith("Load weight end.")
    ]
    assert max(ends)[1] == "TP3"
    assert timeline.ready


def test_high_memory_fraction_turns_the_kv_failure_into_a_cuda_oom() -> None:
    timeline = _timeline("--scenario", "oom-kv-cache", "--mem-fraction-static", "0.95")
    assert any("torch.OutOfMemoryError: CUDA out of memory." in log.msg for log in timeline.logs())


def test_a_model_that_leaves_no_kv_room_fails_without_a_failure_scenario() -> None:
    fits = _timeline("--model-path", "deepseek-ai/DeepSeek-V3", "--tp", "8")
    assert fits.ready
    timeline = _timeline(
        "--model-path", "deepseek-ai/DeepSeek-V3", "--tp", "8", "--mem-fraction-static", "0.5"
    )
    assert not timeline.ready
    assert "Current value: mem_fraction_static=0.5" in timeline.logs()[-1].msg


def test_a_model_larger_than_the_gpu_fails_while_loading() -> None:
    timeline = _timeline("--model-path", "deepseek-ai/DeepSeek-V3", "--tp", "4")
    assert not timeline.ready
    failure = timeline.logs()[-1].msg
    assert "torch.OutOfMemoryError: CUDA out of memory." in failure
    assert "load_weights" in failure
    assert not any(log.msg.startswith("Load weight end.") for log in timeline.logs())


def test_the_same_seed_gives_the_same_schedule() -> None:
    first = _timeline("--tp", "8", "--seed", "7")
    again = _timeline("--tp", "8", "--seed", "7")
    other = _timeline("--tp", "8", "--seed", "8")
    assert [step.at for step in first.steps] == [step.at for step in again.steps]
    assert [step.at for step in first.steps] != [step.at for step in other.steps]
