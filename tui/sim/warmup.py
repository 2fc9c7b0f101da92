"""SGLang's warm-up: once uvicorn listens, poll ``/model_info`` and send one real request.

It goes through real HTTP to the server itself, so the access log shows the same
``GET /model_info`` and ``POST /generate`` lines a real start shows.
"""

from __future__ import annotations

import asyncio

import httpx

from tui.sim.config import SimConfig
from tui.sim.output import LogSink
from tui.sim.sim_failures import warmup_error

WARMUP_PROMPT = "The capital city of France is"
MODEL_INFO_TRIES = 120


async def run_warmup(config: SimConfig, sink: LogSink) -> bool:
    """True when the warm-up generation answered 200; otherwise the failure is logged."""
    base = f"http://{config.http_host}:{config.port}"
    timeout = httpx.Timeout(600.0, connect=5.0)
    headers = {"Authorization": f"Bearer {config.api_key}"} if config.api_key else {}
    async with httpx.AsyncClient(
        base_url=base, trust_env=False, timeout=timeout, headers=headers
    ) as client:
        try:
            await _wait_for_model_info(client, config.time_scale)
            response = await client.post(
                "/generate",
                json={
                    "text": WARMUP_PROMPT,
                    "sampling_params": {"temperature": 0, "max_new_tokens": 8},
                },
            )
        except httpx.HTTPError as exc:
            sink.log(None, warmup_error(f"{type(exc).__name__}: {exc}"), "ERROR")
            return False
    if response.status_code != 200:
        sink.log(None, warmup_error(response.text), "ERROR")
        return False
    return True


async def _wait_for_model_info(client: httpx.AsyncClient, scale: float) -> None:
    for _ in range(MODEL_INFO_TRIES):
        try:
            if (await client.get("/model_info")).status_code == 200:
                return
        except httpx.TransportError:
            pass
        await asyncio.sleep(max(scale, 0.01))
    raise httpx.ConnectError("/model_info did not answer 200 in 120 tries")
