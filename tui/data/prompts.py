"""Benchmark prompts: the shipped set, or a user's JSONL file, shaped to a workload.

The shipped prompts (``prompts.jsonl``) are cut or padded with common English words
(``filler_words.txt``) to ``input_len`` words. Common short words are one token in the usual
tokenizers, so the prompt length in tokens is close to ``input_len``; the server's own count is
what results report.
"""

from __future__ import annotations

import json
import random
from importlib import resources
from pathlib import Path

_MAX_LINE = 1_000_000


class PromptFileError(ValueError):
    """A prompt file that cannot be used; the message names the file and line."""


def _filler() -> list[str]:
    text = resources.files("tui.data").joinpath("filler_words.txt").read_text(encoding="utf-8")
    return text.split()


def builtin_prompts() -> list[str]:
    """The prompts shipped with the package."""
    text = resources.files("tui.data").joinpath("prompts.jsonl").read_text(encoding="utf-8")
    return _parse(text.splitlines(), "prompts.jsonl")


def load_prompts(path: Path) -> list[str]:
    """Prompts from a JSONL file whose lines are objects with a ``"prompt"`` string."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PromptFileError(f"{path}: cannot read prompts: {exc}") from None
    return _parse(text.splitlines(), str(path))


def _parse(lines: list[str], name: str) -> list[str]:
    prompts: list[str] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line[:_MAX_LINE])
        except ValueError:
            raise PromptFileError(f"{name}:{number}: not a JSON object") from None
        prompt = item.get("prompt") if isinstance(item, dict) else None
        if not isinstance(prompt, str) or not prompt:
            raise PromptFileError(f"{name}:{number}: expected an object with a 'prompt' string")
        prompts.append(prompt)
    if not prompts:
        raise PromptFileError(f"{name}: no prompts")
    return prompts


def shaped(prompt: str, words: int, rng: random.Random) -> str:
    """``prompt`` cut or padded with filler words to ``words`` words."""
    parts = prompt.split()
    if len(parts) >= words:
        return " ".join(parts[:words])
    filler = _filler()
    padding = [rng.choice(filler) for _ in range(words - len(parts))]
    return " ".join([*parts, *padding])


def workload_prompts(
    count: int, input_len: int, seed: int, source: Path | None = None
) -> list[str]:
    """``count`` prompts chosen with ``seed``: shaped shipped prompts, or a file's as written."""
    rng = random.Random(seed)
    base = builtin_prompts() if source is None else load_prompts(source)
    chosen = [base[rng.randrange(len(base))] for _ in range(count)]
    if source is not None:
        return chosen
    return [shaped(prompt, input_len, rng) for prompt in chosen]
