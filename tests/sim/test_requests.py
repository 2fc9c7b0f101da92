"""The OpenAI routes honour max_tokens, ignore_eos and min_tokens, stream one chunk per verify
step with usage as vLLM sends it, and ``--api-key`` asks for a bearer token as both engines do."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.simserver import FAST, Sim, running_sim

KEY = "sk-sim-test"
FLAGS = [
    "--time-scale", FAST, "--speculative-algorithm", "EAGLE3",
    "--speculative-draft-model-path", "d/eagle3", "--decode-tok-s", "4000", "--ttft-ms", "2",
    "--accept-len", "3", "--answer-len", "12", "--api-key", KEY, "--served-model-name", "served",
]  # fmt: skip
AUTH = {"Authorization": f"Bearer {KEY}"}


@pytest.fixture(scope="module")
def sim(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sim]:
    with running_sim(tmp_path_factory.mktemp("requests"), FLAGS) as server:
        yield server


@pytest.fixture(scope="module")
def client(sim: Sim) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=sim.url, timeout=30, headers=AUTH) as http:
        yield http


def _events(response: httpx.Response) -> list[Any]:
    assert response.status_code == 200, response.text
    lines = [line[len("data: ") :] for line in response.iter_lines() if line.startswith("data: ")]
    assert lines[-1] == "[DONE]"
    return [json.loads(line) for line in lines[:-1]]


def _chat(client: httpx.Client, **fields: Any) -> list[Any]:
    body = {"model": "served", "messages": [{"role": "user", "content": "hi there"}], **fields}
    body |= {"stream": True, "stream_options": {"include_usage": True}}
    with client.stream("POST", "/v1/chat/completions", json=body) as response:
        return _events(response)


def test_without_ignore_eos_a_chat_stops_at_its_answer(client: httpx.Client) -> None:
    events = _chat(client, max_tokens=64)
    assert events[-1]["usage"]["completion_tokens"] == 12
    assert [e["choices"][0]["finish_reason"] for e in events[:-1]][-1] == "stop"


def test_ignore_eos_runs_to_max_tokens(client: httpx.Client) -> None:
    events = _chat(client, max_tokens=64, ignore_eos=True)
    assert events[-1]["usage"]["completion_tokens"] == 64
    assert events[-2]["choices"][0]["finish_reason"] == "length"


def test_min_tokens_holds_off_the_end_of_sequence(client: httpx.Client) -> None:
    events = _chat(client, max_tokens=64, min_tokens=40)
    assert events[-1]["usage"]["completion_tokens"] == 40


def test_max_tokens_below_the_answer_ends_by_length(client: httpx.Client) -> None:
    events = _chat(client, max_tokens=5)
    assert events[-1]["usage"]["completion_tokens"] == 5
    assert events[-2]["choices"][0]["finish_reason"] == "length"


def test_completions_stream_several_tokens_per_chunk_with_continuous_usage(
    client: httpx.Client,
) -> None:
    body = {
        "model": "served", "prompt": [1, 2, 3, 4, 5], "max_tokens": 60, "ignore_eos": True,
        "stream": True,
        "stream_options": {"include_usage": True, "continuous_usage_stats": True},
    }  # fmt: skip
    with client.stream("POST", "/v1/completions", json=body) as response:
        events = _events(response)
    counts = [e["usage"]["completion_tokens"] for e in events]
    assert counts[-1] == 60
    assert events[-1]["usage"]["prompt_tokens"] == 5
    steps = [b - a for a, b in zip([0, *counts[:-2]], counts[:-1], strict=True)]
    assert steps[0] == 1
    assert max(steps) > 1
    assert sum(steps) == 60


def test_generate_honours_ignore_eos_and_min_new_tokens(client: httpx.Client) -> None:
    def tokens(params: dict[str, Any]) -> tuple[int, str]:
        body = {"input_ids": list(range(7)), "sampling_params": params}
        info = client.post("/generate", json=body).json()["meta_info"]
        assert info["prompt_tokens"] == 7
        return info["completion_tokens"], info["finish_reason"]["type"]

    assert tokens({"max_new_tokens": 50}) == (12, "stop")
    assert tokens({"max_new_tokens": 50, "ignore_eos": True}) == (50, "length")
    assert tokens({"max_new_tokens": 50, "min_new_tokens": 30}) == (30, "stop")


def test_api_key_is_required_except_on_health(sim: Sim) -> None:
    with httpx.Client(base_url=sim.url, timeout=30) as bare:
        assert bare.get("/health").status_code == 200
        for path in ("/v1/models", "/server_info"):
            refused = bare.get(path)
            assert refused.status_code == 401
            assert refused.json() == {"error": "Unauthorized"}
        wrong = bare.get("/v1/models", headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401
        assert bare.get("/v1/models", headers=AUTH).status_code == 200


def test_vllm_guards_only_its_v1_routes() -> None:
    from tui.sim.api_key import guarded

    assert guarded("vllm", "/v1/completions")
    assert not guarded("vllm", "/metrics")
    assert guarded("sglang", "/generate")
    assert not guarded("sglang", "/health_generate")
    assert not guarded("sglang", "/metrics")
