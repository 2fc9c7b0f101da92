"""ShareGPT-format conversations from a local JSON file, as ``vllm bench serve`` reads them.

The file is a JSON array of objects with a ``conversations`` list of ``{"from", "value"}``
turns; like vLLM (``vllm/benchmarks/datasets.py``, ``ShareGPTDataset``) the first turn is the
prompt and conversations with fewer than two turns are skipped. Nothing is ever downloaded.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from tui.data.prompts import PromptFileError

MAX_BYTES = 2 * 1024**3


def sharegpt_prompts(path: Path, count: int, seed: int) -> list[str]:
    """``count`` first turns chosen with ``seed`` (``PromptFileError`` naming the file)."""
    try:
        if path.stat().st_size > MAX_BYTES:
            raise PromptFileError(f"{path}: larger than {MAX_BYTES} bytes")
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise PromptFileError(f"{path}: cannot read a ShareGPT JSON file: {exc}") from None
    if not isinstance(data, list):
        raise PromptFileError(f"{path}: expected a JSON array of conversations")
    prompts = [prompt for item in data if (prompt := _first_turn(item)) is not None]
    if not prompts:
        raise PromptFileError(f"{path}: no conversation with two or more turns")
    rng = random.Random(seed)
    return [prompts[rng.randrange(len(prompts))] for _ in range(count)]


def _first_turn(item: object) -> str | None:
    turns = item.get("conversations") if isinstance(item, dict) else None
    if not isinstance(turns, list) or len(turns) < 2:
        return None
    first = turns[0]
    value = first.get("value") if isinstance(first, dict) else None
    return value if isinstance(value, str) and value else None
