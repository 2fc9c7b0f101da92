"""The lines a cold kernel cache prints while its modules are built: ROCm AITER's JIT
(``aiter/jit/core.py``: ``[aiter] start build [module] under /path`` and ``[aiter] finish build
[module], cost 28.7s``). Untagged lines, written by global rank 0's process."""

from __future__ import annotations

AITER_JIT = "/usr/local/lib/python3.12/dist-packages/aiter/jit"
MODULES = (
    "module_aiter_enum",
    "module_activation",
    "module_rmsnorm",
    "module_rope_general_fwd",
    "module_moe_asm",
    "module_moe_sorting",
    "module_gemm_a8w8_blockscale",
    "module_mha_fwd",
)


def build_started(module: str) -> str:
    return f"[aiter] start build [{module}] under {AITER_JIT}/build/{module}\n"


def build_finished(module: str, seconds: float) -> str:
    return f"[aiter] finish build [{module}], cost {seconds:.1f}s\n"
