"""Real logs from public GitHub threads (``tests/engine/public_logs.py``, each excerpt with its
thread), read as the rules intend: one test per case of issue 23.

Cases without a full real log: the router's ``Timeout {}s waiting for workers`` was searched for
in SGLang's issues and pull requests ("waiting for workers to become healthy",
"--router-worker-startup-timeout-secs"); only the title of sglang#2778 quotes the error, so that
line is read alone here and in context from its format string in ``test_startup_timeouts.py``.
Gloo's ``not connected`` was searched for in PyTorch, vLLM and SGLang threads ("Gloo
connectFullMesh failed", "is not connected"); the threads found show only ``connectFullMesh
failed ... no error`` without a peer or a count, which names no rank, so no rule reads it."""

from __future__ import annotations

from tests.engine import public_logs as logs
from tests.engine.engine_helpers import run_text
from tui.engine.gpu.kernel_faults import kernel_faults
from tui.engine.servers.hits import PhaseHit, PhaseStep, ProgressHit, RendezvousHit
from tui.engine.servers.line_grammar import LineGrammar
from tui.engine.startup.log_events import PhaseStepped, StageProgressed
from tui.engine.startup.vocabulary import FailureKind, Outcome, Phase, Stage


def _hits(text: str) -> list[object]:
    grammar = LineGrammar()
    found: list[object] = []
    for line in text.splitlines():
        found += [hit for parsed in grammar.parse(line) for hit in parsed.hits]
    return found


def _phase_hits(text: str) -> list[PhaseHit]:
    return [hit for hit in _hits(text) if isinstance(hit, PhaseHit)]


def _bars(text: str) -> list[ProgressHit]:
    return [hit for hit in _hits(text) if isinstance(hit, ProgressHit)]


def _peers(text: str) -> list[RendezvousHit]:
    return [hit for hit in _hits(text) if isinstance(hit, RendezvousHit)]


# ---------------------------------------------------------------------------- (a) DeepGEMM


def test_deepgemm_warmup_session_and_bar() -> None:
    steps = [(hit.step, hit.detail) for hit in _phase_hits(logs.DEEPGEMM_WARMUP)]
    assert steps == [
        (PhaseStep.START, "<GEMM_NT_F8F8BF16> N=16384, K=512, num_groups=1"),
        (PhaseStep.BEGIN, ""),
        (PhaseStep.START, "<GEMM_NT_F8F8BF16> N=7168, K=8192, num_groups=1"),
    ]
    bar = _bars(logs.DEEPGEMM_WARMUP)
    assert [(b.done, b.total, b.phase) for b in bar] == [(65536, 65536, Phase.DEEPGEMM_JIT)]


def test_deepgemm_first_release_wording() -> None:
    steps = [hit.step for hit in _phase_hits(logs.DEEPGEMM_FIRST_RELEASE)]
    assert steps == [PhaseStep.BEGIN, PhaseStep.START]


# ---------------------------------------------------------------------------- (b) FlashInfer


def test_flashinfer_jit_module() -> None:
    hits = _phase_hits(logs.FLASHINFER_JIT)
    assert [(h.phase, h.step) for h in hits] == [
        (Phase.FLASHINFER_JIT, PhaseStep.START),
        (Phase.FLASHINFER_JIT, PhaseStep.DONE),
    ]
    assert hits[0].detail.startswith("batch_mla_attention_dtype_q_bf16")


def test_flashinfer_autotune_in_sglang_counts_profiles() -> None:
    text = logs.FLASHINFER_AUTOTUNE_SGLANG
    assert [(h.phase, h.step) for h in _phase_hits(text)] == [
        (Phase.FLASHINFER_AUTOTUNE, PhaseStep.BEGIN)
    ]
    bars = _bars(text)
    assert [(b.done, b.total, b.phase) for b in bars] == [(10, 10, Phase.FLASHINFER_AUTOTUNE)]
    assert bars[0].label == "[AutoTuner]: Tuning flashinfer::trtllm_fp4_block_scale_moe"


