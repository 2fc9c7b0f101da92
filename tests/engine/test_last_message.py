"""A rank's last message: its last line without the envelope."""

from __future__ import annotations

import pytest

from tui.engine.startup.rank_stages import message_of


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("[2025-10-01 12:00:01 TP3] Load weight begin. avail mem=70.1 GB",
         "Load weight begin. avail mem=70.1 GB"),
        ("[2025-10-01 12:00:01.123 DP1 TP5 EP5] Capture cuda graph begin.",
         "Capture cuda graph begin."),
        ("(VllmWorker TP1 pid=123) INFO 10-01 12:00:01 [gpu_model_runner.py:1234] Loading model",
         "Loading model"),
        ("INFO 10-01 12:00:01 [api_server.py:9] Starting vLLM API server",
         "Starting vLLM API server"),
        ("(EngineCore_DP0 pid=7) plain words", "plain words"),
        ("Loading safetensors checkpoint shards:  50% 1/2",
         "Loading safetensors checkpoint shards:  50% 1/2"),
        ("[not an envelope] text", "[not an envelope] text"),
        ("", ""),
    ],
)  # fmt: skip
def test_the_envelope_is_removed(line: str, message: str) -> None:
    assert message_of(line) == message
