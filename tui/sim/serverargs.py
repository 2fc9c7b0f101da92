"""The resolved arguments a server prints at launch and returns from ``/server_info``."""

from __future__ import annotations

from typing import Any

from tui.sim.config import ExtraValue, SimConfig


def sglang_server_args(config: SimConfig) -> dict[str, Any]:
    """SGLang's ``server_args`` dict (0.5.20+ prints it as a dict), unknown flags included."""
    spec = config.speculative
    args: dict[str, Any] = {
        "model_path": config.model_path,
        "tokenizer_path": config.model_path,
        "tokenizer_mode": "auto",
        "skip_tokenizer_init": False,
        "load_format": "auto",
        "trust_remote_code": False,
        "context_length": None,
        "is_embedding": False,
        "revision": None,
        "host": config.host,
        "port": config.port,
        "skip_server_warmup": False,
        "dtype": "auto",
        "quantization": None,
        "kv_cache_dtype": "auto",
        "mem_fraction_static": config.mem_fraction_static,
        "max_running_requests": config.max_running,
        "max_total_tokens": None,
        "chunked_prefill_size": 8192,
        "max_prefill_tokens": 16384,
        "schedule_policy": "fcfs",
        "device": "cuda",
        "tp_size": config.tp_size,
        "pp_size": 1,
        "dp_size": config.dp_size,
        "ep_size": config.ep_size,
        "enable_dp_attention": config.enable_dp_attention,
        "random_seed": config.seed,
        "watchdog_timeout": config.watchdog_timeout,
        "dist_timeout": config.dist_timeout,
        "base_gpu_id": config.base_gpu_id,
        "log_level": config.log_level,
        "log_level_http": None,
        "enable_metrics": config.enable_metrics,
        "decode_log_interval": 40,
        "served_model_name": config.model_name,
        "attention_backend": "fa3",
        "speculative_algorithm": config.speculative_algorithm,
        "speculative_draft_model_path": config.speculative_draft_model_path,
        "speculative_num_steps": config.speculative_num_steps if spec else None,
        "speculative_eagle_topk": config.speculative_eagle_topk if spec else None,
        "speculative_num_draft_tokens": config.speculative_num_draft_tokens if spec else None,
        "dist_init_addr": config.dist_init_addr,
        "nnodes": config.nnodes,
        "node_rank": config.node_rank,
    }
    return _with_extras(args, config)


def vllm_non_default_args(config: SimConfig) -> dict[str, Any]:
    """vLLM's ``non-default args`` dict: only what the command line changed."""
    args: dict[str, Any] = {"model_tag": config.model_path, "model": config.model_path}
    if config.host != "127.0.0.1":
        args["host"] = config.host
    if config.port != 8000:
        args["port"] = config.port
    if config.served_model_name:
        args["served_model_name"] = [config.served_model_name]
    if config.tp_size > 1:
        args["tensor_parallel_size"] = config.tp_size
    if config.dp_size > 1:
        args["data_parallel_size"] = config.dp_size
    if config.ep_size > 1:
        args["enable_expert_parallel"] = True
    if config.speculative:
        args["speculative_config"] = vllm_speculative_config(config)
    return _with_extras(args, config)


def vllm_speculative_config(config: SimConfig) -> dict[str, Any]:
    """The ``--speculative-config`` object as vLLM echoes it."""
    method = (config.speculative_algorithm or "").lower()
    steps = config.speculative_num_steps
    spec: dict[str, Any] = {"method": method, "num_speculative_tokens": steps}
    if config.speculative_draft_model_path:
        spec["model"] = config.speculative_draft_model_path
    return spec


def has_extra(config: SimConfig, name: str) -> bool:
    """Whether the command line carried a flag the simulator does not model."""
    return any(key == name for key, _ in config.extra_args)


def _with_extras(args: dict[str, Any], config: SimConfig) -> dict[str, Any]:
    for key, value in config.extra_args:
        args[key] = _shown(value)
    return args


def _shown(value: ExtraValue) -> Any:
    return list(value) if isinstance(value, tuple) else value