def test_flashinfer_autotune_in_vllm_is_progress_not_a_stage() -> None:
    bars = _bars(logs.FLASHINFER_AUTOTUNE_VLLM)
    assert [(b.done, b.total, b.phase) for b in bars] == [(12, 22, Phase.FLASHINFER_AUTOTUNE)]


# ---------------------------------------------------------------------------- (c) torch.compile


def test_vllm_compile_timing_lines() -> None:
    hits = _phase_hits(logs.VLLM_COMPILE_FIRST)
    assert [(h.step, h.detail, h.seconds) for h in hits] == [
        (PhaseStep.DONE, "", 4.6),
        (PhaseStep.DONE, "general shape", 14.77),
        (PhaseStep.END, "", 19.37),
    ]
    assert all(h.phase is Phase.TORCH_COMPILE for h in hits)


def test_vllm_compile_cache_line() -> None:
    assert _phase_hits(logs.VLLM_COMPILE_CACHE) == [PhaseHit(Phase.TORCH_COMPILE, PhaseStep.BEGIN)]


def test_sglang_piecewise_compile_is_a_phase_of_the_graph_stage() -> None:
    snapshot, events = run_text(logs.SGLANG_PIECEWISE)
    rank = snapshot.rank("TP0")
    assert rank is not None
    assert rank.stage is Stage.CUDA_GRAPH
    stepped = [e for e in events if isinstance(e, PhaseStepped)]
    assert {e.phase for e in stepped} == {Phase.TORCH_COMPILE}
    assert {e.stage for e in stepped} == {Stage.CUDA_GRAPH}
    assert (0, 5) in [(e.done, e.total) for e in stepped]
    assert rank.phase is not None
    assert rank.phase.label.startswith("torch.compile")


def test_inductor_autotune_counts_as_compile_progress() -> None:
    hits = _phase_hits(logs.ROUTER_PENDING)
    assert [(h.phase, h.step, h.seconds) for h in hits] == [
        (Phase.TORCH_COMPILE, PhaseStep.DONE, 1.3427)
    ]


# ---------------------------------------------------------------------------- (d) graph sizes


def test_sglang_graph_sizes_and_bars() -> None:
    _, events = run_text(logs.SGLANG_PIECEWISE)
    progressed = [(e.done, e.total) for e in events if isinstance(e, StageProgressed)]
    assert progressed[:2] == [(0, 4), (4, 4)]
    bars = _bars(logs.SGLANG_CAPTURE_BARS)
    assert [(b.stage, b.done, b.total) for b in bars] == [
        (Stage.CUDA_GRAPH, 21, 52),
        (Stage.CUDA_GRAPH, 23, 52),
    ]


def test_vllm_graph_bars() -> None:
    bars = _bars(logs.VLLM_CAPTURE_BARS)
    assert [(b.stage, b.done, b.total) for b in bars] == [
        (Stage.CUDA_GRAPH, 51, 51),
        (Stage.CUDA_GRAPH, 2, 35),
    ]


# ---------------------------------------------------------------------------- (e) timeouts

VLLM_HEAD = (
    "(APIServer pid=10) INFO 03-01 17:33:10 [api_server.py:1000] vLLM API server version 0.11.0\n"
)


def test_vllm_engine_timeout_names_the_setting() -> None:
    for text in (logs.VLLM_ENGINE_TIMEOUT, logs.VLLM_ENGINE_TIMEOUT_NAMED):
        snapshot, _ = run_text(VLLM_HEAD + "(APIServer pid=10) Traceback (most recent call "
                               "last):\n" + text)  # fmt: skip
        assert snapshot.failure is not None
        assert snapshot.failure.kind is FailureKind.STARTUP_TIMEOUT
        assert snapshot.failure.setting.startswith("VLLM_ENGINE_READY_TIMEOUT_S")


