"""Token generation paced by the flags, so a correct client measures exactly what they say.

Each request gets a slot (``--max-running``; the rest queue in arrival order), its first
token ``--ttft-ms`` after admission, then verify steps: each yields a seeded number of tokens
averaging ``--accept-len`` (exactly 1 without speculative decoding), and the step that brings
the total to ``m`` tokens lands at ``first + (m - 1) / decode_tok_s``. Deadlines are absolute,
so a late wake-up never slows the request down. A token is one filler word and a space.

The wall-clock instant of admission is kept on the request (``admitted_at``) and sent back with
its last chunk under ``ADMITTED_FIELD``, a name neither engine uses, so a client on the same
host can tell the time before the TTFT clock started from the simulated TTFT itself.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass

ADMITTED_FIELD = "sim_admitted_at"

WORDS: tuple[str, ...] = (
    "the",
    "model",
    "is",
    "ready",
    "and",
    "every",
    "rank",
    "has",
    "loaded",
    "its",
    "weights",
    "so",
    "we",
    "can",
    "measure",
    "tokens",
    "per",
    "second",
    "while",
    "draft",
    "heads",
    "propose",
    "a",
    "few",
    "words",
    "that",
    "target",
    "verifies",
    "in",
    "one",
    "step",
    "under",
    "graphs",
    "captured",
    "at",
    "start",
    "then",
    "cache",
    "fills",
    "with",
    "keys",
    "values",
    "for",
    "long",
    "prompts",
    "across",
    "eight",
    "GPUs",
    "on",
    "host",
    "serving",
    "requests",
    "from",
    "queue",
    "until",
    "done",
    "again",
    "now",
    "quickly",
    "steady",
    "stream",
    "of",
    "text",
    "here",
)


def token_text(token_id: int) -> str:
    """The filler word for a token id, with its trailing space."""
    return WORDS[token_id % len(WORDS)] + " "


class AcceptPlan:
    """Seeded tokens per verify step with a bounded running error against the mean.

    The first token comes from prefill; after ``j`` verify steps about ``mean * j`` tokens
    exist, so ``completion_tokens / verify_steps`` stays close to ``mean`` for any length.
    """

    def __init__(self, mean: float, most: int, seed: int) -> None:
        self._mean = mean
        self._most = max(1, most)
        self._rng = random.Random(seed)
        self._steps = 0
        self._emitted = 1

    def next(self, remaining: int) -> int:
        """Tokens yielded by the next verify step (never more than ``remaining``)."""
        self._steps += 1
        wanted = self._mean * self._steps - self._emitted + self._rng.uniform(-0.75, 0.75)
        count = max(1, min(self._most, remaining, round(wanted)))
        self._emitted += count
        return count


@dataclass(frozen=True, slots=True)
class Pacing:
    """The speed settings of the simulated GPU."""

    decode_tok_s: float
    ttft_s: float
    accept_len: float
    max_accept: int
    max_running: int
    seed: int
    collapse_after_s: float | None = None
    """Seconds after the first request from which every verify step yields one token."""


@dataclass(slots=True)
class GenRequest:
    """One generation: how long the prompt is and how many tokens to produce."""

    rid: str
    prompt_tokens: int
    max_new_tokens: int
    serial: int
    extra_first_token_s: float = 0.0
    first_token_id: int = 0
    requested: int | None = None
    """The ``max_tokens`` asked for when the answer's end-of-sequence comes sooner."""
    admitted_at: float | None = None
    """Wall-clock time (``time.time()``) the request got its slot and its TTFT clock started."""
    log_metrics: bool = True
    """False for SGLang's own health check, which its ``/metrics`` counters leave out."""

    @property
    def finish_reason(self) -> str:
        """``stop`` when the end-of-sequence ended it before ``max_tokens``, else ``length``."""
        stopped = self.requested is not None and self.max_new_tokens < self.requested
        return "stop" if stopped else "length"


@dataclass(frozen=True, slots=True)
class DecodeStep:
    """What one forward pass added to a request (several tokens for a verify step)."""

    token_ids: tuple[int, ...]
    completion_tokens: int
    verify_ct: int
    finished: bool
    aborted: bool = False


