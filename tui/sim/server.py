"""The simulated server's ASGI app on a real uvicorn, as SGLang and vLLM serve theirs."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator, Callable, Iterator

import uvicorn
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from tui.sim.api_key import ApiKeyCheck
from tui.sim.config import VLLM_ENGINE, VLLM_VERSION
from tui.sim.http_common import ServerState, state_of
from tui.sim.logfmt import uvicorn_log_config
from tui.sim.metrics import CONTENT_TYPE, vllm_metrics
from tui.sim.openai_api import openai_routes
from tui.sim.sglang_api import sglang_routes


class SimServer(uvicorn.Server):
    """uvicorn minus its signal handlers: the simulated main process owns SIGTERM and SIGINT.

    ``listening`` is set once the socket accepts connections.
    """

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.listening = asyncio.Event()

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started:
            self.listening.set()

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield

    def install_signal_handlers(self) -> None:
        """Older uvicorn releases install handlers here; the main process owns them."""


def build_app(state: ServerState, on_startup: Callable[[], None]) -> Starlette:
    """The routes of the configured engine; ``on_startup`` runs in uvicorn's lifespan."""
    if state.config.engine == VLLM_ENGINE:
        routes = vllm_routes() + openai_routes()
    else:
        routes = sglang_routes(state) + openai_routes()

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        on_startup()
        yield

    cfg = state.config
    middleware = []
    if cfg.api_key:
        middleware.append(Middleware(ApiKeyCheck, key=cfg.api_key, engine=cfg.engine))
    app = Starlette(routes=routes, lifespan=lifespan, middleware=middleware)
    app.state.sim = state
    return app


def make_server(state: ServerState, app: Starlette, quiet: bool = False) -> SimServer:
    """A uvicorn server on the configured address, logging in the engine's format."""
    cfg = state.config
    if cfg.engine == VLLM_ENGINE:
        log_config = uvicorn_log_config(
            cfg.log_level, prefix="(APIServer pid=%(process)d) ", timestamps=False
        )
    else:
        log_config = uvicorn_log_config(cfg.log_level)
    config = uvicorn.Config(
        app,
        host=cfg.host,
        port=cfg.port,
        log_config=log_config,
        log_level="warning" if quiet else cfg.log_level,
        access_log=not quiet,
        lifespan="on",
        timeout_graceful_shutdown=3,
        timeout_keep_alive=5,
    )
    return SimServer(config)


def dummy_health_app() -> Starlette:
    """What a node above rank 0 serves: ``/health`` and ``/ping`` always answer 200."""

    async def ok(request: Request) -> Response:
        return Response(status_code=200)

    return Starlette(routes=[Route("/health", ok), Route("/ping", ok)])


async def vllm_health(request: Request) -> Response:
    state = state_of(request)
    return Response(status_code=200 if state.status == "up" and not state.busy_health() else 503)


async def vllm_models(request: Request) -> Response:
    state = state_of(request)
    name = state.config.model_name
    return JSONResponse(
        {
            "object": "list",
            "data": [
                {
                    "id": name,
                    "object": "model",
                    "created": state.created,
                    "owned_by": VLLM_ENGINE,
                    "root": state.config.model_path,
                    "parent": None,
                    "max_model_len": state.facts.context_len,
                    "permission": [
                        {
                            "id": "modelperm-sim",
                            "object": "model_permission",
                            "created": state.created,
                            "allow_create_engine": False,
                            "allow_sampling": True,
                            "allow_logprobs": True,
                            "allow_search_indices": False,
                            "allow_view": True,
                            "allow_fine_tuning": False,
                            "organization": "*",
                            "group": None,
                            "is_blocking": False,
                        }
                    ],
                }
            ],
        }
    )


async def vllm_version(request: Request) -> Response:
    return JSONResponse({"version": VLLM_VERSION})


async def vllm_load(request: Request) -> Response:
    state = state_of(request)
    return JSONResponse({"server_load": len(state.stats.running) + state.stats.waiting})


async def vllm_metrics_route(request: Request) -> Response:
    state = state_of(request)
    return PlainTextResponse(vllm_metrics(state.config, state.stats), media_type=CONTENT_TYPE)


def vllm_routes() -> list[Route]:
    return [
        Route("/health", vllm_health),
        Route("/ping", vllm_health),
        Route("/v1/models", vllm_models),
        Route("/version", vllm_version),
        Route("/load", vllm_load),
        Route("/metrics", vllm_metrics_route),
    ]
