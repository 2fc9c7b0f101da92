"""Command line of the simulated server: a real server's flags plus the simulation's own.

The parser accepts what ``sglang serve`` (or ``python -m sglang.launch_server``) and
``vllm serve MODEL`` accept. Flags it does not know are kept and echoed into the
``server_args=`` line, as a real server prints its resolved arguments. This module imports
only the standard library so that ``--help`` and the first log line come fast.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from typing import TypeAlias

from tui.sim.config import (
    DEFAULT_PORTS,
    ENGINES,
    SCENARIOS,
    SGLANG_ENGINE,
    ExtraArg,
    ExtraValue,
    SimConfig,
    validate,
)

DESCRIPTION = (
    "Run one simulated SGLang (or vLLM) server in the foreground: it starts, logs, answers "
    "HTTP and fails like the real one, without a GPU. Flags the simulator does not know are "
    "accepted and echoed into the server_args= line."
)
EPILOG = (
    "Start-up stages are paced by --time-scale (1.0 takes about ten minutes); token "
    "generation is paced in real time by --decode-tok-s, --ttft-ms and --accept-len."
)


def build_parser(prog: str = "python -m tui.sim") -> argparse.ArgumentParser:
    """The argument parser, with every flag documented for ``--help``."""
    parser = argparse.ArgumentParser(prog=prog, description=DESCRIPTION, epilog=EPILOG)
    _add_model_flags(parser.add_argument_group("model and serving (as sglang serve)"))
    _add_parallel_flags(parser.add_argument_group("parallelism and nodes"))
    _add_spec_flags(parser.add_argument_group("speculative decoding"))
    _add_sim_flags(parser.add_argument_group("simulation"))
    return parser


def _add_model_flags(group: argparse._ArgumentGroup) -> None:
    group.add_argument(
        "--model-path",
        "--model",
        dest="model_path",
        metavar="PATH",
        help="model id or directory (default: Qwen/Qwen3-8B); vLLM also "
        "takes it as the first positional argument",
    )
    group.add_argument(
        "--served-model-name",
        metavar="NAME",
        help="model name reported by /v1/models (default: the model path)",
    )
    group.add_argument("--host", default="127.0.0.1", help="address to listen on")
    group.add_argument(
        "--api-key",
        metavar="KEY",
        help="require 'Authorization: Bearer KEY' (401 otherwise), as both engines do",
    )
    group.add_argument(
        "--port", type=int, metavar="N", help="HTTP port (default: 30000 for SGLang, 8000 for vLLM)"
    )
    group.add_argument(
        "--enable-metrics",
        action="store_true",
        help="serve Prometheus text on /metrics (always on for vLLM)",
    )
    group.add_argument(
        "--log-level",
        default="info",
        choices=("debug", "info", "warning", "error", "critical"),
        help="lowest level of log lines printed (default: info)",
    )
    group.add_argument(
        "--mem-fraction-static",
        "--gpu-memory-utilization",
        type=float,
        default=0.88,
        metavar="F",
        help="fraction of GPU memory for weights and KV cache (default: 0.88)",
    )
    group.add_argument(
        "--max-running",
        "--max-running-requests",
        "--max-num-seqs",
        dest="max_running",
        type=int,
        metavar="N",
        help="requests decoded at once; more wait in the queue "
        "(default: 48 with speculative decoding, else 256)",
    )
    group.add_argument(
        "--watchdog-timeout",
        type=float,
        default=300.0,
        metavar="S",
        help="seconds before a stuck scheduler's watchdog fires (default: 300)",
    )
    group.add_argument(
        "--dist-timeout",
        type=float,
        metavar="S",
        help="seconds before a stuck NCCL collective times out (default: 600)",
    )


def _add_parallel_flags(group: argparse._ArgumentGroup) -> None:
    group.add_argument(
        "--tp-size",
        "--tp",
        "--tensor-parallel-size",
        "-tp",
        dest="tp_size",
        type=int,
        default=1,
        metavar="N",
        help="tensor-parallel size",
    )
    group.add_argument(
        "--dp-size",
        "--dp",
        "--data-parallel-size",
        "-dp",
        dest="dp_size",
        type=int,
        default=1,
        metavar="N",
        help="data-parallel size",
    )
    group.add_argument(
        "--ep-size",
        "--ep",
        "--expert-parallel-size",
        dest="ep_size",
        type=int,
        default=1,
        metavar="N",
        help="expert-parallel size",
    )
    group.add_argument(
        "--enable-dp-attention",
        action="store_true",
        help="data-parallel attention inside the TP group (tags DPk TPk EPk)",
    )
    group.add_argument(
        "--enable-expert-parallel",
        action="store_true",
        help="vLLM: expert parallelism over the TP ranks",
    )
    group.add_argument("--nnodes", type=int, default=1, metavar="N", help="number of nodes")
    group.add_argument(
        "--node-rank",
        type=int,
        default=0,
        metavar="K",
        help="this node's rank; nodes above 0 only answer a dummy /health",
    )
    group.add_argument(
        "--dist-init-addr",
        "--nccl-init-addr",
        metavar="HOST:PORT",
        help="rendezvous address of node 0 (echoed only)",
    )
    group.add_argument(
        "--base-gpu-id", type=int, default=0, metavar="N", help="first GPU index used on this node"
    )


def _add_spec_flags(group: argparse._ArgumentGroup) -> None:
    group.add_argument(
        "--speculative-algorithm",
        metavar="NAME",
        help="EAGLE, EAGLE3, NEXTN, STANDALONE, ... (enables accept lengths)",
    )
    group.add_argument(
        "--speculative-draft-model-path",
        metavar="PATH",
        help="draft model (its load and graph capture are logged)",
    )
    group.add_argument(
        "--speculative-num-steps", type=int, metavar="N", help="draft steps per verify (default: 3)"
    )
    group.add_argument(
        "--speculative-eagle-topk",
        type=int,
        metavar="N",
        help="draft branching factor (default: 1)",
    )
    group.add_argument(
        "--speculative-num-draft-tokens",
        type=int,
        metavar="N",
        help="tokens verified per step, the most one step can yield (default: steps + 1)",
    )
    group.add_argument(
        "--speculative-config",
        metavar="JSON",
        help='vLLM: e.g. \'{"method": "eagle3", "model": "...", "num_speculative_tokens": 3}\'',
    )


def _add_sim_flags(group: argparse._ArgumentGroup) -> None:
    group.add_argument(
        "--engine",
        choices=ENGINES,
        default=SGLANG_ENGINE,
        help="which server to imitate (default: sglang)",
    )
    group.add_argument(
        "--scenario",
        choices=SCENARIOS,
        default="ok",
        help="how the start goes: ok, or one of the failures",
    )
    group.add_argument(
        "--collapse-after",
        type=float,
        default=60.0,
        metavar="S",
        help="--scenario accept-collapse: seconds after the first request when the accept "
        "length falls to 1.0 (default: 60)",
    )
    group.add_argument(
        "--fail-rank",
        type=int,
        metavar="K",
        help="local index of the rank that fails or lags (default: chosen by --seed, never rank 0)",
    )
    group.add_argument(
        "--time-scale",
        type=float,
        default=1.0,
        metavar="F",
        help="multiplier on start-up durations; 1.0 is real pacing (about "
        "ten minutes), 0.05 starts in about 30 s (default: 1.0)",
    )
    group.add_argument(
        "--seed",
        type=int,
        default=0,
        metavar="N",
        help="seed of every random choice, for reproducible runs (default: 0)",
    )
    group.add_argument(
        "--decode-tok-s",
        type=float,
        default=60.0,
        metavar="F",
        help="decode speed of each request in tokens/s (default: 60)",
    )
    group.add_argument(
        "--ttft-ms",
        type=float,
        default=150.0,
        metavar="F",
        help="time to first token once a request is admitted (default: 150)",
    )
    group.add_argument(
        "--accept-len",
        type=float,
        default=2.5,
        metavar="F",
        help="mean tokens per verify step when speculative (default: 2.5)",
    )
    group.add_argument(
        "--answer-len",
        type=int,
        default=0,
        metavar="N",
        help="tokens before a request's end-of-sequence unless it sets ignore_eos; "
        "0 lets every request run to its max_tokens (default: 0)",
    )
    group.add_argument(
        "--health-503",
        type=int,
        default=0,
        metavar="N",
        help="once a generation was served, answer the next N /health requests 503, as SGLang "
        "does while a long prefill holds its scheduler (default: 0)",
    )
    group.add_argument("--pid-file", metavar="PATH", help="write the server's pid here")
    group.add_argument("--log-file", metavar="PATH", help="append the log here instead of stderr")
    group.add_argument(
        "--state-file",
        metavar="PATH",
        help="per-GPU state read by python -m tui.sim.nvidia_smi "
        "(default: $BRINGUP_SIM_STATE or a per-user temporary file)",
    )


def parse(argv: Sequence[str], prog: str = "python -m tui.sim") -> SimConfig:
    """Parse a server command line; exits with status 2 and a clear message when invalid."""
    parser = build_parser(prog)
    namespace, rest = parser.parse_known_args(list(argv))
    positionals, extras = split_extras(rest)
    try:
        config = _to_config(namespace, positionals, extras, tuple(argv))
    except ValueError as exc:
        parser.error(str(exc))
    problems = validate(config)
    if problems:
        parser.error("; ".join(problems))
    return config


def split_extras(rest: Sequence[str]) -> tuple[list[str], list[ExtraArg]]:
    """Split what argparse did not know into leading positionals and unknown flags."""
    positionals: list[str] = []
    extras: list[ExtraArg] = []
    values: list[str] = []
    name: str | None = None
    for token in rest:
        if token.startswith("-") and len(token) > 1 and not _is_number(token):
            if name is not None:
                extras.append((name, _extra_value(values)))
            name, _, inline = token.lstrip("-").partition("=")
            name = name.replace("-", "_")
            values = [inline] if inline else []
        elif name is None:
            positionals.append(token)
        else:
            values.append(token)
    if name is not None:
        extras.append((name, _extra_value(values)))
    return positionals, extras


def _is_number(token: str) -> bool:
    try:
        float(token)
    except ValueError:
        return False
    return True


def _extra_value(values: list[str]) -> ExtraValue:
    if not values:
        return True
    if len(values) > 1:
        return tuple(values)
    text = values[0]
    if text.lstrip("-").isdigit():
        return int(text)
    return float(text) if _is_number(text) else text


def _to_config(
    ns: argparse.Namespace, positionals: list[str], extras: list[ExtraArg], argv: tuple[str, ...]
) -> SimConfig:
    model = ns.model_path or _positional_model(positionals) or "Qwen/Qwen3-8B"
    spec = _speculative(ns)
    tp = ns.tp_size
    return SimConfig(
        engine=ns.engine,
        model_path=model,
        served_model_name=ns.served_model_name,
        tp_size=tp,
        dp_size=ns.dp_size,
        ep_size=tp if ns.enable_expert_parallel else ns.ep_size,
        enable_dp_attention=ns.enable_dp_attention,
        nnodes=ns.nnodes,
        node_rank=ns.node_rank,
        dist_init_addr=ns.dist_init_addr,
        base_gpu_id=ns.base_gpu_id,
        host=ns.host,
        port=DEFAULT_PORTS[ns.engine] if ns.port is None else ns.port,
        speculative_algorithm=spec[0],
        speculative_draft_model_path=spec[1],
        speculative_num_steps=spec[2],
        speculative_eagle_topk=spec[3],
        speculative_num_draft_tokens=spec[4],
        enable_metrics=ns.enable_metrics,
        log_level=ns.log_level,
        mem_fraction_static=ns.mem_fraction_static,
        watchdog_timeout=ns.watchdog_timeout,
        dist_timeout=ns.dist_timeout,
        max_running=ns.max_running or (48 if spec[0] else 256),
        time_scale=ns.time_scale,
        seed=ns.seed,
        decode_tok_s=ns.decode_tok_s,
        ttft_ms=ns.ttft_ms,
        accept_len=ns.accept_len,
        answer_len=ns.answer_len,
        health_503=ns.health_503,
        api_key=ns.api_key,
        scenario=ns.scenario,
        collapse_after=ns.collapse_after,
        fail_rank=ns.fail_rank,
        pid_file=ns.pid_file,
        log_file=ns.log_file,
        state_file=ns.state_file,
        extra_args=tuple(extras),
        argv=argv,
    )


def _positional_model(positionals: list[str]) -> str | None:
    words = [word for word in positionals if word != "serve"]
    if len(words) > 1:
        raise ValueError(f"unexpected arguments: {' '.join(words[1:])}")
    return words[0] if words else None


Speculative: TypeAlias = tuple[str | None, str | None, int, int, int]


def _speculative(ns: argparse.Namespace) -> Speculative:
    algorithm: str | None = ns.speculative_algorithm
    draft: str | None = ns.speculative_draft_model_path
    steps: int | None = ns.speculative_num_steps
    if ns.speculative_config is not None:
        method, draft_json, steps_json = _vllm_spec_config(ns.speculative_config)
        algorithm = algorithm or method
        draft = draft or draft_json
        steps = steps or steps_json
    steps = steps or 3
    topk = ns.speculative_eagle_topk or 1
    tokens = ns.speculative_num_draft_tokens or steps + 1
    return (algorithm.upper() if algorithm else None), draft, steps, topk, tokens


def _vllm_spec_config(text: str) -> tuple[str, str | None, int | None]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"--speculative-config is not valid JSON: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("method"), str):
        raise ValueError('--speculative-config needs a JSON object with a "method" string')
    model = data.get("model")
    steps = data.get("num_speculative_tokens")
    if model is not None and not isinstance(model, str):
        raise ValueError('--speculative-config "model" must be a string')
    if steps is not None and (not isinstance(steps, int) or steps < 1):
        raise ValueError('--speculative-config "num_speculative_tokens" must be a positive int')
    return data["method"], model, steps
