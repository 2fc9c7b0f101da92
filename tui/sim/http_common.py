"""What every HTTP route shares: the server's state, request parsing and error answers.

Request bodies are untrusted: a malformed body gets a 400 that names the bad field, never a
crash, and nothing from a request is logged except by the access log.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse

from tui.sim.config import SimConfig
from tui.sim.sim_model import MemoryPlan, ModelFacts
from tui.sim.stats import ServerStats
from tui.sim.timeline import StartupTimes
from tui.sim.tokens import GenRequest, TokenEngine

MAX_BODY_BYTES = 8 * 1024 * 1024
LogMain = Callable[[str], None]


class BadRequest(Exception):
    """A request the server refuses with 400; the message names the field."""


@dataclass(slots=True)
class ServerState:
    """The live server: its settings, token engine, counters and readiness."""

    config: SimConfig
    engine: TokenEngine
    stats: ServerStats
    times: StartupTimes
    facts: ModelFacts
    memory: MemoryPlan
    log_main: LogMain
    status: str = "starting"
    created: int = field(default_factory=lambda: int(time.time()))
    serial: int = 0
    warmup_delay_s: float = 0.0
    warmup_pending: bool = True
    fail_warmup: bool = False
    health_lies: bool = False
    health_503_left: int = 0
    """``--health-503``: how many more ``/health`` requests answer 503 once a generation was
    served."""
    generation_served: bool = False

    def served_generation(self) -> None:
        """A generation request came in while up (the warm-up's does not count)."""
        if self.status == "up":
            self.generation_served = True

    def busy_health(self) -> bool:
        """Whether this ``/health`` answers 503 for ``--health-503`` (each answer counts)."""
        if not self.generation_served or self.health_503_left <= 0:
            return False
        self.health_503_left -= 1
        return True

    def new_request(
        self, prompt_tokens: int, max_new_tokens: int, ignore_eos: bool = True, min_tokens: int = 0
    ) -> GenRequest:
        """Number a request; the very first one pays the warm-up's compile time.

        With ``--answer-len`` a request that does not set ``ignore_eos`` ends at its
        end-of-sequence, never before ``min_tokens`` nor after ``max_new_tokens``.
        """
        self.serial += 1
        answer = self.config.answer_len
        requested = None
        if answer and not ignore_eos and max(answer, min_tokens) < max_new_tokens:
            requested, max_new_tokens = max_new_tokens, max(answer, min_tokens)
        extra = 0.0
        if self.warmup_pending:
            self.warmup_pending = False
            extra = self.warmup_delay_s
        return GenRequest(
            rid=uuid.uuid4().hex,
            prompt_tokens=max(prompt_tokens, 1),
            max_new_tokens=max_new_tokens,
            serial=self.serial,
            extra_first_token_s=extra,
            first_token_id=self.serial * 7,
            requested=requested,
        )


def state_of(request: Request) -> ServerState:
    state: ServerState = request.app.state.sim
    return state


async def read_json(request: Request) -> dict[str, Any]:
    """The request body as a JSON object, or BadRequest."""
    body = await request.body()
    if len(body) > MAX_BODY_BYTES:
        raise BadRequest(f"request body is larger than {MAX_BODY_BYTES} bytes")
    try:
        data = json.loads(body or b"{}")
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise BadRequest(f"request body is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise BadRequest("request body must be a JSON object")
    return data


def int_field(
    data: dict[str, Any], name: str, default: int, low: int = 0, high: int = 1 << 20
) -> int:
    """An integer field within bounds, or BadRequest naming it."""
    value = data.get(name, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadRequest(f"'{name}' must be an integer")
    if not low <= value <= high:
        raise BadRequest(f"'{name}' must be between {low} and {high}")
    return value


def bool_field(data: dict[str, Any], name: str) -> bool:
    value = data.get(name, False)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise BadRequest(f"'{name}' must be true or false")
    return value


def count_words(text: str) -> int:
    """Prompt length in tokens: one per whitespace-separated word (at least one)."""
    return max(len(text.split()), 1)


def error_response(message: str, status: int = 400, kind: str = "BadRequestError") -> JSONResponse:
    """The OpenAI-style error object both engines answer with."""
    body = {"object": "error", "message": message, "type": kind, "param": None, "code": status}
    return JSONResponse(body, status_code=status)


def sse(payload: dict[str, Any] | str) -> bytes:
    """One server-sent event: ``data: {json}`` and a blank line."""
    text = payload if isinstance(payload, str) else json.dumps(payload, ensure_ascii=False)
    return f"data: {text}\n\n".encode()
