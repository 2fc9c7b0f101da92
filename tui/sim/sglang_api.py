"""SGLang's native HTTP routes: health, model and server info, ``/generate``, ``/metrics``.

``/generate``'s last chunk adds ``meta_info.sim_admitted_at`` (ours; SGLang never sends it): the
wall-clock second the request was admitted and its TTFT clock started.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from tui.sim.config import SGLANG_ENGINE, SGLANG_VERSION
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
from tui.sim.metrics import CONTENT_TYPE, sglang_metrics
from tui.sim.serverargs import sglang_server_args
from tui.sim.tokens import ADMITTED_FIELD, DecodeStep, GenRequest, token_text

WARMUP_FAILURE = (
    "Internal server error: CUDA error: an illegal memory access was encountered\n"
    "CUDA kernel errors might be asynchronously reported at some other API call, so the "
    "stacktrace below might be incorrect."
)


async def health(request: Request) -> Response:
    """503 until the warm-up succeeded; then a real one-token generation when idle, which the
    metrics do not count (SGLang sends it with ``log_metrics=False``)."""
    state = state_of(request)
    if state.status == "stopping":
        state.log_main("Health check request received during shutdown. Returning 503.")
    if state.status != "up" or state.busy_health():
        return Response(status_code=503)
    idle = not state.stats.running and state.stats.waiting == 0
    if not state.health_lies and (idle or request.url.path == "/health_generate"):
        check = state.new_request(1, 1)
        check.log_metrics = False
        await _drain(state, check)
    return Response(status_code=200)


async def _drain(state: ServerState, req: GenRequest) -> None:
    async for _ in state.engine.generate(req):
        pass


async def model_info(request: Request) -> Response:
    state = state_of(request)
    _deprecation(state, request, "/model_info")
    cfg = state.config
    return JSONResponse(
        {
            "model_path": cfg.model_path,
            "served_model_name": cfg.model_name,
            "tokenizer_path": cfg.model_path,
            "is_generation": True,
            "preferred_sampling_params": None,
            "weight_version": "default",
            "load_format": "auto",
            "reasoning_parser": None,
            "tool_call_parser": None,
            "disaggregation_mode": "null",
            "has_image_understanding": False,
            "has_audio_understanding": False,
            "model_type": state.facts.architecture.lower().split("for")[0],
            "architectures": [state.facts.architecture],
        }
    )


async def server_info(request: Request) -> Response:
    state = state_of(request)
    _deprecation(state, request, "/server_info")
    cfg, times = state.config, state.times
    args = sglang_server_args(cfg)
    startup = {
        "load_weight": times.load_weight,
        "kv_cache_allocation": times.kv_cache_allocation,
        "scheduler_e2e": times.scheduler_e2e,
        "cuda_graph": dict(times.cuda_graph),
        "tokenizer_e2e": times.tokenizer_e2e,
    }
    internal = {**args, **_internal_state(state), "startup_time": startup}
    return JSONResponse(
        {
            **args,
            "launch_command": "sglang serve " + " ".join(cfg.argv),
            "status": "ready",
            "max_total_num_tokens": state.memory.kv_tokens,
            "max_req_input_len": state.facts.context_len - 1,
            "kv_events": None,
            "startup_time": startup,
            "internal_states": [internal] * max(cfg.dp_size, 1),
            "version": SGLANG_VERSION,
            "frontend": "python",
        }
    )


def _internal_state(state: ServerState) -> dict[str, Any]:
    cfg, mem = state.config, state.memory
    found: dict[str, Any] = {
        "world_size": cfg.tp_size * (1 if cfg.enable_dp_attention else cfg.dp_size),
        "effective_max_running_requests_per_dp": cfg.max_running,
        "last_gen_throughput": state.stats.totals.last_gen_throughput,
        "memory_usage": {
            "weight": state.facts.weight_gb + state.facts.draft_gb,
            "kvcache": round(mem.kv_gb + mem.draft_kv_gb, 2),
            "startup_available": round(mem.start_avail, 2),
            "token_capacity": mem.kv_tokens,
            "graph": round(mem.graph_gb + mem.draft_graph_gb, 2),
        },
    }
    accept = state.stats.avg_accept_length
    if accept is not None:
        found["avg_spec_accept_length"] = accept
    return found


def _deprecation(state: ServerState, request: Request, new: str) -> None:
    old = request.url.path
    if old != new:
        state.log_main(
            f"Endpoint '{old}' is deprecated and will be removed in a future "
            f"version. Please use '{new}' instead."
        )


async def models(request: Request) -> Response:
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
                    "owned_by": SGLANG_ENGINE,
                    "root": name,
                    "parent": None,
                    "max_model_len": state.facts.context_len,
                }
            ],
        }
    )


async def metrics(request: Request) -> Response:
    state = state_of(request)
    return Response(sglang_metrics(state.config, state.stats), media_type=CONTENT_TYPE)


async def generate(request: Request) -> Response:
    """SGLang's ``/generate``: cumulative text per SSE chunk, or one JSON object."""
    state = state_of(request)
    try:
        data = await read_json(request)
        req = _generate_request(state, data)
        stream = bool_field(data, "stream")
    except BadRequest as exc:
        return error_response(str(exc))
    state.served_generation()
    if state.fail_warmup and state.status == "starting":
        await asyncio.sleep(req.extra_first_token_s)
        return error_response(WARMUP_FAILURE, 500, "InternalServerError")
    chunks = state.engine.generate(req)
    if stream:
        return StreamingResponse(_stream(state, req, chunks), media_type="text/event-stream")
    return JSONResponse(await _collect(state, req, chunks))


