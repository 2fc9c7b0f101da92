"""Reading streamed chunks, server counters and prompt sources."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tui.data.prompts import PromptFileError, builtin_prompts, load_prompts, workload_prompts
from tui.engine.bench.bench_stream import (
    StreamReader,
    accept_length_between,
    request_body,
    server_accept_length,
    spec_counters,
)


def test_native_chunks_count_the_difference_of_completion_tokens() -> None:
    reader = StreamReader("generate")
    meta: list[dict[str, float]] = [
        {"completion_tokens": n, "prompt_tokens": 7, "spec_verify_ct": v}
        for n, v in [(1, 1), (4, 2), (4, 2), (6, 3)]
    ]
    meta[-1]["e2e_latency"] = 0.5
    assert [reader.feed({"text": "x", "meta_info": m}) for m in meta] == [1, 3, 0, 2]
    assert (reader.server_tokens, reader.prompt_tokens, reader.spec_verify_ct) == (6, 7, 3)
    assert reader.server_latency == 0.5


def test_openai_chunks_use_usage_when_streamed_with_every_chunk() -> None:
    reader = StreamReader("completions")
    events = [
        {"choices": [{"text": "a"}], "usage": {"completion_tokens": 1}},
        {"choices": [{"text": "bcd"}], "usage": {"completion_tokens": 4}},
        {"choices": [], "usage": {"completion_tokens": 4, "prompt_tokens": 9}},
    ]
    assert [reader.feed(event) for event in events] == [1, 3, 0]
    assert (reader.server_tokens, reader.prompt_tokens) == (4, 9)


def test_chat_chunks_without_usage_count_one_each() -> None:
    reader = StreamReader("chat")
    events = [
        {"choices": [{"delta": {"role": "assistant", "content": ""}}]},
        {"choices": [{"delta": {"content": "hi"}}]},
        {"choices": [{"delta": {"reasoning_content": "hmm"}}]},
        {"choices": [], "usage": {"completion_tokens": 5}},
    ]
    assert [reader.feed(event) for event in events] == [0, 1, 1, 0]
    assert reader.server_tokens == 5


def test_error_events_are_kept() -> None:
    reader = StreamReader("generate")
    assert reader.feed({"error": {"message": "out of memory"}}) == 0
    assert reader.error == "out of memory"


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(
        ["text", "meta_info", "completion_tokens", "choices", "delta", "content", "usage",
         "error", "message", "spec_verify_ct", "prompt_tokens", "internal_states",
         "avg_spec_accept_length"]), inner, max_size=4),
    max_leaves=12,
)  # fmt: skip


@given(st.lists(_JSON, max_size=6), st.sampled_from(["generate", "completions", "chat"]))
def test_any_payload_shape_is_survived(events: list[object], endpoint: str) -> None:
    reader = StreamReader(endpoint)
    for event in events:
        assert reader.feed(event) >= 0
    server_accept_length(events[0] if events else None)


def test_request_bodies() -> None:
    native = request_body("generate", "p", 16, True, "m")
    assert native["sampling_params"] == {"max_new_tokens": 16, "temperature": 0.0,
                                         "ignore_eos": True}  # fmt: skip
    chat = request_body("chat", "p", 16, False, "m")
    assert chat["messages"] == [{"role": "user", "content": "p"}]
    assert chat["stream_options"]["include_usage"] is True
    assert request_body("completions", "p", 16, False, "m")["prompt"] == "p"


def test_server_counters() -> None:
    text = (
        "# HELP vllm:spec_decode_num_drafts_total drafts\n"
        'vllm:spec_decode_num_drafts_total{engine="0"} 10.0\n'
        'vllm:spec_decode_num_drafts_total{engine="1"} 30.0\n'
        "vllm:spec_decode_num_accepted_tokens_total 50\n"
        'vllm:spec_decode_num_accepted_tokens_per_pos_total{position="0"} 999\n'
        "vllm:spec_decode_num_drafts_total{broken} nan-ish\n"
    )
    before = spec_counters(text)
    assert before == {"drafts": 40.0, "accepted": 50.0}
    after = {"drafts": 60.0, "accepted": 90.0}
    assert accept_length_between(before, after) == 3.0
    assert accept_length_between(before, before) is None
    assert server_accept_length({"internal_states": [{"avg_spec_accept_length": 2.5}]}) == 2.5
    assert server_accept_length({"internal_states": [{}]}) is None


def test_builtin_prompts_are_shaped_and_deterministic() -> None:
    assert len(builtin_prompts()) >= 20
    first = workload_prompts(5, 64, seed=3)
    assert first == workload_prompts(5, 64, seed=3)
    assert first != workload_prompts(5, 64, seed=4)
    assert all(len(prompt.split()) == 64 for prompt in first)
    assert all(len(prompt.split()) == 4 for prompt in workload_prompts(3, 4, seed=0))


def test_user_prompt_files(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text('{"prompt": "one"}\n\n{"prompt": "two"}\n')
    assert load_prompts(path) == ["one", "two"]
    assert set(workload_prompts(4, 999, seed=0, source=path)) <= {"one", "two"}
    path.write_text('{"prompt": "one"}\n{"text": 2}\n')
    with pytest.raises(PromptFileError, match=r"p\.jsonl:2: expected an object"):
        load_prompts(path)
    path.write_text("not json\n")
    with pytest.raises(PromptFileError, match=r"p\.jsonl:1: not a JSON object"):
        load_prompts(path)
    with pytest.raises(PromptFileError, match="cannot read"):
        load_prompts(tmp_path / "missing.jsonl")
