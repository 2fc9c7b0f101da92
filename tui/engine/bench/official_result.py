"""The engines' tools' machine-readable results: the JSON they save, read into our fields.

``vllm bench serve --save-result`` writes one JSON object with the names ``level_fields``
already uses (``vllm/benchmarks/serve.py``). ``sglang.bench_serving --output-file`` appends
one JSON object per run (``python/sglang/bench_serving.py``); its names differ for E2E latency
(``*_e2e_latency_ms``) and its ``accept_length`` is the server's lifetime average. Values are
untrusted: only finite numbers and short texts are kept, per-request arrays are dropped.
"""

from __future__ import annotations

import json
import math
from typing import Any

RESULT_MARK = "@@bringup-official-result@@"
"""Printed by the wrapper between the tool's output and its result file."""

_SGLANG_NAMES = {
    f"{stat}_e2e_latency_ms": f"{stat}_e2el_ms" for stat in ("mean", "median", "std", "p99")
} | {"accept_length": "server_avg_spec_accept_length_after"}


def split_output(text: str) -> tuple[str, str | None]:
    """The tool's printed output, and the result file's text when the wrapper found one."""
    head, mark, tail = text.rpartition(RESULT_MARK)
    if not mark:
        return text, None
    return head, tail.strip()


def result_fields(text: str, result_format: str) -> dict[str, Any] | None:
    """The scalar fields of the last JSON object in ``text`` (None: not a result)."""
    lines = [line for line in text.strip().splitlines() if line.strip()]
    candidates = [text] if result_format == "vllm" else lines[-1:]
    for candidate in candidates:
        try:
            data = json.loads(candidate[:50_000_000])
        except ValueError:
            return None
        if isinstance(data, dict):
            return _scalars(data, result_format)
    return None


def _scalars(data: dict[str, Any], result_format: str) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for name, value in data.items():
        if not isinstance(name, str) or len(name) > 80:
            continue
        if isinstance(value, bool) or value is None:
            continue
        if isinstance(value, int | float) and math.isfinite(value):
            key = _SGLANG_NAMES.get(name, name) if result_format == "sglang" else name
            found[key] = value
        elif isinstance(value, str) and len(value) <= 200 and name in ("backend", "request_rate"):
            found[name] = value
    return found
