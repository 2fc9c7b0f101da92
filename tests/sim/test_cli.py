"""The simulator's command line: a real server's flags, abbreviations and unknown flags."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import REPO
from tui.sim.sim_cli import build_parser, parse, split_extras


def test_sglang_flags_and_abbreviations_resolve() -> None:
    config = parse(
        [
            "--model",
            "moonshotai/Kimi-K2.5",
            "--tp",
            "8",
            "--dp",
            "2",
            "--ep",
            "8",
            "--enable-dp-attention",
            "--speculative-algorithm",
            "eagle3",
            "--speculative-draft-model-path",
            "d/e3",
            "--speculative-num-steps",
            "3",
            "--speculative-eagle-topk",
            "1",
            "--speculative-num-draft-tokens",
            "4",
            "--enable-metrics",
            "--log-level",
            "warning",
            "--mem-fraction-static",
            "0.8",
        ]
    )
    assert (config.model_path, config.tp_size, config.dp_size, config.ep_size) == (
        "moonshotai/Kimi-K2.5",
        8,
        2,
        8,
    )
    assert config.speculative_algorithm == "EAGLE3"
    assert config.max_accept == 4
    assert config.max_running == 48
    assert config.enable_metrics
    assert config.log_level == "warning"
    assert config.port == 30000


def test_unknown_flags_are_kept_in_order_with_their_values() -> None:
    config = parse(
        [
            "--trust-remote-code",
            "--attention-backend",
            "fa3",
            "--cuda-graph-max-bs",
            "16",
            "--uvicorn-access-log-exclude-prefixes",
            "/health",
            "/metrics",
            "--chat-template=x.jinja",
        ]
    )
    assert config.extra_args == (
        ("trust_remote_code", True),
        ("attention_backend", "fa3"),
        ("cuda_graph_max_bs", 16),
        ("uvicorn_access_log_exclude_prefixes", ("/health", "/metrics")),
        ("chat_template", "x.jinja"),
    )


def test_vllm_positional_model_and_speculative_config() -> None:
    config = parse(
        [
            "--engine",
            "vllm",
            "serve",
            "Qwen/Qwen3-8B",
            "-tp",
            "2",
            "--speculative-config",
            '{"method": "eagle3", "model": "d/e3", "num_speculative_tokens": 3}',
        ]
    )
    assert config.model_path == "Qwen/Qwen3-8B"
    assert config.tp_size == 2
    assert config.port == 8000
    assert config.speculative_algorithm == "EAGLE3"
    assert config.speculative_draft_model_path == "d/e3"
    assert config.max_accept == 4


def test_split_extras_keeps_negative_numbers_as_values() -> None:
    positionals, extras = split_extras(["serve", "m", "--offset", "-1", "--flag"])
    assert positionals == ["serve", "m"]
    assert extras == [("offset", -1), ("flag", True)]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--tp", "0"], "--tp-size must be at least 1"),
        (["--time-scale", "0"], "--time-scale must be greater than 0"),
        (["--tp", "8", "--nnodes", "3"], "cannot be split evenly over --nnodes 3"),
        (["--nnodes", "2", "--node-rank", "2", "--tp", "2"], "--node-rank 2 must be below"),
        (["--speculative-algorithm", "EAGLE", "--accept-len", "9"], "--accept-len 9.0"),
        (["--engine", "vllm", "--speculative-config", "{nope"], "not valid JSON"),
        (["--engine", "vllm", "--scenario", "health-lies"], "simulated for SGLang only"),
        (["--tp", "4", "--fail-rank", "4"], "--fail-rank 4 is not a rank of this node (0..3)"),
    ],
)
def test_invalid_settings_name_the_flag(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        parse(argv)
    assert exited.value.code == 2
    assert message in capsys.readouterr().err


def test_help_documents_every_flag() -> None:
    text = build_parser().format_help()
    for flag in (
        "--model-path",
        "--served-model-name",
        "--tp-size",
        "--dp-size",
        "--ep-size",
        "--host",
        "--port",
        "--speculative-algorithm",
        "--speculative-draft-model-path",
        "--speculative-num-steps",
        "--speculative-eagle-topk",
        "--speculative-num-draft-tokens",
        "--enable-metrics",
        "--log-level",
        "--mem-fraction-static",
        "--nnodes",
        "--node-rank",
        "--dist-init-addr",
        "--base-gpu-id",
        "--time-scale",
        "--seed",
        "--decode-tok-s",
        "--ttft-ms",
        "--accept-len",
        "--max-running",
        "--scenario",
        "--engine",
        "--pid-file",
        "--log-file",
        "--speculative-config",
        "--tp",
        "--dp",
        "--ep",
    ):
        assert flag in text, flag
    for scenario in ("oom-kv-cache", "nccl-timeout", "cuda-graph-hang", "health-lies"):
        assert scenario in text


def test_bringup_sim_help_passes_through() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "tui", "sim", "--help"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0
    assert result.stdout.startswith("usage: bringup sim")
    assert "--decode-tok-s" in result.stdout
