"""Which setting raises the start-up limit a failure ran into.

A start that gives up waiting is a ``startup_timeout`` failure (the patterns are in
``common_patterns.STARTUP_TIMEOUTS``); the verdict names the limit to raise:

- vLLM: ``TimeoutError: Timed out waiting for engines to send initial message on input
  socket.`` (``vllm/v1/engine/utils.py``, ``wait_for_engine_startup``; the poll waits
  ``VLLM_ENGINE_READY_TIMEOUT_S`` seconds, 600 by default, ``vllm/envs.py``);
- SGLang: ``Initialization failed. warmup error: {last_traceback}`` with a timed-out request
  (``srt/entrypoints/http_server.py``; the request waits ``SGLANG_WARMUP_TIMEOUT`` seconds, 600
  by default, ``srt/environ.py``); the traceback follows on the next lines, so its exception
  (``requests.exceptions.ReadTimeout: ... Read timed out. (read timeout=600)``) is read from the
  failure's excerpt (``warmup_timed_out``);
- SGLang's router: ``Timeout 600s waiting for workers [...] to become healthy``
  (``sgl-router``; ``--worker-startup-timeout-secs``, or
  ``--router-worker-startup-timeout-secs`` through ``sglang_router.launch_server``);
- torchrun (``torch.distributed.elastic``): ``RendezvousTimeoutError`` (the rendezvous waits
  ``join_timeout``, 600 s by default, set with ``--rdzv-conf join_timeout=SECONDS``).
"""

from __future__ import annotations

import re

_SETTINGS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), setting)
    for pattern, setting in (
        (r"VLLM_ENGINE_READY_TIMEOUT_S|Timed out waiting for engines? ",
         "VLLM_ENGINE_READY_TIMEOUT_S (environment variable, 600 s by default)"),
        (r"warmup error: ", "SGLANG_WARMUP_TIMEOUT (environment variable, 600 s by default)"),
        (r"waiting for workers? .*to become healthy",
         "--worker-startup-timeout-secs (SGLang router; --router-worker-startup-timeout-secs "
         "through sglang_router.launch_server)"),
        (r"RendezvousTimeoutError",
         "torchrun --rdzv-conf join_timeout=SECONDS (600 s by default)"),
    )
)  # fmt: skip
UNKNOWN_SETTING = "the launcher's start-up timeout"

_WARMUP = "warmup error: "
_WARMUP_TIMEOUT = re.compile(r"^[\w.]*(?:ReadTimeout|Timeout)\w*: .*[Tt]imed out", re.MULTILINE)


def warmup_timed_out(excerpt: str) -> bool:
    """True when ``excerpt`` is SGLang's warm-up failure and its traceback ends in a timed-out
    request (the limit ``SGLANG_WARMUP_TIMEOUT`` raises)."""
    return _WARMUP in excerpt and _WARMUP_TIMEOUT.search(excerpt) is not None


def timeout_setting(excerpt: str) -> str:
    """The setting to raise for the start-up timeout whose lines are ``excerpt``."""
    for pattern, setting in _SETTINGS:
        if pattern.search(excerpt):
            return setting
    return UNKNOWN_SETTING
