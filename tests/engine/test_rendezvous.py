"""Rendezvous counts and unreachable peers: the failure says which ranks or nodes are missing,
and the multi-node view marks them. Lines are PyTorch's, Gloo's and NCCL's format strings
filled in (sources in ``tui/engine/servers/rendezvous_lines.py``); the Gloo lines are checked
against a real log of the shared corpus too. No corpus log shows a TCPStore count."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.engine.engine_helpers import run_chunks, run_text
from tui.app.widgets.node_rows import node_title
from tui.engine.cluster.cluster_engine import ClusterEngine
from tui.engine.judge.judge import Signals, judge
from tui.engine.servers.hits import RendezvousHit
from tui.engine.servers.line_grammar import LineGrammar
from tui.engine.startup.snapshot import Snapshot
from tui.engine.startup.vocabulary import FailureKind, Verdict
from tui.engine.timing.estimate import default_expectations

STORE_TIMEOUT = (
    "torch.distributed.DistStoreError: Timed out after 601 seconds waiting for clients. "
    "4/8 clients joined."
)
FORMATS = [
    # torch/csrc/distributed/c10d/TCPStore.cpp: "Timed out after {} seconds waiting for
    # clients. {}/{} clients joined."
    (STORE_TIMEOUT, RendezvousHit(4, 8)),
    # torch/csrc/distributed/c10d/ProcessGroupGloo.cpp: "Rank {} is connected to {} peer
    # ranks. Expected number of connected peer ranks is : {}"
    ("[Gloo] Rank 3 is connected to 5 peer ranks. Expected number of connected peer ranks is "
     ": 7", RendezvousHit(6, 8, 3)),
    # gloo/transport/tcp/pair.cc: "Connection closed by peer " + peer address
    ("RuntimeError: [/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:544] Connection "
     "closed by peer [10.0.0.2]:15006", RendezvousHit(peer="10.0.0.2")),
    # nccl src/misc/socket.cc: "Net : Connect to %s failed : %s"
    ("gpu-a:1234:1300 [0] NCCL WARN Net : Connect to 10.0.0.3<43527> failed : Connection "
     "refused", RendezvousHit(peer="10.0.0.3")),
    # nccl src/misc/socket.cc: "socketProgressOpt: Call to recv from %s failed : %s"
    ("gpu-a:1234:1301 [0] misc/socket.cc:50 NCCL WARN socketProgressOpt: Call to recv from "
     "10.0.0.4<35789> failed : Connection reset by peer", RendezvousHit(peer="10.0.0.4")),
    # torch/csrc/distributed/c10d/socket.cpp: "The client socket has failed to connect to
    # [{}]:{} (errno: {} - {})." and "... has timed out after {} while trying to connect to
    # ({}, {})."
    ("[W1201 20:00:00.000 socket.cpp:755] [c10d] The client socket has failed to connect to "
     "[10.0.0.1]:29500 (errno: 111 - Connection refused).", RendezvousHit(peer="10.0.0.1")),
    ("torch.distributed.DistNetworkError: The client socket has timed out after 600s while "
     "trying to connect to (10.0.0.1, 29500).", RendezvousHit(peer="10.0.0.1")),
]  # fmt: skip


@pytest.mark.parametrize(
    ("line", "expected"),
    FORMATS,
    ids=["store", "gloo", "peer", "nccl", "nccl-recv", "c10d-refused", "c10d-timeout"],
)
def test_rendezvous_lines_from_format_strings(line: str, expected: RendezvousHit) -> None:
    hits = [hit for parsed in LineGrammar().parse(line) for hit in parsed.hits]
    assert expected in hits


NODE0 = "\n".join(
    [
        "[2026-01-01 10:00:00] server_args={'tp_size': 8, 'nnodes': 2, 'node_rank': 0}",
        *(f"[2026-01-01 10:00:02 TP{k}] Init torch distributed begin." for k in range(4)),
        "[2026-01-01 10:10:03 TP0] Scheduler hit an exception: Traceback (most recent call last):",
        '  File "/sgl/python/sglang/srt/distributed/parallel_state.py", line 1200, in '
        "init_distributed_environment",
        STORE_TIMEOUT,
        "",
    ]
)


def _reason(snapshot: Snapshot) -> str:
    judgement = judge(snapshot, Signals(), default_expectations(600.0), 0.0)
    assert judgement.verdict is Verdict.FAILED
    return judgement.reason


def test_a_store_timeout_names_the_ranks_that_never_joined() -> None:
    snapshot, _ = run_text(NODE0)
    assert snapshot.failure is not None
    assert snapshot.failure.kind is FailureKind.NCCL
    assert snapshot.rendezvous is not None
    assert snapshot.rendezvous.missing == 4
    assert "4/8 ranks joined the rendezvous; missing ranks 4-7" in _reason(snapshot)


def test_the_multi_node_view_marks_the_node_that_never_joined() -> None:
    now = [0.0]
    cluster = ClusterEngine(["gpu-a", "gpu-b"], clock=lambda: now[0])
    now[0] = 1.0
    cluster.feed(1, b"[2026-01-01 10:00:00] server_args={'tp_size': 8, 'nnodes': 2}\n")
    now[0] = 2.0
    cluster.feed(0, NODE0.encode())
    snapshot = cluster.snapshot
    first, second = snapshot.nodes
    assert (first.missing, second.missing) == (False, True)
    assert second.note == "missing from the rendezvous (4/8 joined)"
    assert "missing from the rendezvous (4/8 joined)" in node_title(1, second, 2.0).plain
    assert "missing ranks 4-7 (node 1 (gpu-b))" in _reason(snapshot)


def test_a_node_whose_address_went_away_is_marked() -> None:
    now = [0.0]
    cluster = ClusterEngine(["10.0.0.1", "10.0.0.2"], clock=lambda: now[0])
    lines = [
        "[2026-01-01 10:00:00] server_args={'tp_size': 8, 'nnodes': 2, 'node_rank': 1}",
        "[2026-01-01 10:00:02 TP4] Init torch distributed begin.",
        "[2026-01-01 10:05:00 TP4] Scheduler hit an exception: Traceback (most recent call last):",
        "RuntimeError: [/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:544] Connection "
        "closed by peer [10.0.0.2]:15006",
        "",
    ]
    cluster.feed(0, "\n".join(lines).encode())
    assert [node.missing for node in cluster.snapshot.nodes] == [False, True]
    assert "peer gone or unreachable: 10.0.0.2" in _reason(cluster.snapshot)


def test_gloo_counts_and_the_peer_in_a_real_log(shared: Path) -> None:
    # shun8686/for_debug: node 2 of a 2-node PD prefill instance; every Gloo mesh completes
    # (31 of 31 peers), then node 0 (192.168.0.81) goes away at teardown
    data = (shared / "corpus" / "logs" / "013_sglang_ascend-pd-prefill-node1-tp16-31-gloo-"
            "closed.log").read_bytes()  # fmt: skip
    snapshot, _ = run_chunks([data])
    assert snapshot.rendezvous is not None
    assert snapshot.rendezvous.missing == 0
    assert snapshot.rendezvous.peers == ("192.168.0.81",)
    assert snapshot.failure is not None
    assert snapshot.failure.kind is FailureKind.TRACEBACK_OTHER
