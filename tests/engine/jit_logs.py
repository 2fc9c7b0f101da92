"""Synthetic SGLang start-ups with compile and JIT phases, fed to a ``LogEngine`` on a clock
the test moves, and judged at every step."""

from __future__ import annotations

from collections.abc import Iterator

from tui.engine.judge.judge import Judgement, Signals, judge
from tui.engine.judge.stall import StallPolicy
from tui.engine.logs.log_engine import LogEngine
from tui.engine.timing.estimate import Expectations, default_expectations

START = 1_767_225_600.0  # 2026-01-01 00:00:00 UTC
TAGS = ("TP0", "TP1")


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> float:
        return self.now


def stamp(at: float) -> str:
    seconds = int(at - START)
    minutes, secs = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    return f"2026-01-01 {hours:02d}:{minutes:02d}:{secs:02d}"


def sglang_line(at: float, tag: str, message: str) -> str:
    return f"[{stamp(at)} {tag}] {message}" if tag else f"[{stamp(at)}] {message}"


def to_graphs(at: float) -> list[str]:
    """Launch to CUDA-graph capture in a few seconds (every rank)."""
    lines = [sglang_line(at, "", "server_args=ServerArgs(model_path='m', tp_size=2)")]
    for tag in TAGS:
        lines += [
            sglang_line(at + 1, tag, "Init torch distributed begin."),
            sglang_line(at + 2, tag, "Load weight begin. avail mem=70.00 GB"),
            sglang_line(at + 3, tag, "Load weight end. type=Qwen2ForCausalLM, avail mem=60 GB"),
            sglang_line(at + 4, tag, "KV Cache is allocated. #tokens: 1000, K size: 1 GB"),
            sglang_line(at + 5, tag, "Capture cuda graph begin. This can take up to several "
                        "minutes. avail mem=50.00 GB"),
        ]  # fmt: skip
    return lines


def build_start(module: str) -> list[str]:
    """An AITER module build begins, in the format of ``aiter/jit/core.py``."""
    return [f"[aiter] start build [{module}] under /opt/aiter/jit/build/{module}"]


def build_done(module: str, seconds: float) -> list[str]:
    """An AITER module build finished, in the format of ``aiter/jit/core.py``."""
    return [f"[aiter] finish build [{module}], cost {seconds:.1f}s"]


class JitRun:
    """A start-up fed line by line at chosen times; ``verdicts`` judges it at each second."""

    def __init__(self, expectations: Expectations | None = None) -> None:
        self.clock = Clock()
        self.engine = LogEngine(clock=self.clock)
        self.expectations = expectations or default_expectations(600.0)
        self.policy = StallPolicy()

    def feed(self, at: float, lines: list[str]) -> None:
        self.clock.now = at
        self.engine.feed(("\n".join(lines) + "\n").encode())

    def judge_at(self, at: float) -> Judgement:
        self.clock.now = at
        return judge(self.engine.snapshot, Signals(), self.expectations, at, self.policy)

    def seconds(self, start: float, end: float, step: float = 5.0) -> Iterator[float]:
        at = start
        while at <= end:
            yield at
            at += step
