"""The health poll behind the header's badge, through the session's port forward.

Once a second it asks the server a side-effect-free question first (``/model_info``, or
``/v1/models`` for vLLM) to tell a refused port from an open one, then ``/health``; once
``/health`` answers 200 it sends one real one-token generation and remembers the answer. Every
outcome, errors included, becomes a ``HealthChanged`` message.
"""

from __future__ import annotations

import asyncio
import time

import httpx

from tui.app.messages import HealthChanged
from tui.app.model import HealthKind, HealthReading
from tui.app.sources import Post
from tui.io.session import HostSession, SessionClosed
from tui.io.transport import TransportError

# Through an SSH port forward the local side always accepts; a refused remote port shows up as a
# connection closed before any response.
_REFUSED = (httpx.ConnectError, httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError)
INTERVAL_SECONDS = 1.0
TIMEOUT_SECONDS = 5.0
GENERATION_TIMEOUT_SECONDS = 30.0


async def probe(client: httpx.AsyncClient, base: str, engine: str) -> HealthReading:
    """One poll: refused, open but starting (503), or healthy (200), with latency."""
    info = "/model_info" if engine == "sglang" else "/v1/models"
    started = time.perf_counter()
    try:
        await client.get(base + info)
        answer = await client.get(base + "/health")
    except _REFUSED as error:
        return HealthReading(HealthKind.REFUSED, None, None, info, None, str(error)[:200])
    except httpx.HTTPError as error:
        return HealthReading(HealthKind.ERROR, None, None, "/health", None, str(error)[:200])
    latency = (time.perf_counter() - started) * 1000
    kind = HealthKind.OK if answer.status_code == 200 else HealthKind.STARTING
    if answer.status_code not in (200, 503):
        kind = HealthKind.ERROR
    return HealthReading(kind, answer.status_code, latency, "/health")


NATIVE = ("/generate", {"text": "Hello", "sampling_params": {"max_new_tokens": 1}})
OPENAI = ("/v1/completions", {"prompt": "Hello", "max_tokens": 1})


async def generate_once(client: httpx.AsyncClient, base: str, engine: str) -> bool:
    """Ask for one token (SGLang's native route, else the OpenAI one); True when answered."""
    routes = [OPENAI] if engine == "vllm" else [NATIVE, OPENAI]
    for path, body in routes:
        try:
            answer = await client.post(base + path, json=body, timeout=GENERATION_TIMEOUT_SECONDS)
        except httpx.HTTPError:
            return False
        if answer.status_code != 404:
            return answer.status_code == 200
    return False


class HealthSource:
    """Polls the server's HTTP port on the host, reached through ``session.forward``."""

    def __init__(
        self, session: HostSession, port: int, engine: str = "sglang",
        interval: float = INTERVAL_SECONDS,
    ) -> None:  # fmt: skip
        self.session = session
        self.port = port
        self.engine = engine
        self.interval = interval
        self.generation_ok: bool | None = None

    async def run(self, post: Post) -> None:
        async with httpx.AsyncClient(timeout=TIMEOUT_SECONDS) as client:
            while True:
                post(HealthChanged(await self._poll(client)))
                await asyncio.sleep(self.interval)

    async def _poll(self, client: httpx.AsyncClient) -> HealthReading:
        try:
            base = await asyncio.wait_for(self.session.forward(self.port), TIMEOUT_SECONDS)
        except (TransportError, SessionClosed, OSError, asyncio.TimeoutError) as error:
            return HealthReading(HealthKind.ERROR, detail=f"no port forward: {error}")
        reading = await probe(client, base, self.engine)
        if reading.kind is HealthKind.OK and not self.generation_ok:
            self.generation_ok = await generate_once(client, base, self.engine)
        if reading.kind is HealthKind.REFUSED:
            self.generation_ok = None
        return HealthReading(
            reading.kind, reading.status, reading.latency_ms, reading.endpoint,
            self.generation_ok, reading.detail,
        )  # fmt: skip
