"""Reading streamed benchmark responses: request bodies and per-chunk token counts.

Every endpoint streams server-sent events, one JSON object per ``data:`` line. ``StreamReader``
turns each object into the number of new tokens it carried and keeps the server's own counts:

- SGLang ``/generate``: ``meta_info.completion_tokens`` is cumulative, so new tokens are its
  difference; ``meta_info.spec_verify_ct`` and ``prompt_tokens`` are read too.
- OpenAI-style ``/v1/completions`` and ``/v1/chat/completions``: a chunk with text counts as its
  usage difference when the server streams usage with every chunk, else as one token; the last
  chunk's ``usage`` gives the server's totals.
- The simulator's admission stamp, ``sim_admitted_at`` (``meta_info`` on ``/generate``, top
  level on the OpenAI routes): the wall-clock second its TTFT clock started. Ours, a name
  neither engine uses; real servers never send it, so it stays None.

Payloads are untrusted: any shape that is not the expected one is ignored or reported as an
error string, never raised.
"""

from __future__ import annotations

import math
import re
from typing import Any

ADMITTED_FIELD = "sim_admitted_at"

ENDPOINT_PATHS = {
    "generate": "/generate",
    "completions": "/v1/completions",
    "chat": "/v1/chat/completions",
}


Prompt = str | tuple[int, ...]
"""Text, or token ids (the ``random`` dataset: exact prompt lengths)."""


def request_body(
    endpoint: str, prompt: Prompt, output_len: int, ignore_eos: bool, model: str
) -> dict[str, Any]:
    """The JSON body of one streaming request (greedy sampling, fixed output length).

    Token ids go as ``input_ids`` on ``/generate`` and as the ``prompt`` list of
    ``/v1/completions``; chat messages are text only.
    """
    if endpoint == "generate":
        params = {"max_new_tokens": output_len, "temperature": 0.0, "ignore_eos": ignore_eos}
        key = "text" if isinstance(prompt, str) else "input_ids"
        value: object = prompt if isinstance(prompt, str) else list(prompt)
        return {key: value, "sampling_params": params, "stream": True}
    body: dict[str, Any] = {
        "model": model,
        "max_tokens": output_len,
        "temperature": 0.0,
        "ignore_eos": ignore_eos,
        "stream": True,
        "stream_options": {"include_usage": True, "continuous_usage_stats": True},
    }
    if endpoint == "chat":
        if not isinstance(prompt, str):
            raise ValueError("token-id prompts need the generate or completions endpoint")
        body["messages"] = [{"role": "user", "content": prompt}]
    else:
        body["prompt"] = prompt if isinstance(prompt, str) else list(prompt)
    return body


def _dig(value: object, *keys: str | int) -> object:
    for key in keys:
        if isinstance(key, int):
            value = value[key] if isinstance(value, list) and len(value) > key else None
        else:
            value = value.get(key) if isinstance(value, dict) else None
    return value


def _count(value: object) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return None


def _instant(value: object) -> float | None:
    """A wall-clock second (a positive finite number), else None."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        number = float(value)
        if math.isfinite(number) and number > 0:
            return number
    return None


class StreamReader:
    """Token accounting for one streamed response."""

    def __init__(self, endpoint: str) -> None:
        self.native = endpoint == "generate"
        self.chat = endpoint == "chat"
        self.server_tokens: int | None = None
        self.prompt_tokens: int | None = None
        self.spec_verify_ct: int | None = None
        self.server_latency: float | None = None
        self.admitted_at: float | None = None
        self.error: str | None = None
        self._seen = 0

    def feed(self, event: object) -> int:
        """New tokens carried by one decoded ``data:`` object (0 for bookkeeping chunks)."""
        error = _dig(event, "error")
        if error is not None:
            message = _dig(error, "message")
            self.error = str(message if message is not None else error)[:300]
            return 0
        return self._native(event) if self.native else self._openai(event)

    def _native(self, event: object) -> int:
        meta = _dig(event, "meta_info")
        self.prompt_tokens = _count(_dig(meta, "prompt_tokens")) or self.prompt_tokens
        self.spec_verify_ct = _count(_dig(meta, "spec_verify_ct")) or self.spec_verify_ct
        latency = _dig(meta, "e2e_latency")
        if isinstance(latency, int | float) and not isinstance(latency, bool) and latency >= 0:
            self.server_latency = float(latency)
        self.admitted_at = _instant(_dig(meta, ADMITTED_FIELD)) or self.admitted_at
        total = _count(_dig(meta, "completion_tokens"))
        if total is None:
            return 1 if _dig(event, "text") else 0
        self.server_tokens = total
        new, self._seen = max(total - self._seen, 0), max(total, self._seen)
        return new

    def _openai(self, event: object) -> int:
        self.admitted_at = _instant(_dig(event, ADMITTED_FIELD)) or self.admitted_at
        usage = _dig(event, "usage")
        total = _count(_dig(usage, "completion_tokens"))
        self.prompt_tokens = _count(_dig(usage, "prompt_tokens")) or self.prompt_tokens
        if total is not None:
            self.server_tokens = total
        if not self._text(event):
            return 0
        if total is None:
            self._seen += 1
            return 1
        new, self._seen = max(total - self._seen, 0), max(total, self._seen)
        return new

    def _text(self, event: object) -> bool:
        if self.chat:
            delta = _dig(event, "choices", 0, "delta")
            return bool(_dig(delta, "content") or _dig(delta, "reasoning_content"))
        return bool(_dig(event, "choices", 0, "text"))


def server_accept_length(info: object) -> float | None:
    """SGLang ``/server_info``'s lifetime ``avg_spec_accept_length`` of the first DP rank."""
    value = _dig(info, "internal_states", 0, "avg_spec_accept_length")
    if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
        return float(value)
    return None