class Activity:
    """Hooks the statistics implement; these defaults do nothing."""

    def queued(self, req: GenRequest) -> None:
        """The request arrived and waits for a slot."""

    def admitted(self, req: GenRequest) -> None:
        """The request got a slot; its prefill runs now."""

    def first_token(self, req: GenRequest, wait_s: float) -> None:
        """The first token exists, ``wait_s`` after admission."""

    def stepped(self, req: GenRequest, count: int) -> None:
        """A verify (or decode) step added ``count`` tokens."""

    def finished(self, req: GenRequest, count: int, admitted: bool) -> None:
        """The request ended (done, or its client left) after ``count`` tokens."""

    def collapsed(self) -> None:
        """The accept length fell to 1 just now (``--scenario accept-collapse``)."""


class TokenEngine:
    """Admits requests into ``max_running`` slots and paces their tokens."""

    def __init__(self, pacing: Pacing, activity: Activity | None = None) -> None:
        self.pacing = pacing
        self.activity = activity or Activity()
        self._slots = asyncio.Semaphore(pacing.max_running)
        self._dead = asyncio.Event()
        self._stopped = asyncio.Event()
        self._collapse_at: float | None = None
        self._collapse_told = False

    def kill(self) -> None:
        """The scheduler died: requests in flight and new ones never progress again."""
        self._dead.set()

    def stop(self) -> None:
        """The server is shutting down: every request ends now, marked ``aborted``."""
        self._stopped.set()

    async def generate(self, req: GenRequest) -> AsyncIterator[DecodeStep]:
        """Yield the request's chunks at their deadlines; the last one has ``finished``."""
        self.activity.queued(req)
        if self._collapse_at is None and self.pacing.collapse_after_s is not None:
            self._collapse_at = asyncio.get_running_loop().time() + self.pacing.collapse_after_s
        admitted, count = False, 0
        try:
            async with self._slots:
                admitted = True
                self.activity.admitted(req)
                async for chunk in self._run(req):
                    count = chunk.completion_tokens
                    yield chunk
        finally:
            self.activity.finished(req, count, admitted)

    async def _run(self, req: GenRequest) -> AsyncIterator[DecodeStep]:
        loop = asyncio.get_running_loop()
        admitted = loop.time()
        req.admitted_at = time.time()
        first_at = admitted + self.pacing.ttft_s + req.extra_first_token_s
        if not await self._wait_until(first_at):
            yield DecodeStep((), 0, 0, True, aborted=True)
            return
        self.activity.first_token(req, loop.time() - admitted)
        if req.max_new_tokens <= 0:
            yield DecodeStep((), 0, 0, True)
            return
        yield DecodeStep((req.first_token_id,), 1, 0, req.max_new_tokens == 1)
        async for chunk in self._verify_steps(req, first_at):
            yield chunk

    async def _verify_steps(self, req: GenRequest, first_at: float) -> AsyncIterator[DecodeStep]:
        pacing = self.pacing
        seed = pacing.seed * 1_000_003 + req.serial
        plan = AcceptPlan(pacing.accept_len, pacing.max_accept, seed)
        total, steps, slowed = 1, 0, 0.0
        while total < req.max_new_tokens:
            count = plan.next(req.max_new_tokens - total)
            if self._collapsed():
                # One token per verify step, each step as long as before: the speed falls too.
                count = 1
                slowed += max(pacing.accept_len - 1, 0.0) / pacing.decode_tok_s
            deadline = first_at + slowed + (total + count - 1) / pacing.decode_tok_s
            if not await self._wait_until(deadline):
                yield DecodeStep((), total, steps, True, aborted=True)
                return
            ids = tuple(range(req.first_token_id + total, req.first_token_id + total + count))
            total += count
            steps += 1
            self.activity.stepped(req, count)
            yield DecodeStep(ids, total, steps, total >= req.max_new_tokens)

    def _collapsed(self) -> bool:
        """Whether the accept length has collapsed (``--scenario accept-collapse``)."""
        at = self._collapse_at
        if at is None or asyncio.get_running_loop().time() < at:
            return False
        if not self._collapse_told:
            self._collapse_told = True
            self.activity.collapsed()
        return True

    async def _wait_until(self, deadline: float) -> bool:
        """Sleep to ``deadline``; False once the server stops (a dead scheduler never wakes)."""
        if not self._stopped.is_set():
            await _sleep_until(deadline)
        if self._dead.is_set() and not self._stopped.is_set():
            await self._stopped.wait()
        return not self._stopped.is_set()


async def _sleep_until(deadline: float) -> None:
    delay = deadline - asyncio.get_running_loop().time()
    await asyncio.sleep(max(delay, 0.0))
