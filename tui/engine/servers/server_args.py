"""Read the server's arguments out of its own dump of them.

SGLang prints ``server_args=ServerArgs(model_path='...', tp_size=8, ...)`` (older) or
``server_args={'model_path': '...', 'tp_size': 8, ...}`` (newer); vLLM prints
``non-default args: {'model': '...', 'tensor_parallel_size': 2, ...}`` and the engine config
``Initializing a V1 LLM engine (v0.x) with config: model='...', tensor_parallel_size=2, ...``.
Only the fields the monitor shows are read; anything unreadable stays None.
"""

from __future__ import annotations

import re

from tui.engine.servers.hits import ArgsHit

_VALUE = r"(?P<v>'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|\[[^\]]*\]|\{[^}]*\}|[^,)}\s]+)"
_CACHE: dict[str, re.Pattern[str]] = {}


def _field(text: str, *names: str) -> str | None:
    """The raw value of the first of ``names`` present as ``name=v`` or ``'name': v``."""
    for name in names:
        pattern = _CACHE.get(name)
        if pattern is None:
            pattern = re.compile(rf"(?<![\w.])'?{name}'?(?:=|: )" + _VALUE)
            _CACHE[name] = pattern
        match = pattern.search(text)
        if match is not None:
            return _unquote(match["v"])
    return None


def _unquote(value: str) -> str | None:
    if value.startswith("[") and value.endswith("]"):
        value = value[1:-1].split(",")[0].strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        value = value[1:-1]
    return None if value in ("", "None", "null") else value


def _int(text: str, *names: str) -> int | None:
    value = _field(text, *names)
    try:
        return None if value is None else int(value)
    except ValueError:
        return None


def sglang_args(text: str) -> ArgsHit:
    """The fields of SGLang's ``server_args=`` line."""
    return ArgsHit(
        model=_field(text, "model_path"),
        served_model_name=_field(text, "served_model_name"),
        drafter=_field(text, "speculative_draft_model_path"),
        speculative_algorithm=_field(text, "speculative_algorithm"),
        tp_size=_int(text, "tp_size"),
        dp_size=_int(text, "dp_size"),
        ep_size=_int(text, "ep_size"),
        pp_size=_int(text, "pp_size"),
        nnodes=_int(text, "nnodes"),
        node_rank=_int(text, "node_rank"),
        port=_int(text, "port"),
    )


def vllm_args(text: str) -> ArgsHit:
    """The fields of vLLM's ``non-default args:`` or engine-config line."""
    spec = _field(text, "speculative_config") or ""
    return ArgsHit(
        model=_field(text, "model", "model_tag"),
        served_model_name=_field(text, "served_model_name"),
        drafter=_field(spec, "model") if spec.startswith("{") else None,
        speculative_algorithm=_field(spec, "method") if spec.startswith("{") else None,
        tp_size=_int(text, "tensor_parallel_size"),
        dp_size=_int(text, "data_parallel_size"),
        pp_size=_int(text, "pipeline_parallel_size"),
        port=_int(text, "port"),
    )