_SPEC_LINE = re.compile(
    r"^vllm:spec_decode_num_(accepted_tokens|drafts|draft_tokens)_total(?:\{[^}]*\})?\s+(\S+)",
    re.MULTILINE,
)
_SPEC_KEYS = {"accepted_tokens": "accepted", "drafts": "drafts", "draft_tokens": "draft_tokens"}
_POS_LINE = re.compile(
    r"^vllm:spec_decode_num_accepted_tokens_per_pos_total\{[^}]*position=\"(\d{1,3})\"[^}]*\}"
    r"\s+(\S+)",
    re.MULTILINE,
)


def spec_counters(metrics_text: str) -> dict[str, float]:
    """vLLM's speculative-decoding counters from a Prometheus ``/metrics`` page, summed."""
    totals: dict[str, float] = {}
    for match in _SPEC_LINE.finditer(metrics_text):
        try:
            value = float(match.group(2))
        except ValueError:
            continue
        key = _SPEC_KEYS[match.group(1)]
        totals[key] = totals.get(key, 0.0) + value
    return totals


def position_counters(metrics_text: str) -> dict[str, float]:
    """vLLM's accepted tokens per draft position (``pos0``, ``pos1``, ...), summed."""
    totals: dict[str, float] = {}
    for match in _POS_LINE.finditer(metrics_text):
        try:
            value = float(match.group(2))
        except ValueError:
            continue
        key = f"pos{int(match.group(1))}"
        totals[key] = totals.get(key, 0.0) + value
    return totals


def acceptance_rates_between(
    before: dict[str, float], after: dict[str, float]
) -> tuple[float | None, tuple[float, ...]]:
    """vLLM's acceptance rate (accepted / draft tokens, in %) and per-position rates (accepted
    at position i / drafts, in %) over the counters' difference, as vLLM's spec-decode
    metrics logger computes them (``vllm/v1/spec_decode/metrics.py``)."""
    drafts = after.get("drafts", 0.0) - before.get("drafts", 0.0)
    tokens = after.get("draft_tokens", 0.0) - before.get("draft_tokens", 0.0)
    accepted = after.get("accepted", 0.0) - before.get("accepted", 0.0)
    rate = 100.0 * accepted / tokens if tokens > 0 else None
    positions = sorted(int(key[3:]) for key in after if key.startswith("pos"))
    per_pos: tuple[float, ...] = ()
    if drafts > 0 and positions == list(range(len(positions))):
        per_pos = tuple(
            100.0 * (after[f"pos{i}"] - before.get(f"pos{i}", 0.0)) / drafts for i in positions
        )
    return rate, per_pos


def accept_length_between(before: dict[str, float], after: dict[str, float]) -> float | None:
    """``1 + accepted / drafts`` over the counters' difference (vLLM's definition)."""
    drafts = after.get("drafts", 0.0) - before.get("drafts", 0.0)
    accepted = after.get("accepted", 0.0) - before.get("accepted", 0.0)
    return 1.0 + accepted / drafts if drafts > 0 else None
