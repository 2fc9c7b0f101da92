"""Health of a server's HTTP port, polled through a forward: refused, starting, healthy, ready.

Each poll asks ``/health``. Once it answers 200, one real generation of a single token is sent
(the engine's ``Dialect.generation``: SGLang's ``/generate``, vLLM's ``/v1/completions``; when
the engine is not known, each engine's in turn while the route does not exist); only when that
answers is the server READY. The generation is repeated only after the server was seen
unhealthy again (never on a timer: on a production server it is real load). Every state comes
with the status code and the latency.

The poll is quiet once the server serves: every ``interval`` (1 s) while it starts, every
``serving_interval`` (10 s) once READY, and every ``interval`` again from the first poll that
is not READY, so that a server in trouble is followed closely until it recovers. (SGLang's own
``/health`` runs a one-token generation when the server is idle, so each poll is also a
prefill in its log.)

Through an SSH port forward the local end always accepts the connection; a refused remote port
shows up as a connection closed before any response, which is classified as refused too.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import httpx

from tui.engine.judge.health import HealthState
from tui.engine.servers import registry
from tui.engine.servers.dialect import GenerationProbe
from tui.engine.servers.monitor_traffic import REQUEST_ID_PREFIX, USER_AGENT, monitor_path
from tui.io.transport.deadline import within
from tui.io.transport.host_session import ApiNotPlaced
from tui.io.transport.transport import TransportError

UrlSource = Callable[[], Awaitable[str]]
"""Returns the base URL (``http://127.0.0.1:PORT``); asked before each poll."""

_REFUSED = (httpx.ConnectError, httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError)
PROMPT = "Hello"
_MONITOR = {"User-Agent": USER_AGENT}
"""Every request of the monitor says who sends it; the access logs show its query marker."""


@dataclass(frozen=True, slots=True)
class HealthChanged:
    """The result of a poll whose state or status differs from the previous one.

    ``status`` is the HTTP status of ``/health`` (None when nothing answered); ``latency_ms``
    is that request's round trip; ``generation_ms`` the one-token generation's, once it worked.
    """

    state: HealthState
    status: int | None
    latency_ms: float | None
    detail: str = ""
    generation_ms: float | None = None

    @property
    def ready(self) -> bool:
        return self.state is HealthState.READY


@dataclass(frozen=True, slots=True)
class HealthOptions:
    """Timing and protocol of the poll."""

    interval: float = 1.0
    """Seconds between polls while the server is not READY (starting, or after a failed poll)."""
    serving_interval: float = 10.0
    """Seconds between polls while it is READY."""
    timeout: float = 5.0
    generation_timeout: float = 60.0
    engine: str = "auto"
    api_key: str | None = None


def _elapsed_ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000.0


async def check_health(
    client: httpx.AsyncClient, base: str, path: str = "/health"
) -> HealthChanged:
    """One health request (``/health``), classified."""
    started = time.perf_counter()
    try:
        answer = await client.get(f"{base}{monitor_path(path)}", headers=_MONITOR)
    except _REFUSED as exc:
        return HealthChanged(HealthState.REFUSED, None, None, type(exc).__name__)
    except httpx.HTTPError as exc:
        return HealthChanged(HealthState.UNHEALTHY, None, None, type(exc).__name__)
    latency = _elapsed_ms(started)
    if answer.status_code == 200:
        return HealthChanged(HealthState.HEALTHY, 200, latency)
    status = answer.status_code
    state = HealthState.STARTING if status == 503 else HealthState.UNHEALTHY
    return HealthChanged(state, status, latency, f"/health answered {status}")


async def _model_name(client: httpx.AsyncClient, base: str) -> str | None:
    try:
        answer = await client.get(f"{base}{monitor_path('/v1/models')}", headers=_MONITOR)
        data: Any = answer.json()
        return str(data["data"][0]["id"])
    except (httpx.HTTPError, ValueError, KeyError, IndexError, TypeError):
        return None


async def generate_one_token(
    client: httpx.AsyncClient, base: str, engine: str, timeout: float
) -> tuple[bool, float, str]:
    """Ask for one token; (answered, latency in ms, what went wrong). An engine not known is
    asked each engine's way in turn while the route is not found (404)."""
    started = time.perf_counter()
    *others, last = registry.generation_probes(engine)
    try:
        for probe in others:
            answer = await _generate(client, base, probe, timeout)
            if answer.status_code != 404:
                return answer.status_code == 200, _elapsed_ms(started), _why(answer)
        answer = await _generate(client, base, last, timeout)
    except httpx.HTTPError as exc:
        return False, _elapsed_ms(started), f"generation failed: {type(exc).__name__}"
    return answer.status_code == 200, _elapsed_ms(started), _why(answer)


async def _generate(
    client: httpx.AsyncClient, base: str, probe: GenerationProbe, timeout: float
) -> httpx.Response:
    rid = f"{REQUEST_ID_PREFIX}{uuid.uuid4().hex}"
    body = probe.body(PROMPT, rid)
    if probe.names_model:
        model = await _model_name(client, base)
        if model is not None:
            body["model"] = model
    url = f"{base}{monitor_path(probe.path)}"
    headers = {**_MONITOR, "X-Request-Id": rid}
    return await client.post(url, json=body, timeout=timeout, headers=headers)


def _why(answer: httpx.Response) -> str:
    if answer.status_code == 200:
        return ""
    return f"{answer.request.url.path} answered {answer.status_code}"


class HealthPoller:
    """Polls one server; :meth:`changes` yields a :class:`HealthChanged` per change."""

    def __init__(self, url: UrlSource, options: HealthOptions | None = None) -> None:
        self._url = url
        self.options = options or HealthOptions()
        self._generated: float | None = None

    async def poll(self, client: httpx.AsyncClient) -> HealthChanged:
        """One round: the link, ``/health``, and the generation while it has not worked."""
        try:
            base = await within(self._url(), self.options.timeout)
        except ApiNotPlaced as exc:
            self._generated = None
            return HealthChanged(HealthState.UNKNOWN, None, None, str(exc))
        except (TransportError, OSError, asyncio.TimeoutError) as exc:
            self._generated = None
            return HealthChanged(HealthState.NO_LINK, None, None, str(exc) or type(exc).__name__)
        path = registry.or_default(self.options.engine).health_path
        health = await check_health(client, base, path)
        if health.state is not HealthState.HEALTHY:
            self._generated = None
            return health
        if self._generated is None:
            ok, took, why = await generate_one_token(
                client, base, self.options.engine, self.options.generation_timeout
            )
            if not ok:
                return HealthChanged(HealthState.HEALTHY, 200, health.latency_ms, why)
            self._generated = took
        return HealthChanged(HealthState.READY, 200, health.latency_ms, "", self._generated)

    def pause_after(self, result: HealthChanged) -> float:
        """Seconds until the next poll: long while READY, short otherwise."""
        if result.state is HealthState.READY:
            return self.options.serving_interval
        return self.options.interval

    async def changes(self) -> AsyncGenerator[HealthChanged, None]:
        """Poll at :meth:`pause_after`'s pace; yield the first result and every change."""
        key = self.options.api_key
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        previous: tuple[HealthState, int | None, str] | None = None
        async with httpx.AsyncClient(timeout=self.options.timeout, headers=headers) as client:
            while True:
                result = await self.poll(client)
                seen = (result.state, result.status, result.detail)
                if seen != previous:
                    previous = seen
                    yield result
                await asyncio.sleep(self.pause_after(result))
