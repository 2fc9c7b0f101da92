"""Compile, JIT and autotune phases: read from the libraries' own format strings and from real
logs, shown inside their stage, and judged by their own stall rule."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.engine.engine_helpers import run_chunks
from tests.engine.jit_logs import START, JitRun, build_done, build_start, sglang_line, to_graphs
from tests.engine.startup_factory import FP
from tui.engine.logs.replay_report import replay_chunks, report_text
from tui.engine.servers.hits import PhaseHit, PhaseStep, ProgressHit
from tui.engine.servers.line_grammar import LineGrammar
from tui.engine.startup.log_events import Event, PhaseStepped, StageProgressed
from tui.engine.startup.snapshot import Snapshot
from tui.engine.startup.vocabulary import Outcome, Phase, Stage, Verdict
from tui.engine.timing.estimate import (
    Basis,
    PhaseSample,
    RunRecord,
    default_expectations,
    from_runs,
)


def _hits(line: str) -> list[object]:
    return [hit for parsed in LineGrammar().parse(line) for hit in parsed.hits]


# Each line is the library's format string filled in (file and string cited).
FORMATS = [
    # aiter/jit/core.py: logger.info(f"start build [{md_name}] under {opbd_dir}")
    ("[aiter] start build [module_moe_asm] under /opt/aiter/jit/build/module_moe_asm",
     PhaseHit(Phase.AITER_BUILD, PhaseStep.START, "module_moe_asm")),
    # aiter/jit/core.py: logger.info(f"finish build [{md_name}], cost {cost:.1f}s")
    ("[aiter] finish build [module_moe_asm], cost 28.7s",
     PhaseHit(Phase.AITER_BUILD, PhaseStep.DONE, "module_moe_asm", 28.7)),
    # flashinfer/autotuner.py: logger.info("[Autotuner]: Autotuning process starts ...")
    ("2026-08-02 11:08:16,624 - INFO - autotuner.py:651 - flashinfer.jit: [Autotuner]: "
     "Autotuning process starts ...", PhaseHit(Phase.FLASHINFER_AUTOTUNE, PhaseStep.BEGIN)),
    ("2026-08-02 11:08:16,661 - INFO - autotuner.py:674 - flashinfer.jit: [Autotuner]: "
     "Autotuning process ends", PhaseHit(Phase.FLASHINFER_AUTOTUNE, PhaseStep.END)),
    # flashinfer/jit/core.py: logger.info(f"Loading JIT ops: {name}") / f"Finished loading ..."
    ("2025-05-01 10:00:00,000 - INFO - flashinfer.jit: Loading JIT ops: batch_prefill_x",
     PhaseHit(Phase.FLASHINFER_JIT, PhaseStep.START, "batch_prefill_x")),
    ("2025-05-01 10:00:41,000 - INFO - flashinfer.jit: Finished loading JIT ops: "
     "batch_prefill_x", PhaseHit(Phase.FLASHINFER_JIT, PhaseStep.DONE, "batch_prefill_x")),
    # sglang/srt/layers/deep_gemm_wrapper/compile_utils.py
    ("[2025-06-01 10:00:00 TP0] Entering DeepGEMM JIT Pre-Compile session. It may take a long "
     "time (typically 10-20 mins) if you have not run `sglang.compile_deep_gemm`.",
     PhaseHit(Phase.DEEPGEMM_JIT, PhaseStep.BEGIN)),
    ("[2025-06-01 10:00:01 TP0] Try DeepGEMM JIT Compiling for <GEMM_NT_F8F8BF16> N=7168, "
     "K=16384, num_groups=1 with all Ms.",
     PhaseHit(Phase.DEEPGEMM_JIT, PhaseStep.START,
              "<GEMM_NT_F8F8BF16> N=7168, K=16384, num_groups=1")),
    # vllm/compilation/backends.py and monitor.py
    ("(EngineCore_DP0 pid=7) INFO 01-01 21:29:44 [backends.py:643] Using cache directory: "
     "/root/.cache/vllm/torch_compile_cache/ebbf67af8b/rank_0_0/backbone for vLLM's "
     "torch.compile", PhaseHit(Phase.TORCH_COMPILE, PhaseStep.BEGIN)),
    ("(EngineCore_DP0 pid=7) INFO 01-01 21:29:56 [backends.py:278] Compiling a graph for "
     "compile range (1, 2048) takes 5.28 s",
     PhaseHit(Phase.TORCH_COMPILE, PhaseStep.DONE, "compile range (1, 2048)", 5.28)),
    ("(EngineCore_DP0 pid=7) INFO 01-01 21:29:50 [backends.py:160] Directly load the compiled "
     "graph(s) for compile range (1, 2048) from the cache, took 1.250 s",
     PhaseHit(Phase.TORCH_COMPILE, PhaseStep.DONE, "compile range (1, 2048)", 1.25)),
    ("(EngineCore_DP0 pid=7) INFO 01-01 21:29:56 [monitor.py:34] torch.compile takes 13.92 s "
     "in total", PhaseHit(Phase.TORCH_COMPILE, PhaseStep.END, "", 13.92)),
]  # fmt: skip


@pytest.mark.parametrize(("line", "expected"), FORMATS, ids=[f[1].phase.value for f in FORMATS])
def test_phase_lines_from_format_strings(line: str, expected: PhaseHit) -> None:
    assert expected in _hits(line)


def test_deepgemm_bar_moves_the_phase_not_the_stage() -> None:
    hits = _hits("DeepGEMM warmup: 45%|████      | 9/20 [00:01<00:02,  5.0it/s]")
    assert hits == [ProgressHit(Stage.PROCESS_START, 9, 20, "DeepGEMM warmup", Phase.DEEPGEMM_JIT)]


@pytest.mark.parametrize(
    ("bar", "phase"),
    [
        # sglang/srt/model_executor/piecewise_cuda_graph_runner.py:
        # compile_range.set_description(f"Compiling num tokens ({num_tokens=})")
        ("Compiling num tokens (num_tokens=12):  40%|████      | 2/5 [00:04<00:06,  2.0s/it]",
         Phase.TORCH_COMPILE),
        # flashinfer/autotuner.py: tqdm(desc=f"[AutoTuner]: Tuning {custom_op}", unit="profile")
        ("[AutoTuner]: Tuning flashinfer::fp8_gemm:  50%|█████     | 3/6 [00:09<00:09, "
         "3.0s/profile]", Phase.FLASHINFER_AUTOTUNE),
    ],
    ids=["sglang-compile", "flashinfer-autotune"],
)  # fmt: skip
def test_compile_and_autotune_bars_move_their_phase(bar: str, phase: Phase) -> None:
    run = JitRun()
    run.feed(START, to_graphs(START))
    run.feed(START + 10, [bar])
    state = run.engine.snapshot.rank("TP0").phase  # type: ignore[union-attr]
    assert state is not None
    assert (state.phase, state.stage) == (phase, Stage.CUDA_GRAPH)
    assert state.label.startswith(f"{phase.label} ")
    assert state.label.split()[-1] in ("2/5", "3/6")
    assert run.judge_at(START + 60).verdict is Verdict.STARTING


def test_graph_sizes_give_the_capture_total() -> None:
    # sglang/srt/model_executor/cuda_graph_runner.py: f"Capture cuda graph bs {capture_bs}"
    hits = _hits("[2026-01-19 20:23:03 DP0 TP0 EP0] Capture cuda graph bs [8, 10, 12, 14, 16]")
    assert ProgressHit(Stage.CUDA_GRAPH, 0, 5, "Capture cuda graph bs") in hits


def test_a_hostile_module_name_is_bounded() -> None:
    hits = _hits(f"[aiter] finish build [{'x' * 5000}], cost 1.0s")
    assert isinstance(hits[0], PhaseHit)
    assert len(hits[0].detail) <= 120


# ---------------------------------------------------------------------------- real logs


def _replay(shared: Path, name: str) -> tuple[Snapshot, list[Event]]:
    return run_chunks([(shared / "corpus" / "logs" / name).read_bytes()])


def test_vllm_torch_compile_and_flashinfer_autotune_real_log(shared: Path) -> None:
    # sostrowsk/dgx-spark-local-llm: vLLM 0.25.1, MTP drafter: the backbone and the eagle head
    # compile separately, then FlashInfer autotunes
    snapshot, events = _replay(shared, "065_vllm_v0251-dgx-spark-qwen38-int4-mtp-spec-ready-"
                               "throughput.log")  # fmt: skip
    core = snapshot.rank("EngineCore")
    assert core is not None
    phases = [(span.phase, round(span.seconds, 2), span.steps) for span in core.phases]
    assert phases[:2] == [(Phase.TORCH_COMPILE, 36.81, 2), (Phase.TORCH_COMPILE, 6.67, 2)]
    assert phases[2][0] is Phase.FLASHINFER_AUTOTUNE
    stepped = [e for e in events if isinstance(e, PhaseStepped)]
    assert {e.stage for e in stepped} == {Stage.KV_CACHE}


def test_rocm_aiter_build_real_log(shared: Path) -> None:
    # apollo-mg/Project-Apollo: vLLM on ROCm builds module_aiter_enum (12.1 s), then OOMs in
    # torch inductor: the failure stays what it was
    snapshot, events = _replay(shared, "022_vllm_rocm-offline-qwen2-fp8-hip-oom-inductor.log")
    built = [e for e in events if isinstance(e, PhaseStepped) and e.phase is Phase.AITER_BUILD]
    assert [(e.done, e.detail) for e in built] == [(0, "module_aiter_enum"),
                                                   (1, "module_aiter_enum")]  # fmt: skip
    assert snapshot.failure is not None


def test_sglang_graph_sizes_real_log(shared: Path) -> None:
    # shun8686/for_debug: SGLang on Ascend prints the batch sizes before its capture bars
    _, events = _replay(shared, "012_sglang_ascend-dp16-ep-deepseek-r1-npu-oom-graph-capture.log")
    sizes = [e for e in events if isinstance(e, StageProgressed) and e.label.startswith("Capture")]
    assert [(e.rank, e.done, e.total) for e in sizes] == [("DP0 TP0 EP0", 0, 9)]


# ---------------------------------------------------------------------------- stall rules


def _cold_cache(
    run: JitRun, builds: int, every: float, judged: list[Verdict] | None = None
) -> float:
    """Launch, then ``builds`` AITER builds of ``every`` seconds one after the other (judged
    every 5 s into ``judged``); returns the time the last one finished."""
    run.feed(START, to_graphs(START))
    at = START + 10
    for number in range(builds):
        run.feed(at, build_start(f"module_{number}"))
        if judged is not None:
            judged += [run.judge_at(t).verdict for t in run.seconds(at + 5, at + every - 1)]
        at += every
        run.feed(at, build_done(f"module_{number}", every))
    return at


def test_a_cold_cache_compile_is_not_a_hang_while_builds_finish() -> None:
    """Half an hour of builds, 100 s each (the CUDA-graph stage's own limit is 9 minutes):
    never STALLED, and the verdict names the phase while a build runs."""
    run = JitRun()
    judged: list[Verdict] = []
    last = _cold_cache(run, builds=18, every=100, judged=judged)
    assert set(judged) == {Verdict.STARTING}
    run.feed(last, build_start("module_18"))
    judgement = run.judge_at(last + 50)
    assert "AITER build 18 done (module_18)" in judgement.reason
    phase = run.engine.snapshot.rank("TP0").phase  # type: ignore[union-attr]
    assert phase is not None
    assert phase.stage is Stage.CUDA_GRAPH
    assert phase.running
    assert run.judge_at(last + 170).verdict is Verdict.STARTING


def test_a_build_that_hangs_is_stalled_within_the_usual_bound() -> None:
    run = JitRun()
    last = _cold_cache(run, builds=3, every=30)
    run.feed(last + 1, build_start("module_hangs"))
    limit = run.policy.threshold(run.expectations.phase_step(Phase.AITER_BUILD))
    first = next(
        at
        for at in run.seconds(last + 1, last + 3600)
        if run.judge_at(at).verdict is Verdict.STALLED
    )
    assert first - (last + 1) <= limit + 5
    reason = run.judge_at(first).reason
    assert "no AITER build step" in reason
    assert "CUDA graphs" in reason


def test_the_phase_step_is_learned_from_past_runs() -> None:
    """Past runs built a module in 20 s: a build silent for two minutes is a hang, where the
    default (no history) would still wait."""
    samples = (PhaseSample("TP0", Phase.AITER_BUILD, 200.0, 10),)
    runs = [RunRecord(FP, Outcome.READY, 600.0, (), float(i), None, None, samples)
            for i in range(3)]  # fmt: skip
    learned = from_runs(runs, Basis.HISTORY)
    assert learned.phase_step(Phase.AITER_BUILD).median == pytest.approx(20.0)
    default = default_expectations(600.0)
    for expectations, verdict in ((learned, Verdict.STALLED), (default, Verdict.STARTING)):
        run = JitRun(expectations)
        last = _cold_cache(run, builds=2, every=20)
        run.feed(last, build_start("module_slow"))
        assert run.judge_at(last + 120).verdict is verdict


def test_the_stage_limit_does_not_count_an_ended_phase() -> None:
    """Twenty minutes of builds inside CUDA-graph capture, then the capture itself: the time
    the builds took is not held against the stage."""
    run = JitRun()
    last = _cold_cache(run, builds=12, every=100)
    run.feed(last + 1, [sglang_line(last + 1, "TP0", "Capture cuda graph bs [1, 2, 4]")])
    assert run.judge_at(last + 120).verdict is Verdict.STARTING


def test_the_replay_report_lists_the_phases(shared: Path) -> None:
    data = (shared / "corpus" / "logs" / "065_vllm_v0251-dgx-spark-qwen38-int4-mtp-spec-ready-"
            "throughput.log").read_bytes()  # fmt: skip
    text = report_text(replay_chunks([data], clock=lambda: 0.0))
    assert "torch.compile (4 units)" in text
    assert "43.5" in text.split("torch.compile (4 units)")[1].splitlines()[0]


def test_inductor_autotune_during_capture_counts_and_is_not_a_hang() -> None:
    """SGLang's --enable-torch-compile compiles each batch size with Inductor's max-autotune
    while it captures graphs: twenty minutes of ``AUTOTUNE benchmarking takes`` lines (format of
    torch/_inductor/select_algorithm.py) are progress, never STALLED."""
    run = JitRun()
    run.feed(START, to_graphs(START))
    at, judged = START + 10, []
    for number in range(40):
        line = f"SingleProcess AUTOTUNE benchmarking takes 1.{number:02d} seconds and 8.8 seconds "
        run.feed(at, [line + "precompiling"])
        judged += [run.judge_at(t).verdict for t in run.seconds(at + 5, at + 29)]
        at += 30
    assert set(judged) == {Verdict.STARTING}
    phase = run.engine.snapshot.rank("TP0").phase  # type: ignore[union-attr]
    assert phase is not None
    assert (phase.phase, phase.stage, phase.done) == (Phase.TORCH_COMPILE, Stage.CUDA_GRAPH, 40)
