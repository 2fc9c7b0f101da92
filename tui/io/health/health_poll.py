"""Health of a server's HTTP port, polled over the host's connections: refused, starting,
healthy, ready.

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

The requests go through ``httpcore``'s connection pool (one connection, kept alive while the
server keeps it), as the ``/metrics`` scrape's do, given a network backend when the server is
reached another way than by this machine's sockets: the app's is
:class:`~tui.io.transport.session_network.SessionNetwork`, SSH ``direct-tcpip`` channels opened
from the host's side, with no port forward in between. A port nothing listens on there is a
refused channel open, raised as ``httpcore.ConnectError``, and reads as refused, as does a
connection closed before any response.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import httpcore

from tui.engine.judge.health import HealthState
from tui.engine.servers import registry
from tui.engine.servers.dialect import GenerationProbe
from tui.engine.servers.monitor_traffic import REQUEST_ID_PREFIX, USER_AGENT, monitor_path
from tui.io.transport.deadline import within
from tui.io.transport.host_session import ApiNotPlaced
from tui.io.transport.transport import TransportError

UrlSource = Callable[[], Awaitable[str]]
"""Returns the base URL (``http://HOST:PORT`` as the network backend reaches it); asked before
each poll."""
Headers = tuple[tuple[str, str], ...]

_REFUSED = (
    httpcore.ConnectError,
    httpcore.RemoteProtocolError,
    httpcore.ReadError,
    httpcore.WriteError,
    TransportError,
    OSError,
)
"""Nothing answered: the connection was refused, or closed before any response (a backend's
own ``TransportError`` or ``OSError`` included)."""
_HTTP_ERRORS = (
    httpcore.TimeoutException,
    httpcore.NetworkError,
    httpcore.ProtocolError,
    httpcore.UnsupportedProtocol,
)
_FAILURES = (asyncio.TimeoutError, *_REFUSED, *_HTTP_ERRORS)
"""Every way a request fails without an answer (a timeout first: it is an ``OSError`` too)."""
PROMPT = "Hello"
TIMEOUT = 5.0
"""Seconds a health request (and the generation's ``/v1/models`` look-up) may take."""
_MONITOR: Headers = (("User-Agent", USER_AGENT),)
"""Every request of the monitor says who sends it; the access logs show its query marker."""
_JSON: Headers = (("Content-Type", "application/json"),)


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
    timeout: float = TIMEOUT
    generation_timeout: float = 60.0
    engine: str = "auto"
    api_key: str | None = None


def _elapsed_ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000.0


def _headers(api_key: str | None) -> Headers:
    """The monitor's own headers, and the API key when the server wants one."""
    return (*_MONITOR, ("Authorization", f"Bearer {api_key}")) if api_key else _MONITOR


async def _request(
    pool: httpcore.AsyncConnectionPool,
    method: str,
    url: str,
    headers: Headers,
    timeout: float,
    content: bytes | None = None,
) -> httpcore.Response:
    """One request, its answer read in full; ``timeout`` bounds each step (waiting for the
    pool's connection, connecting, each write, each read), as an HTTP client's timeout does."""
    steps = {"connect": timeout, "read": timeout, "write": timeout, "pool": timeout}
    return await pool.request(
        method, url, headers=headers, content=content, extensions={"timeout": steps}
    )


async def check_health(
    pool: httpcore.AsyncConnectionPool,
    base: str,
    path: str = "/health",
    *,
    timeout: float = TIMEOUT,
    api_key: str | None = None,
) -> HealthChanged:
    """One health request (``/health``), classified."""
    started = time.perf_counter()
    url = f"{base}{monitor_path(path)}"
    try:
        answer = await _request(pool, "GET", url, _headers(api_key), timeout)
    except asyncio.TimeoutError as exc:
        return HealthChanged(HealthState.UNHEALTHY, None, None, type(exc).__name__)
    except _REFUSED as exc:
        return HealthChanged(HealthState.REFUSED, None, None, type(exc).__name__)
    except _HTTP_ERRORS as exc:
        return HealthChanged(HealthState.UNHEALTHY, None, None, type(exc).__name__)
    latency = _elapsed_ms(started)
    if answer.status == 200:
        return HealthChanged(HealthState.HEALTHY, 200, latency)
    status = answer.status
    state = HealthState.STARTING if status == 503 else HealthState.UNHEALTHY
    return HealthChanged(state, status, latency, f"/health answered {status}")


async def _model_name(
    pool: httpcore.AsyncConnectionPool, base: str, headers: Headers, timeout: float
) -> str | None:
    url = f"{base}{monitor_path('/v1/models')}"
    try:
        answer = await _request(pool, "GET", url, headers, timeout)
        data: Any = json.loads(answer.content)
        return str(data["data"][0]["id"])
    except (*_FAILURES, ValueError, KeyError, IndexError, TypeError):
        return None


async def generate_one_token(
    pool: httpcore.AsyncConnectionPool,
    base: str,
    engine: str,
    timeout: float,
    *,
    api_key: str | None = None,
    lookup_timeout: float = TIMEOUT,
) -> tuple[bool, float, str]:
    """Ask for one token; (answered, latency in ms, what went wrong). An engine not known is
    asked each engine's way in turn while the route is not found (404). ``lookup_timeout``
    bounds the ``/v1/models`` request of a probe that names the model."""
    started = time.perf_counter()
    headers = _headers(api_key)
    *others, last = registry.generation_probes(engine)
    try:
        for probe in others:
            status = await _generate(pool, base, probe, headers, timeout, lookup_timeout)
            if status != 404:
                return status == 200, _elapsed_ms(started), _why(probe.path, status)
        status = await _generate(pool, base, last, headers, timeout, lookup_timeout)
    except _FAILURES as exc:
        return False, _elapsed_ms(started), f"generation failed: {type(exc).__name__}"
    return status == 200, _elapsed_ms(started), _why(last.path, status)


async def _generate(
    pool: httpcore.AsyncConnectionPool,
    base: str,
    probe: GenerationProbe,
    headers: Headers,
    timeout: float,
    lookup_timeout: float,
) -> int:
    """The probe's generation request; its answer's status."""
    rid = f"{REQUEST_ID_PREFIX}{uuid.uuid4().hex}"
    body = probe.body(PROMPT, rid)
    if probe.names_model:
        model = await _model_name(pool, base, headers, lookup_timeout)
        if model is not None:
            body["model"] = model
    url = f"{base}{monitor_path(probe.path)}"
    sent = (*headers, *_JSON, ("X-Request-Id", rid))
    answer = await _request(pool, "POST", url, sent, timeout, json.dumps(body).encode())
    return answer.status


def _why(path: str, status: int) -> str:
    if status == 200:
        return ""
    return f"{path} answered {status}"


class HealthPoller:
    """Polls one server; :meth:`changes` yields a :class:`HealthChanged` per change.

    ``network`` opens the pool's connections (None: this machine's own sockets, for a URL
    this machine reaches)."""

    def __init__(
        self,
        url: UrlSource,
        options: HealthOptions | None = None,
        network: httpcore.AsyncNetworkBackend | None = None,
    ) -> None:
        self._url = url
        self.options = options or HealthOptions()
        self._network = network
        self._generated: float | None = None

    def pool(self) -> httpcore.AsyncConnectionPool:
        """The connection pool to poll with (one connection, reused while it lives)."""
        return httpcore.AsyncConnectionPool(
            max_connections=1, max_keepalive_connections=1, network_backend=self._network
        )

    async def poll(self, pool: httpcore.AsyncConnectionPool) -> HealthChanged:
        """One round: the link, ``/health``, and the generation while it has not worked."""
        options = self.options
        try:
            base = await within(self._url(), options.timeout)
        except ApiNotPlaced as exc:
            self._generated = None
            return HealthChanged(HealthState.UNKNOWN, None, None, str(exc))
        except (TransportError, OSError, asyncio.TimeoutError) as exc:
            self._generated = None
            return HealthChanged(HealthState.NO_LINK, None, None, str(exc) or type(exc).__name__)
        path = registry.or_default(options.engine).health_path
        health = await check_health(
            pool, base, path, timeout=options.timeout, api_key=options.api_key
        )
        if health.state is not HealthState.HEALTHY:
            self._generated = None
            return health
        if self._generated is None:
            ok, took, why = await generate_one_token(
                pool, base, options.engine, options.generation_timeout,
                api_key=options.api_key, lookup_timeout=options.timeout,
            )  # fmt: skip
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
        """Poll at :meth:`pause_after`'s pace, over one connection pool for the whole time;
        yield the first result and every change."""
        previous: tuple[HealthState, int | None, str] | None = None
        async with self.pool() as pool:
            while True:
                result = await self.poll(pool)
                seen = (result.state, result.status, result.detail)
                if seen != previous:
                    previous = seen
                    yield result
                await asyncio.sleep(self.pause_after(result))
