"""Rank to GPU mapping: override, launch layout, holding processes, then index order."""

from __future__ import annotations

import pytest

from tui.engine.gpu.gpu_csv import ComputeApp, GpuSample
from tui.engine.gpu.gpu_map import (
    LaunchLayout,
    MapSource,
    device_for,
    map_ranks,
    rank_numbers,
    visible_devices,
)

GPUS = tuple(GpuSample(index=i, uuid=f"GPU-{i:04d}-abcd") for i in range(8))
TP8 = tuple(f"TP{i}" for i in range(8))


@pytest.mark.parametrize(
    ("tag", "numbers"),
    [
        ("TP3", {"TP": 3}),
        ("DP0 TP3 EP3", {"DP": 0, "TP": 3, "EP": 3}),
        ("PP1 TP2", {"PP": 1, "TP": 2}),
        ("Worker_TP5", {"TP": 5}),
        ("EngineCore_DP1", {"DP": 1}),
        ("sglang::scheduler_DP1_TP6_EP6", {"DP": 1, "TP": 6, "EP": 6}),
        ("VLLM::Worker_TP7", {"TP": 7}),
        ("main", {}),
        ("STOP1", {}),
    ],
)
def test_rank_numbers(tag: str, numbers: dict[str, int]) -> None:
    assert rank_numbers(tag) == numbers


def test_visible_devices_resolves_indexes_and_uuid_prefixes() -> None:
    assert visible_devices(None, GPUS) is None
    assert visible_devices("4,5, 6,7", GPUS) == (4, 5, 6, 7)
    assert visible_devices("GPU-0003,GPU-0001-abcd", GPUS) == (3, 1)
    assert visible_devices("MIG-aaaa", GPUS) is None
    assert visible_devices("0,,1", GPUS) is None


def test_placement_rule_matches_sglang_layouts() -> None:
    base = LaunchLayout(tp_size=4, base_gpu_id=4)
    assert [device_for({"TP": tp}, base) for tp in range(4)] == [4, 5, 6, 7]
    step = LaunchLayout(tp_size=4, gpu_id_step=2)
    assert [device_for({"TP": tp}, step) for tp in range(4)] == [0, 2, 4, 6]
    pp = LaunchLayout(tp_size=4, pp_size=2)
    assert device_for({"PP": 1, "TP": 2}, pp) == 6
    dp = LaunchLayout(tp_size=2, dp_size=4)
    assert device_for({"DP": 3, "TP": 1}, dp) == 7
    attention_dp = LaunchLayout(tp_size=8, dp_size=8, dp_attention=True)
    assert device_for({"DP": 3, "TP": 3}, attention_dp) == 3
    two_nodes = LaunchLayout(tp_size=16, nnodes=2)
    assert device_for({"TP": 11}, two_nodes) == 3


def test_launch_layout_goes_through_cuda_visible_devices() -> None:
    layout = LaunchLayout(cuda_visible_devices="4,5,6,7", tp_size=4)
    mapped = map_ranks(("TP0", "TP3", "main"), gpus=GPUS, layout=layout)
    assert [(m.gpu, m.source) for m in mapped[:2]] == [
        (4, MapSource.LAUNCH),
        (7, MapSource.LAUNCH),
    ]
    assert "CUDA_VISIBLE_DEVICES=4,5,6,7" in mapped[1].note
    assert mapped[2].gpu is None
    assert mapped[2].label == "GPU ? (no GPU rank)"


def test_device_outside_cuda_visible_devices_is_unknown_not_wrong() -> None:
    layout = LaunchLayout(cuda_visible_devices="0,1", tp_size=4)
    (mapped,) = map_ranks(("TP3",), gpus=GPUS, layout=layout)
    assert mapped.gpu is None
    assert "not in CUDA_VISIBLE_DEVICES" in mapped.label


def test_override_wins_over_everything() -> None:
    layout = LaunchLayout(tp_size=8)
    mapped = map_ranks(TP8, gpus=GPUS, layout=layout, override={"TP0": 7})
    assert (mapped[0].gpu, mapped[0].source, mapped[0].label) == (
        7,
        MapSource.OVERRIDE,
        "GPU 7 (override)",
    )
    assert mapped[1].source is MapSource.LAUNCH


def test_processes_by_title_and_by_pid() -> None:
    apps = (
        ComputeApp(100, "sglang::scheduler_TP1", 70000.0, gpu_uuid="GPU-0005-abcd"),
        ComputeApp(200, "python3", 70000.0, gpu_uuid="GPU-0002-ABCD"),
    )
    mapped = map_ranks(("TP0", "TP1"), gpus=GPUS, apps=apps, rank_pids={"TP0": 200})
    assert [(m.gpu, m.source) for m in mapped] == [(2, MapSource.PROCESS), (5, MapSource.PROCESS)]
    assert mapped[1].note == "process 100 sglang::scheduler_TP1"
    assert mapped[0].note == "pid 200 python3"


def test_dp_attention_titles_need_both_numbers_to_match() -> None:
    apps = (ComputeApp(1, "sglang::scheduler_DP1_TP0_EP0", 1.0, gpu_uuid="GPU-0006-abcd"),)
    mapped = map_ranks(("DP0 TP0 EP0", "DP1 TP0 EP0"), gpus=GPUS, apps=apps)
    assert mapped[0].source is MapSource.ORDER
    assert (mapped[1].gpu, mapped[1].source) == (6, MapSource.PROCESS)


def test_index_order_is_the_fallback_and_knows_its_limits() -> None:
    four = GPUS[4:]
    mapped = map_ranks(("TP0", "TP3", "TP5"), gpus=four)
    assert [(m.gpu, m.source) for m in mapped[:2]] == [(4, MapSource.ORDER), (7, MapSource.ORDER)]
    assert mapped[2].gpu is None
    assert mapped[2].note == "only 4 GPUs seen"
    assert map_ranks(("TP2",))[0].gpu == 2


def test_the_second_hosts_ranks_take_its_gpus_in_order() -> None:
    """TP16 over two hosts of eight GPUs: node 1 runs TP8 to TP15 on its GPUs 0 to 7."""
    second = [f"TP{tp}" for tp in range(8, 16)]
    mapped = map_ranks(second, gpus=GPUS, tp_size=16, nnodes=2)
    assert [m.gpu for m in mapped] == list(range(8))
    assert {m.source for m in mapped} == {MapSource.ORDER}
    alone = map_ranks(second, gpus=GPUS)
    assert [m.gpu for m in alone] == [None] * 8, "without the layout, TP8 wants a ninth GPU"


def test_a_vllm_worker_named_by_its_global_rank_has_a_tp_number() -> None:
    assert rank_numbers("Worker rank=3") == {"TP": 3}
    assert rank_numbers("VllmWorker rank=12") == {"TP": 12}
    assert rank_numbers("Worker_TP1 rank=3") == {"TP": 1}
