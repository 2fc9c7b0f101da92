"""The start-up schedule of the configured engine (pure: no clock, no I/O)."""

from __future__ import annotations

from tui.sim.config import VLLM_ENGINE, SimConfig
from tui.sim.sglang_startup import build_sglang
from tui.sim.timeline import Log, Timeline
from tui.sim.vllm_startup import build_vllm


def build_timeline(config: SimConfig) -> Timeline:
    """SGLang's or vLLM's start-up on this node."""
    return build_vllm(config) if config.engine == VLLM_ENGINE else build_sglang(config)


def opening(timeline: Timeline) -> int:
    """How many leading steps are the main process's first log lines (printed at launch)."""
    count = 0
    for step in timeline.steps:
        if step.at > 0.05 or not isinstance(step.action, Log):
            break
        count += 1
    return count
