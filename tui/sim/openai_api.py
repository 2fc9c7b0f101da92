"""The OpenAI-compatible routes both engines serve: completions and chat completions.

Streams carry one chunk per verify step (several tokens each when speculative), then a usage
chunk when ``stream_options.include_usage`` is set, then ``data: [DONE]``; with
``stream_options.continuous_usage_stats`` every chunk carries the usage so far, as vLLM sends
it. ``max_tokens`` (or ``max_completion_tokens``), ``ignore_eos`` and ``min_tokens`` are
honoured: without ``ignore_eos`` a request ends at the simulated end-of-sequence
(``--answer-len``) with ``finish_reason`` ``stop``, never before ``min_tokens``.

The chunk that carries ``finish_reason`` (and a response that does not stream) adds a top-level
``sim_admitted_at`` (ours; neither engine sends it): the wall-clock second the request was
admitted and its TTFT clock started.
"""

from __future__ import annotations

import time
import uuid
import zlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from tui.sim.config import VLLM_ENGINE
from tui.sim.http_common import (
    BadRequest,
    ServerState,
    bool_field,
    count_words,
    error_response,
    int_field,
    read_json,
    sse,
    state_of,
)
from tui.sim.tokens import ADMITTED_FIELD, DecodeStep, GenRequest, token_text

CHAT_DEFAULT_MAX_TOKENS = 128
COMPLETION_DEFAULT_MAX_TOKENS = 16
CHAT_TEMPLATE_TOKENS = 4


@dataclass(frozen=True, slots=True)
class Call:
    """One OpenAI call: which endpoint, whether it streams, and how to answer."""

    chat: bool
    stream: bool
    include_usage: bool
    continuous_usage: bool
    rid: str
    model: str


async def completions(request: Request) -> Response:
    return await _serve(request, chat=False)


async def chat_completions(request: Request) -> Response:
    return await _serve(request, chat=True)


async def _serve(request: Request, chat: bool) -> Response:
    state = state_of(request)
    try:
        data = await read_json(request)
        call, req = _parse(state, data, chat)
    except BadRequest as exc:
        return error_response(str(exc))
    state.served_generation()
    chunks = state.engine.generate(req)
    if call.stream:
        events = _events(state, call, req, chunks)
        return StreamingResponse(events, media_type="text/event-stream")
    return JSONResponse(await _complete(state, call, req, chunks))


def _parse(state: ServerState, data: dict[str, Any], chat: bool) -> tuple[Call, GenRequest]:
    prompt = _chat_prompt(data) if chat else _completion_prompt(data)
    default = CHAT_DEFAULT_MAX_TOKENS if chat else COMPLETION_DEFAULT_MAX_TOKENS
    limit = state.facts.context_len
    key = "max_completion_tokens" if chat and "max_completion_tokens" in data else "max_tokens"
    max_tokens = int_field(data, key, default, 0, limit)
    options = data.get("stream_options") or {}
    if not isinstance(options, dict):
        raise BadRequest("'stream_options' must be an object")
    vllm = state.config.engine == VLLM_ENGINE
    prefix = ("chatcmpl-" if chat else "cmpl-") if vllm else ""
    call = Call(
        chat=chat,
        stream=bool_field(data, "stream"),
        include_usage=bool_field(options, "include_usage"),
        continuous_usage=bool_field(options, "continuous_usage_stats"),
        rid=prefix + uuid.uuid4().hex,
        model=state.config.model_name,
    )
    ignore_eos = bool_field(data, "ignore_eos")
    min_tokens = int_field(data, "min_tokens", 0, 0, limit)
    return call, state.new_request(prompt, max_tokens, ignore_eos, min(min_tokens, max_tokens))


def _completion_prompt(data: dict[str, Any]) -> int:
    prompt = data.get("prompt")
    if isinstance(prompt, str):
        return count_words(prompt)
    if isinstance(prompt, list) and prompt and all(isinstance(t, int) for t in prompt):
        return len(prompt)
    raise BadRequest("'prompt' must be a string or a list of token ids; batches are not simulated")


def _chat_prompt(data: dict[str, Any]) -> int:
    messages = data.get("messages")
    if not isinstance(messages, list) or not messages:
        raise BadRequest("'messages' must be a non-empty list")
    total = 0
    for index, message in enumerate(messages):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise BadRequest(f"'messages[{index}]' must be an object with a 'role'")
        total += CHAT_TEMPLATE_TOKENS + _content_words(message.get("content"), index)
    return total


