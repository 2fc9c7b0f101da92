"""Compile, JIT and autotune lines: the phases inside a stage that a cold cache makes long.

The lines come from the libraries both engines use, in their own formats (see
docs/log-engine.md for the sources):

- ROCm AITER (``aiter/jit/core.py``): ``[aiter] start build [module_x] under /path`` and
  ``[aiter] finish build [module_x], cost 28.7s``;
- FlashInfer's autotuner (``flashinfer/autotuner.py``): ``[Autotuner]: Autotuning process
  starts ...`` and ``... ends`` (``[AutoTuner]`` in newer releases, whose per-op bar
  ``[AutoTuner]: Tuning flashinfer::op: 55%|...| 12/22`` counts profiles, read by
  ``common_patterns.parse_bar``); SGLang's ``Running FlashInfer autotune with cache: ...``
  (``sglang/srt/model_executor/model_runner.py``); its JIT (``flashinfer/jit/core.py``):
  ``Loading JIT ops: x`` and ``Finished loading JIT ops: x``;
- SGLang's DeepGEMM warm-up (``sglang/srt/layers/deep_gemm_wrapper/compile_utils.py``):
  ``Entering DeepGEMM JIT Pre-Compile session.`` (``Pre-Complie`` in its first release),
  ``Try DeepGEMM JIT Compiling for <KIND>
  N=.., K=.., num_groups=.. with all Ms.`` and a ``DeepGEMM`` progress bar;
- vLLM's torch.compile (``vllm/compilation/backends.py``, ``monitor.py``): ``Using cache
  directory: ... for vLLM's torch.compile``, ``Dynamo bytecode transform time: 8.64 s``,
  ``Compiling a graph for compile range (1, 2048) takes 5.28 s``, ``Directly load the compiled
  graph(s) for ... from the cache, took 1.2 s`` and ``torch.compile takes 13.92 s in total``;
  SGLang's compilation backend prints the same ``Compiling a graph for dynamic shape takes
  3.38 s`` (``sglang/srt/compilation/backend.py``) under its ``Compiling num tokens
  (num_tokens=20)`` bar (``piecewise_cuda_graph_runner.py``, read by ``parse_bar``);
- Inductor's max-autotune (``torch/_inductor/select_algorithm.py``, SGLang's
  ``--enable-torch-compile`` mode): ``SingleProcess AUTOTUNE benchmarking takes 1.3427 seconds
  and 8.8429 seconds precompiling``, one per tuned kernel.

``phase_hit`` is tried only on lines no milestone rule claimed; one keyword test rules out
almost every line before any pattern runs.
"""

from __future__ import annotations

import re

from tui.engine.servers.common_patterns import to_float
from tui.engine.servers.hits import PhaseHit, PhaseStep
from tui.engine.startup.vocabulary import Phase

MAX_DETAIL = 120
"""Characters of a module or kernel name kept (a hostile line may be long)."""

_Rule = tuple[re.Pattern[str], Phase, PhaseStep]
_RULES: tuple[tuple[str, tuple[_Rule, ...]], ...] = tuple(
    (keyword, tuple((re.compile(pattern), phase, step) for pattern, phase, step in rules))
    for keyword, rules in (
        ("build [", (
            (r"\[aiter\] start build \[(?P<detail>[^\]]+)\]", Phase.AITER_BUILD, PhaseStep.START),
            (r"\[aiter\] finish build \[(?P<detail>[^\]]+)\], cost (?P<seconds>[\d.]+) ?s",
             Phase.AITER_BUILD, PhaseStep.DONE),
        )),
        ("uner]: ", (
            (r"\[Auto[Tt]uner\]: Autotuning process starts", Phase.FLASHINFER_AUTOTUNE,
             PhaseStep.BEGIN),
            (r"\[Auto[Tt]uner\]: Autotuning process ends", Phase.FLASHINFER_AUTOTUNE,
             PhaseStep.END),
        )),
        ("FlashInfer autotune", (
            (r"Running FlashInfer autotune\b", Phase.FLASHINFER_AUTOTUNE, PhaseStep.BEGIN),
        )),
        ("JIT ops: ", (
            (r"Finished loading JIT ops: (?P<detail>\S+)", Phase.FLASHINFER_JIT, PhaseStep.DONE),
            (r"Loading JIT ops: (?P<detail>\S+)", Phase.FLASHINFER_JIT, PhaseStep.START),
        )),
        ("DeepGEMM", (
            (r"Entering DeepGEMM JIT Pre-Comp(?:ile|lie) session", Phase.DEEPGEMM_JIT,
             PhaseStep.BEGIN),
            (r"Try DeepGEMM JIT Compiling for (?P<detail><\w+> N=\d+, K=\d+, num_groups=\d+)",
             Phase.DEEPGEMM_JIT, PhaseStep.START),
            (r"Leaving DeepGEMM JIT Pre-Compile session", Phase.DEEPGEMM_JIT, PhaseStep.END),
        )),
        ("ompil", (
            (r"Using cache directory: .* for vLLM's torch\.compile", Phase.TORCH_COMPILE,
             PhaseStep.BEGIN),
            (r"Compiling a graph for (?P<detail>.*?) takes (?P<seconds>[\d.]+) s",
             Phase.TORCH_COMPILE, PhaseStep.DONE),
            (r"Directly load the compiled graph\(s\) for (?P<detail>.*?) from the cache, "
             r"took (?P<seconds>[\d.]+) s", Phase.TORCH_COMPILE, PhaseStep.DONE),
            (r"torch\.compile (?:takes|took) (?P<seconds>[\d.]+) s in total",
             Phase.TORCH_COMPILE, PhaseStep.END),
        )),
        ("AUTOTUNE benchmarking", (
            (r"AUTOTUNE benchmarking takes (?P<seconds>[\d.]+) seconds", Phase.TORCH_COMPILE,
             PhaseStep.DONE),
        )),
        ("Dynamo bytecode", (
            (r"Dynamo bytecode transform time: (?P<seconds>[\d.]+) s", Phase.TORCH_COMPILE,
             PhaseStep.DONE),
        )),
    )
)  # fmt: skip
KEYWORDS = tuple(keyword for keyword, _ in _RULES)
"""Every phase line holds one of these."""


def maybe_phase(text: str) -> bool:
    """False when ``text`` cannot be a phase line (a cheap first test)."""
    for keyword in KEYWORDS:  # noqa: SIM110 - a plain loop is faster than any() here
        if keyword in text:
            return True
    return False


def phase_hit(msg: str) -> PhaseHit | None:
    """The phase line in ``msg``, or None."""
    for keyword, rules in _RULES:
        if keyword not in msg:
            continue
        for pattern, phase, step in rules:
            match = pattern.search(msg)
            if match is not None:
                groups = match.groupdict()
                detail = (groups.get("detail") or "")[:MAX_DETAIL]
                seconds = groups.get("seconds")
                return PhaseHit(phase, step, detail, to_float(seconds) if seconds else None)
    return None
