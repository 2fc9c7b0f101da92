"""Where an engine's own benchmark tool defines a figure differently from the built-in client.

The pane shows the tool's figures beside ours and marks these instead of hiding the difference.
The keys are the pane's column names; each value says what the tool measures instead. From
``sglang.bench_serving`` (``python/sglang/bench_serving.py``, ``sglang/benchmark/serving.py``):
its benchmark duration ends after it has also fetched ``/server_info``, so its request and
output throughputs are over a longer time than the requests took; its ITL spreads each chunk's
gap over the chunk's tokens (what we call the token gap), where ours is vLLM's one gap per
chunk; its accept length is the server's lifetime average. ``vllm bench serve`` defines the
figures as we do (our names are its names); both tools send their own prompts (``random``),
not ours.
"""

from __future__ import annotations

from collections.abc import Mapping

_SGLANG = {
    "req/s": "over a duration that also holds its /server_info fetch",
    "tok/s": "over a duration that also holds its /server_info fetch",
    "ITL ms": "each chunk's gap spread over its tokens (our token gap), not one gap per chunk",
    "accept": "the server's lifetime average, earlier traffic included",
}
_BY_TOOL: dict[str, Mapping[str, str]] = {"sglang": _SGLANG}
WORKLOAD_NOTE = "its own random prompts, not ours"


def tool_of(source: str | None) -> str:
    """``sglang`` of ``official sglang`` (the ``source`` an official level carries)."""
    return (source or "").removeprefix("official").strip()


def differing(source: str | None) -> Mapping[str, str]:
    """The columns whose figures the tool that measured ``source`` defines differently."""
    return _BY_TOOL.get(tool_of(source), {})