def _content_words(content: Any, index: int) -> int:
    if content is None:
        return 0
    if isinstance(content, str):
        return len(content.split())
    if isinstance(content, list):
        texts = [part.get("text", "") for part in content if isinstance(part, dict)]
        return sum(len(text.split()) for text in texts if isinstance(text, str))
    raise BadRequest(f"'messages[{index}].content' must be a string or a list of parts")


def _usage(req: GenRequest, completion: int) -> dict[str, Any]:
    return {
        "prompt_tokens": req.prompt_tokens,
        "total_tokens": req.prompt_tokens + completion,
        "completion_tokens": completion,
        "prompt_tokens_details": None,
        "reasoning_tokens": 0,
    }


def _envelope(
    state: ServerState, call: Call, choices: list[dict[str, Any]], streaming: bool
) -> dict[str, Any]:
    kind = "chat.completion" if call.chat else "text_completion"
    if call.chat and streaming:
        kind += ".chunk"
    return {
        "id": call.rid,
        "object": kind,
        "created": int(time.time()),
        "model": call.model,
        "choices": choices,
        "usage": None,
    }


def _choice(call: Call, text: str, finish: str | None, first: bool) -> dict[str, Any]:
    choice: dict[str, Any] = {"index": 0}
    if call.chat and call.stream:
        delta: dict[str, Any] = (
            {"role": "assistant", "content": text} if first else {"content": text}
        )
        choice["delta"] = delta
    elif call.chat:
        choice["message"] = {
            "role": "assistant",
            "content": text,
            "reasoning_content": None,
            "tool_calls": None,
        }
    else:
        choice["text"] = text
    choice.update({"logprobs": None, "finish_reason": finish, "matched_stop": None})
    return choice


async def _events(
    state: ServerState, call: Call, req: GenRequest, chunks: AsyncIterator[DecodeStep]
) -> AsyncIterator[bytes]:
    completion, first = 0, True
    async for chunk in chunks:
        completion = chunk.completion_tokens
        text = "".join(token_text(token) for token in chunk.token_ids)
        finish = ("abort" if chunk.aborted else req.finish_reason) if chunk.finished else None
        event = _envelope(state, call, [_choice(call, text, finish, first)], True)
        if call.include_usage and call.continuous_usage:
            event["usage"] = _usage(req, completion)
        if chunk.finished:
            _stamp(event, req)
        yield sse(event)
        first = False
    if call.include_usage:
        final = _envelope(state, call, [], True)
        final["usage"] = _usage(req, completion)
        yield sse(final)
    yield sse("[DONE]")


async def _complete(
    state: ServerState, call: Call, req: GenRequest, chunks: AsyncIterator[DecodeStep]
) -> dict[str, Any]:
    ids: list[int] = []
    completion, finish = 0, "length"
    async for chunk in chunks:
        ids.extend(chunk.token_ids)
        completion = chunk.completion_tokens
        finish = "abort" if chunk.aborted else req.finish_reason
    text = "".join(token_text(token) for token in ids)
    body = _envelope(state, call, [_choice(call, text, finish, True)], False)
    body["usage"] = _usage(req, completion)
    _stamp(body, req)
    return body


def _stamp(body: dict[str, Any], req: GenRequest) -> None:
    """Add when the request was admitted, if it was."""
    if req.admitted_at is not None:
        body[ADMITTED_FIELD] = req.admitted_at


async def tokenize(request: Request) -> Response:
    """``/tokenize`` as vLLM answers it: one id per word of ``prompt``."""
    state = state_of(request)
    try:
        data = await read_json(request)
        prompt = data.get("prompt")
        if not isinstance(prompt, str):
            raise BadRequest("'prompt' must be a string")
    except BadRequest as exc:
        return error_response(str(exc))
    tokens = [zlib.crc32(word.encode()) % 30_000 + 100 for word in prompt.split()]
    return JSONResponse(
        {"count": len(tokens), "max_model_len": state.facts.context_len, "tokens": tokens}
    )


def openai_routes() -> list[Route]:
    return [
        Route("/v1/completions", completions, methods=["POST"]),
        Route("/v1/chat/completions", chat_completions, methods=["POST"]),
        Route("/tokenize", tokenize, methods=["POST"]),
    ]