def _generate_request(state: ServerState, data: dict[str, Any]) -> GenRequest:
    params = data.get("sampling_params") or {}
    if not isinstance(params, dict):
        raise BadRequest("'sampling_params' must be an object")
    text, ids = data.get("text"), data.get("input_ids")
    if isinstance(text, str):
        prompt = count_words(text)
    elif isinstance(ids, list) and all(isinstance(i, int) for i in ids):
        prompt = max(len(ids), 1)
    elif text is None and ids is None:
        prompt = 1
    else:
        raise BadRequest(
            "'text' must be a string and 'input_ids' a list of integers; batches are not simulated"
        )
    limit = state.facts.context_len
    new = int_field(params, "max_new_tokens", 128, 0, limit)
    ignore_eos = bool_field(params, "ignore_eos")
    least = min(int_field(params, "min_new_tokens", 0, 0, limit), new)
    return state.new_request(prompt, new, ignore_eos, least)


async def _stream(
    state: ServerState, req: GenRequest, chunks: AsyncIterator[DecodeStep]
) -> AsyncIterator[bytes]:
    ids: list[int] = []
    started = time.monotonic()
    async for chunk in chunks:
        ids.extend(chunk.token_ids)
        yield sse(_body(state, req, ids, chunk, time.monotonic() - started))
    yield sse("[DONE]")


async def _collect(
    state: ServerState, req: GenRequest, chunks: AsyncIterator[DecodeStep]
) -> dict[str, Any]:
    ids: list[int] = []
    started = time.monotonic()
    last = DecodeStep((), 0, 0, True)
    async for chunk in chunks:
        ids.extend(chunk.token_ids)
        last = chunk
    return _body(state, req, ids, last, time.monotonic() - started)


def _body(
    state: ServerState, req: GenRequest, ids: list[int], chunk: DecodeStep, elapsed: float
) -> dict[str, Any]:
    text = "".join(token_text(token) for token in ids)
    return {
        "text": text,
        "output_ids": list(ids),
        "meta_info": meta_info(state, req, chunk, elapsed),
    }


def meta_info(
    state: ServerState, req: GenRequest, chunk: DecodeStep, elapsed: float
) -> dict[str, Any]:
    """SGLang's per-request ``meta_info``, speculative fields included when enabled."""
    done = chunk.finished
    reason: dict[str, Any] | None = None
    if chunk.aborted:
        reason = {"type": "abort", "message": "The server is shutting down."}
    elif done and req.finish_reason == "stop":
        reason = {"type": "stop", "matched": 151645}
    elif done:
        reason = {"type": "length", "length": chunk.completion_tokens}
    info: dict[str, Any] = {
        "id": req.rid,
        "finish_reason": reason,
        "prompt_tokens": req.prompt_tokens,
        "weight_version": "default",
        "total_retractions": 0,
        "reasoning_tokens": 0,
        "completion_tokens": chunk.completion_tokens,
        "cached_tokens": 0,
    }
    cfg = state.config
    if cfg.speculative:
        info["spec_verify_ct"] = chunk.verify_ct
        if chunk.verify_ct:
            correct = chunk.completion_tokens - 1 - chunk.verify_ct
            info["spec_accept_length"] = chunk.completion_tokens / chunk.verify_ct
            info["spec_accept_rate"] = correct / (chunk.verify_ct * max(cfg.max_accept - 1, 1))
            info["spec_num_correct_drafts"] = correct
            info["spec_num_proposed_drafts"] = chunk.verify_ct * (cfg.max_accept - 1)
    if done:
        info["e2e_latency"] = elapsed
    if done and req.admitted_at is not None:
        info[ADMITTED_FIELD] = req.admitted_at
    return info


def sglang_routes(state: ServerState) -> list[Route]:
    """Every native route; ``/metrics`` only with ``--enable-metrics``."""
    routes = [
        Route("/health", health),
        Route("/health_generate", health),
        Route("/model_info", model_info),
        Route("/get_model_info", model_info),
        Route("/server_info", server_info),
        Route("/get_server_info", server_info),
        Route("/v1/models", models),
        Route("/generate", generate, methods=["POST"]),
    ]
    if state.config.enable_metrics:
        routes.append(Route("/metrics", metrics))
    return routes
