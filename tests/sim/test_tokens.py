"""Token pacing and accept lengths: counts are exact, the plan is seeded and unbiased."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tui.sim.tokens import (
    AcceptPlan,
    Activity,
    DecodeStep,
    GenRequest,
    Pacing,
    TokenEngine,
    token_text,
)


def _plan_steps(mean: float, most: int, total: int, seed: int) -> list[int]:
    plan, steps, emitted = AcceptPlan(mean, most, seed), [], 1
    while emitted < total:
        count = plan.next(total - emitted)
        steps.append(count)
        emitted += count
    return steps


@settings(max_examples=60, deadline=None)
@given(
    mean=st.floats(min_value=1.0, max_value=4.0),
    total=st.integers(min_value=200, max_value=2000),
    seed=st.integers(min_value=0, max_value=10_000),
)
def test_completion_over_verify_steps_stays_near_the_mean(
    mean: float, total: int, seed: int
) -> None:
    steps = _plan_steps(mean, 4, total, seed)
    assert sum(steps) == total - 1
    assert all(1 <= count <= 4 for count in steps)
    assert total / len(steps) == pytest.approx(mean, rel=0.02, abs=0.02)


def test_the_plan_is_seeded() -> None:
    assert _plan_steps(2.5, 4, 500, 3) == _plan_steps(2.5, 4, 500, 3)
    assert _plan_steps(2.5, 4, 500, 3) != _plan_steps(2.5, 4, 500, 4)
    assert set(_plan_steps(1.0, 1, 50, 0)) == {1}


def test_token_text_is_one_word_and_a_space() -> None:
    assert all(token_text(i).count(" ") == 1 and token_text(i).endswith(" ") for i in range(200))


class Recorder(Activity):
    def __init__(self) -> None:
        self.events: list[str] = []

    def queued(self, req: GenRequest) -> None:
        self.events.append(f"queued {req.rid}")

    def admitted(self, req: GenRequest) -> None:
        self.events.append(f"admitted {req.rid}")

    def finished(self, req: GenRequest, count: int, admitted: bool) -> None:
        self.events.append(f"finished {req.rid} {count}")

    def collapsed(self) -> None:
        self.events.append("collapsed")


async def _collect(engine: TokenEngine, req: GenRequest) -> list[DecodeStep]:
    return [chunk async for chunk in engine.generate(req)]


def _fast(max_running: int = 8, accept: float = 2.5) -> Pacing:
    return Pacing(
        decode_tok_s=1e6,
        ttft_s=0.0,
        accept_len=accept,
        max_accept=4,
        max_running=max_running,
        seed=1,
    )


async def test_a_request_gets_exactly_max_new_tokens_in_verify_step_chunks() -> None:
    engine = TokenEngine(_fast())
    chunks = await _collect(engine, GenRequest("a", 5, 300, 1))
    assert chunks[0].token_ids == (0,)
    assert chunks[0].verify_ct == 0
    assert sum(len(chunk.token_ids) for chunk in chunks) == 300
    assert chunks[-1].finished
    assert chunks[-1].completion_tokens == 300
    assert [c.completion_tokens for c in chunks] == sorted(c.completion_tokens for c in chunks)
    assert chunks[-1].verify_ct == len(chunks) - 1
    assert 300 / chunks[-1].verify_ct == pytest.approx(2.5, rel=0.02)


async def test_zero_and_one_token_requests() -> None:
    engine = TokenEngine(_fast())
    assert [c.completion_tokens for c in await _collect(engine, GenRequest("z", 1, 0, 1))] == [0]
    one = await _collect(engine, GenRequest("o", 1, 1, 2))
    assert len(one) == 1
    assert one[0].finished
    assert one[0].completion_tokens == 1


async def test_extra_requests_wait_for_a_slot() -> None:
    recorder = Recorder()
    engine = TokenEngine(_fast(max_running=1), recorder)
    await asyncio.gather(
        *(_collect(engine, GenRequest(name, 1, 20, i)) for i, name in enumerate("ab"))
    )
    assert recorder.events[:3] == ["queued a", "admitted a", "queued b"]
    assert recorder.events.index("finished a 20") < recorder.events.index("admitted b")


async def test_stop_aborts_requests_in_flight() -> None:
    engine = TokenEngine(
        Pacing(decode_tok_s=1.0, ttft_s=0.0, accept_len=1.0, max_accept=1, max_running=4, seed=0)
    )
    chunks: list[DecodeStep] = []
    started = asyncio.Event()

    async def consume() -> None:
        async for chunk in engine.generate(GenRequest("s", 1, 100, 1)):
            chunks.append(chunk)
            started.set()

    task = asyncio.create_task(consume())
    await started.wait()
    engine.stop()
    await asyncio.wait_for(task, timeout=10)
    assert chunks[-1].aborted
    assert chunks[-1].finished
    assert chunks[-1].completion_tokens < 100


async def test_the_collapse_is_told_once_when_it_happens() -> None:
    recorder = Recorder()
    pacing = replace(_fast(), collapse_after_s=0.0)
    engine = TokenEngine(pacing, recorder)
    first = await _collect(engine, GenRequest("a", 5, 50, 1))
    await _collect(engine, GenRequest("b", 5, 50, 2))
    assert recorder.events.count("collapsed") == 1
    assert recorder.events.index("collapsed") < recorder.events.index("finished a 50")
    assert all(len(chunk.token_ids) <= 1 for chunk in first)
