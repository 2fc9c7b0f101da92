"""Lines the log view's errors-only filter must keep."""

from __future__ import annotations

import pytest

from tui.engine.logs.log_engine import LogEngine


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("RuntimeError: CUDA error: an illegal memory access was encountered", True),
        ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB", True),
        ("ValueError: bad value", True),
        ("UserWarning: something odd", True),
        ("Traceback (most recent call last):", True),
        ("Load weight end. type=Qwen3ForCausalLM, avail mem=63.10 GB", False),
    ],
)
def test_problem_lines_are_marked(line: str, problem: bool) -> None:
    engine = LogEngine(engine="sglang", keep_lines=True)
    text = f"[2026-01-01 00:00:00 TP0] {line}\n".encode()
    update = engine.feed(text)
    assert [kept.problem for kept in update.lines] == [problem]
