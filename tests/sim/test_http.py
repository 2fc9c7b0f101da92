"""SGLang's HTTP API as the simulator serves it: shapes, streams, counts, metrics, errors."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.simserver import FAST, READY, Sim, SimFactory, running_sim

FLAGS = [
    "--tp",
    "2",
    "--time-scale",
    FAST,
    "--speculative-algorithm",
    "EAGLE3",
    "--speculative-draft-model-path",
    "d/eagle3",
    "--enable-metrics",
    "--decode-tok-s",
    "2000",
    "--ttft-ms",
    "5",
    "--accept-len",
    "2.5",
    "--served-model-name",
    "served",
]


@pytest.fixture(scope="module")
def sim(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sim]:
    with running_sim(tmp_path_factory.mktemp("http"), FLAGS) as server:
        yield server


@pytest.fixture(scope="module")
def client(sim: Sim) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=sim.url, timeout=30) as http:
        yield http


def _events(response: httpx.Response) -> list[Any]:
    lines = [line[len("data: ") :] for line in response.iter_lines() if line.startswith("data: ")]
    assert lines[-1] == "[DONE]"
    return [json.loads(line) for line in lines[:-1]]


def test_model_and_server_info(client: httpx.Client, sim: Sim) -> None:
    info = client.get("/model_info").json()
    assert info["model_path"] == "Qwen/Qwen3-8B"
    assert info["served_model_name"] == "served"
    assert info["architectures"] == ["Qwen3ForCausalLM"]
    assert client.get("/get_model_info").json() == info
    assert "Endpoint '/get_model_info' is deprecated" in sim.text()
    server = client.get("/server_info").json()
    assert server["tp_size"] == 2
    assert server["speculative_algorithm"] == "EAGLE3"
    assert server["version"].startswith("0.5.")
    assert set(server["startup_time"]) >= {"load_weight", "cuda_graph", "tokenizer_e2e"}
    state = server["internal_states"][0]
    assert state["memory_usage"]["token_capacity"] == server["max_total_num_tokens"]
    assert client.get("/get_server_info").status_code == 200


def test_models_list(client: httpx.Client) -> None:
    data = client.get("/v1/models").json()["data"]
    assert [(m["id"], m["owned_by"], m["max_model_len"]) for m in data] == [
        ("served", "sglang", 40960)
    ]


def test_generate_returns_exactly_max_new_tokens(client: httpx.Client) -> None:
    body = {"text": "one two three", "sampling_params": {"max_new_tokens": 50}}
    answer = client.post("/generate", json=body).json()
    meta = answer["meta_info"]
    assert len(answer["text"].split()) == 50
    assert answer["text"].endswith(" ")
    assert len(answer["output_ids"]) == 50
    assert (meta["prompt_tokens"], meta["completion_tokens"], meta["cached_tokens"]) == (3, 50, 0)
    assert meta["finish_reason"] == {"type": "length", "length": 50}
    assert meta["spec_accept_length"] == pytest.approx(50 / meta["spec_verify_ct"])
    assert meta["e2e_latency"] > 0


def test_generate_streams_cumulative_text_one_chunk_per_verify_step(client: httpx.Client) -> None:
    body = {"input_ids": [1, 2, 3, 4], "sampling_params": {"max_new_tokens": 120}, "stream": True}
    with client.stream("POST", "/generate", json=body) as response:
        chunks = _events(response)
    texts = [chunk["text"] for chunk in chunks]
    assert all(later.startswith(earlier) for earlier, later in itertools.pairwise(texts))
    sizes = [len(b.split()) - len(a.split()) for a, b in itertools.pairwise(texts)]
    assert max(sizes) > 1
    last = chunks[-1]["meta_info"]
    assert last["completion_tokens"] == 120 == len(texts[-1].split())
    assert last["spec_verify_ct"] == len(chunks) - 1
    assert last["finish_reason"]["type"] == "length"
    assert all(chunk["meta_info"]["finish_reason"] is None for chunk in chunks[:-1])


def test_chat_stream_reports_usage_when_asked(client: httpx.Client) -> None:
    body = {
        "model": "served",
        "max_tokens": 40,
        "stream": True,
        "messages": [{"role": "user", "content": "tell me something"}],
        "stream_options": {"include_usage": True},
    }
    with client.stream("POST", "/v1/chat/completions", json=body) as response:
        events = _events(response)
    assert events[0]["object"] == "chat.completion.chunk"
    assert events[0]["choices"][0]["delta"]["role"] == "assistant"
    content = "".join(e["choices"][0]["delta"]["content"] for e in events if e["choices"])
    assert len(content.split()) == 40
    assert events[-2]["choices"][0]["finish_reason"] == "length"
    assert events[-1]["choices"] == []
    usage = events[-1]["usage"]
    assert usage["completion_tokens"] == 40
    assert usage["total_tokens"] == usage["prompt_tokens"] + 40


def test_chat_and_completions_without_streaming(client: httpx.Client) -> None:
    chat = client.post(
        "/v1/chat/completions",
        json={"messages": [{"role": "user", "content": "hi"}], "max_tokens": 7},
    ).json()
    assert chat["object"] == "chat.completion"
    assert len(chat["choices"][0]["message"]["content"].split()) == 7
    assert chat["usage"]["completion_tokens"] == 7
    done = client.post("/v1/completions", json={"prompt": "a b c", "max_tokens": 9}).json()
    assert done["object"] == "text_completion"
    assert len(done["choices"][0]["text"].split()) == 9
    assert done["usage"]["prompt_tokens"] == 3


def test_completion_stream_without_usage(client: httpx.Client) -> None:
    body = {"prompt": "x", "max_tokens": 12, "stream": True}
    with client.stream("POST", "/v1/completions", json=body) as response:
        events = _events(response)
    assert all(event["usage"] is None for event in events)
    assert len("".join(event["choices"][0]["text"] for event in events).split()) == 12


@pytest.mark.parametrize(
    ("path", "body", "message"),
    [
        ("/generate", b"{not json", "not valid JSON"),
        (
            "/generate",
            b'{"text": "a", "sampling_params": {"max_new_tokens": -1}}',
            "'max_new_tokens' must be between",
        ),
        ("/generate", b'{"text": ["a", "b"]}', "batches are not simulated"),
        ("/v1/chat/completions", b'{"messages": []}', "'messages' must be a non-empty list"),
        (
            "/v1/completions",
            b'{"prompt": "a", "max_tokens": "many"}',
            "'max_tokens' must be an integer",
        ),
        ("/v1/chat/completions", b"[1, 2]", "must be a JSON object"),
    ],
)
def test_bad_requests_get_a_400_naming_the_field(
    client: httpx.Client, path: str, body: bytes, message: str
) -> None:
    answer = client.post(path, content=body, headers={"content-type": "application/json"})
    assert answer.status_code == 400
    assert message in answer.json()["message"]


def test_hostile_prompt_text_never_reaches_the_log(client: httpx.Client, sim: Sim) -> None:
    hostile = "\x1b]0;owned\x07 \x1b[2J [bold]markup[/bold] \r\n"
    answer = client.post(
        "/generate", json={"text": hostile, "sampling_params": {"max_new_tokens": 3}}
    )
    assert answer.status_code == 200
    text = sim.text()
    assert "owned" not in text
    assert "[bold]markup" not in text


def test_metrics_count_what_was_generated(client: httpx.Client, sim: Sim) -> None:
    before = _metrics(client)
    body = {"text": "go", "sampling_params": {"max_new_tokens": 300}}
    meta = client.post("/generate", json=body).json()["meta_info"]
    after = _metrics(client)
    assert after["sglang:generation_tokens_total"] - before["sglang:generation_tokens_total"] == 300
    verify = after["sglang:spec_verify_calls_total"] - before["sglang:spec_verify_calls_total"]
    assert verify == meta["spec_verify_ct"]
    assert after["sglang:num_requests_total"] - before["sglang:num_requests_total"] >= 1
    assert 1.0 <= after["sglang:spec_accept_length"] <= 4.0
    assert "accept len: " in sim.wait_for("Decode batch, #running-req: ")
    state = client.get("/server_info").json()["internal_states"][0]
    assert state["avg_spec_accept_length"] == pytest.approx(2.5, rel=0.05)


def _metrics(client: httpx.Client) -> dict[str, float]:
    values: dict[str, float] = {}
    for line in client.get("/metrics").text.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            values[name.split("{")[0]] = float(value)
    return values


def test_unknown_paths_are_404(client: httpx.Client) -> None:
    assert client.get("/nope").status_code == 404
    assert client.get("/health").status_code == 200


@pytest.mark.parametrize(
    ("engine", "ready", "path", "body"),
    [
        ("sglang", READY, "/generate", {"text": "hi", "sampling_params": {"max_new_tokens": 1}}),
        ("vllm", "Application startup complete.", "/v1/completions",
         {"model": "Qwen/Qwen3-8B", "prompt": "hi", "max_tokens": 1}),
    ],
)  # fmt: skip
def test_health_answers_503_for_n_requests_once_a_generation_was_served(
    start_sim: SimFactory, engine: str, ready: str, path: str, body: dict[str, Any]
) -> None:
    server = start_sim(["--engine", engine, "--time-scale", FAST, "--health-503", "2"])
    server.wait_for(ready)
    with httpx.Client(base_url=server.url, timeout=30) as http:
        before = [http.get("/health").status_code for _ in range(2)]
        assert http.post(path, json=body).status_code == 200
        after = [http.get("/health").status_code for _ in range(4)]
    assert (before, after) == ([200, 200], [503, 503, 200, 200])
