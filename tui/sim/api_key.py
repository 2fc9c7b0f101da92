"""``--api-key``: the bearer-token check both engines put in front of their routes.

vLLM checks every path under ``/v1`` and SGLang every path but ``/health*`` and ``/metrics``
(vLLM ``vllm/entrypoints/openai/api_server.py``, SGLang
``python/sglang/srt/utils.py`` ``add_api_key_middleware``); a request without
``Authorization: Bearer KEY`` gets 401 and ``{"error": "Unauthorized"}``.
"""

from __future__ import annotations

import hmac

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from tui.sim.config import VLLM_ENGINE


def guarded(engine: str, path: str) -> bool:
    """Whether the engine asks for the key on ``path``."""
    if engine == VLLM_ENGINE:
        return path.startswith("/v1")
    return not (path.startswith("/health") or path.startswith("/metrics"))


class ApiKeyCheck:
    """ASGI middleware answering 401 to a guarded request without the bearer token."""

    def __init__(self, app: ASGIApp, key: str, engine: str) -> None:
        self.app = app
        self.expected = f"Bearer {key}".encode()
        self.engine = engine

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") == "OPTIONS":
            await self.app(scope, receive, send)
            return
        if guarded(self.engine, str(scope.get("path", ""))):
            headers = dict(scope.get("headers") or [])
            given = headers.get(b"authorization", b"")
            if not hmac.compare_digest(given, self.expected):
                response = JSONResponse({"error": "Unauthorized"}, status_code=401)
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)