def test_sglang_warmup_timeout_over_several_lines() -> None:
    head = "[2025-05-20 10:00:00] server_args=ServerArgs(model_path='m', tp_size=1)\n"
    snapshot, _ = run_text(head + "[2025-05-20 10:10:00] " + logs.SGLANG_WARMUP_TIMEOUT)
    assert snapshot.failure is not None
    assert snapshot.failure.kind is FailureKind.STARTUP_TIMEOUT
    assert snapshot.failure.setting.startswith("SGLANG_WARMUP_TIMEOUT")


def test_router_timeout_names_its_setting() -> None:
    head = "[2025-01-20 10:00:00] server_args=ServerArgs(model_path='m', tp_size=1)\n"
    snapshot, _ = run_text(head + logs.ROUTER_TIMEOUT)
    assert snapshot.failure is not None
    assert snapshot.failure.kind is FailureKind.STARTUP_TIMEOUT
    assert snapshot.failure.setting.startswith("--worker-startup-timeout-secs")


def test_router_pending_health_checks_are_not_a_failure() -> None:
    head = "[2025-03-08 02:30:00] server_args=ServerArgs(model_path='m', tp_size=1)\n"
    snapshot, _ = run_text(head + logs.ROUTER_PENDING)
    assert snapshot.failure is None
    assert snapshot.outcome is Outcome.INCOMPLETE


# ---------------------------------------------------------------------------- (f) TCP store


def test_store_counts() -> None:
    assert _peers(logs.STORE_CLIENTS) == [RendezvousHit(1, 3)]
    assert _peers(logs.STORE_WORKERS) == [RendezvousHit(1, 2)]


# ---------------------------------------------------------------------------- (g) connect


def test_nccl_socket_peers() -> None:
    assert [hit.peer for hit in _peers(logs.NCCL_SOCKET)] == ["10.0.0.2", "node1"]


def test_c10d_client_peers() -> None:
    assert [hit.peer for hit in _peers(logs.C10D_CONNECT)] == [
        "::ffff:0.104.99.143",
        "0.104.99.143",
    ]
    assert [hit.peer for hit in _peers(logs.C10D_TIMEOUT)] == ["172.17.0.9"]


def test_gloo_connect_refused_names_the_peer() -> None:
    assert [hit.peer for hit in _peers(logs.GLOO_REFUSED)] == ["172.31.71.170"]


def test_complete_gloo_mesh() -> None:
    assert _peers(logs.GLOO_COMPLETE) == [RendezvousHit(8, 8, 1), RendezvousHit(8, 8, 0)]


# ---------------------------------------------------------------------------- (h) kernel log


def test_xid_lines_from_journal_and_dmesg() -> None:
    faults = kernel_faults(logs.KERNEL_XID + logs.KERNEL_XID_DMESG_T)
    assert [(f.kind, f.code, f.device) for f in faults] == [
        ("xid", 45, "PCI:0000:dc:00"),
        ("xid", 45, "PCI:0000:ed:00"),
        ("xid", 45, "PCI:0000:61:00"),
    ]
    assert faults[0].label == "Xid 45 on PCI:0000:dc:00: preemptive cleanup after an earlier error"


def test_sxid_lines() -> None:
    faults = kernel_faults(logs.KERNEL_SXID + logs.KERNEL_SXID_LEVEL)
    assert [(f.kind, f.code, f.device) for f in faults] == [
        ("sxid", 22013, "PCI:0000:04:00.0"),
        ("sxid", 12028, "PCI:0000:84:00.0"),
    ]
    assert faults[0].meaning.startswith("Non-fatal, Link 44")


def test_fallen_off_the_bus_in_both_wordings() -> None:
    old = kernel_faults(logs.KERNEL_OFF_BUS_OLD)
    assert [(f.kind, f.device) for f in old] == [("off_bus", "0000:01:00.0")]
    split = kernel_faults(logs.KERNEL_OFF_BUS_SPLIT)
    assert [(f.kind, f.device) for f in split] == [("off_bus", "0000:b3:00.0")]
