"""Builds the configuration dataclasses from parsed TOML, validating every value.

Every problem is reported to the file's ``Source`` and checking goes on with the default in its
place, so one run names every mistake; ``build_config`` raises them together at the end.
"""

from __future__ import annotations

import re
import shlex
from functools import partial
from pathlib import Path
from types import MappingProxyType

from tui.config.binding_ids import BINDING_DEFAULTS
from tui.config.config_model import (
    BENCH_MODES,
    ENDPOINTS,
    HOST_KEY_POLICIES,
    IDLE_SCRAPE_SECONDS,
    KERNEL_LOG_COMMANDS,
    LAUNCH_PLACEHOLDERS,
    LOG_PLACEHOLDERS,
    NOTIFY_MODES,
    BenchConfig,
    Config,
    LaunchConfig,
    MonitorConfig,
    Profile,
    ServingConfig,
    StallConfig,
    template_fields,
)
from tui.config.config_slurm import SCHEDULERS, build_slurm
from tui.config.config_text import QUOTE_LIMIT
from tui.config.ssh_targets import parse_ssh_target
from tui.config.table_reader import Table, did_you_mean
from tui.engine.judge.degraded import DEFAULT_HEALTH_GRACE
from tui.engine.logs.sanitize import printable
from tui.engine.metrics.alarms import AlarmThresholds
from tui.engine.servers import registry

_PROFILE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_KEY_SPEC = re.compile(r"[^\s,]+(?:,[^\s,]+)*")
_BIG = 1 << 31
REMOVED_KEYS = {
    "history_dir": "no longer read: run history and benchmark results are one file in data_dir",
}
"""Top-level keys that older versions documented, with what to do instead."""


def _template(table: Table, key: str, value: str, allowed: frozenset[str], *index: int) -> str:
    try:
        names = template_fields(value)
    except ValueError as exc:
        raise table.error(key, printable(str(exc), QUOTE_LIMIT), *index) from None
    unknown = sorted(set(names) - allowed)
    if unknown:
        known = ", ".join("{" + name + "}" for name in sorted(allowed))
        problem = f"unknown placeholder {{{printable(unknown[0], QUOTE_LIMIT)}}} (known: {known})"
        raise table.error(key, problem, *index)
    return value


def build_config(root: Table, base: Path) -> Config:
    """The whole file; ``base`` is the folder that relative local paths start from."""
    config = Config(
        path=Path(str(root.source.file)),
        theme=root.text("theme", None),
        default_profile=root.text("default_profile", None),
        keys=_keys(root.table("keys")),
        notify=root.choice("notify", NOTIFY_MODES, "auto"),
        data_dir=root.path_value("data_dir", base),
        profiles=_profiles(root.table("profiles"), base),
    )
    for key, advice in REMOVED_KEYS.items():
        if root.has(key):
            root.report(root.error(key, advice))
    root.finish()
    if config.default_profile is not None and config.default_profile not in config.profiles:
        known = ", ".join(sorted(config.profiles)) or "none configured"
        problem = f"no such profile{did_you_mean(config.default_profile, config.profiles)}"
        root.report(root.error("default_profile", f"{problem} (available profiles: {known})"))
    root.source.raise_errors()
    return config


def _keys(table: Table) -> MappingProxyType[str, str]:
    """``[keys]``: binding id to key names; an id that no binding has is an error."""
    keys: dict[str, str] = {}
    for binding in table.names():
        value = table.text(binding, None)
        if binding not in BINDING_DEFAULTS:
            hint = did_you_mean(binding, BINDING_DEFAULTS) or " (see the help screen, '?')"
            table.report(table.error(binding, f"no binding has this id{hint}"))
        elif value is not None and not _KEY_SPEC.fullmatch(value):
            problem = "expected key names separated by commas, like 'r,ctrl+r'"
            table.report(table.error(binding, problem))
        elif value is not None:
            keys[binding] = value
    return MappingProxyType(keys)


def _profiles(table: Table, base: Path) -> MappingProxyType[str, Profile]:
    profiles: dict[str, Profile] = {}
    for name in table.names():
        if not _PROFILE_NAME.fullmatch(name):
            problem = "profile names use letters, digits, '_', '.', '-' (max 64)"
            table.report(table.error(name, problem))
            table.has(name)
            continue
        profiles[name] = _profile(name, table.table(name), base)
    return MappingProxyType(profiles)


def _profile(name: str, table: Table, base: Path) -> Profile:
    profile = Profile(
        name=name,
        engine=table.choice("engine", registry.choices(), registry.AUTO),
        hosts=table.guard((), _hosts, table),
        log=table.guard(None, _optional_template, table, "log", LOG_PLACEHOLDERS),
        logs=table.guard((), _logs, table),
        log_dir=table.text("log_dir", None),
        port=table.integer("port", None, 1, 65535),
        host_key_policy=table.choice("host_key_policy", HOST_KEY_POLICIES, "strict"),
        ssh_config=table.path_value("ssh_config", base),
        known_hosts=table.path_value("known_hosts", base),
        expected_startup=table.duration("expected_startup", 600.0, positive=True),
        read_only=table.flag("read_only", False),
        nvidia_smi=table.guard(("nvidia-smi",), _nvidia_smi, table),
        kernel_log=table.guard(KERNEL_LOG_COMMANDS, _kernel_log, table),
        launch=_launch(table.table("launch")),
        bench=_bench(table.table("bench"), base),
        stall=_stall(table.table("stall")),
        serving=_serving(table.table("serving")),
        monitor=_monitor(table.table("monitor")),
        api_key_env=table.text("api_key_env", None),
        scheduler=table.choice("scheduler", SCHEDULERS, "ssh"),
        slurm=build_slurm(table.table("slurm")),
    )
    table.finish()
    return profile


def _optional_template(table: Table, key: str, allowed: frozenset[str]) -> str | None:
    value = table.text(key, None)
    if value is None:
        return None
    if not value:
        raise table.error(key, "must not be empty")
    return _template(table, key, value, allowed)


def _logs(table: Table) -> tuple[str, ...]:
    """``logs``: one log path per host (node 0 first), instead of ``log``."""
    if not table.has("logs"):
        return ()
    if "log" in table.data:
        raise table.error("logs", "give either 'log' or 'logs', not both")

    def check(item: object, index: int) -> str:
        text = table.check_text("logs", item, index)
        if not text:
            raise table.error("logs", "must not be empty", index)
        return _template(table, "logs", text, LOG_PLACEHOLDERS, index)

    logs = tuple(table.items("logs", [], check))
    hosts = table.data.get("hosts", [table.data["host"]] if "host" in table.data else [])
    count = len(hosts) if isinstance(hosts, list) else 0
    if len(logs) != max(count, 1):
        wanted = f"{count} hosts" if count else "no hosts (this machine)"
        raise table.error("logs", f"lists {len(logs)} paths but the profile has {wanted}; "
                          "give one path per host, node 0 first")  # fmt: skip
    return logs


def _hosts(table: Table) -> tuple[str, ...]:
    if table.has("host") and table.has("hosts"):
        raise table.error("host", "give either 'host' or 'hosts', not both")
    if "host" in table.data:
        host = table.text("host", None)
        return () if host is None else (_target(table, "host", host),)

    def check(item: object, index: int) -> str:
        return _target(table, "hosts", table.check_text("hosts", item, index), index)

    return tuple(table.items("hosts", [], check))


def _target(table: Table, key: str, value: str, *index: int) -> str:
    try:
        parse_ssh_target(value)
    except ValueError as exc:
        raise table.error(key, printable(str(exc), QUOTE_LIMIT), *index) from None
    return value


def _launch(table: Table) -> LaunchConfig:
    env = table.table("env")
    launch = LaunchConfig(
        command=table.guard((), _command, table),
        env=MappingProxyType(_env(env)),
        cwd=table.text("cwd", None),
        conda_env=table.text("conda_env", None),
        venv=table.text("venv", None),
        grace_period=table.duration("grace_period", 30.0),
        model=table.text("model", None),
        drafter=table.text("drafter", None),
        tp=table.integer("tp", None, 1, 4096),
        dp=table.integer("dp", None, 1, 4096),
        ep=table.integer("ep", None, 1, 4096),
        pp=table.integer("pp", None, 1, 4096),
        dist_init_addr=table.text("dist_init_addr", None),
    )
    env.finish()
    table.finish()
    return launch


def _env(env: Table) -> dict[str, str]:
    values: dict[str, str] = {}
    for name in env.names():
        value = env.text(name, None)
        if not _ENV_NAME.fullmatch(name):
            problem = "not an environment variable name (letters, digits, '_')"
            env.report(env.error(name, problem))
        elif value is not None:
            values[name] = value
    return values


def _command(table: Table) -> tuple[str, ...]:
    value = table.data.get("command")
    if not table.has("command"):
        return ()
    if isinstance(value, str):
        text = _template(table, "command", table.check_text("command", value), LAUNCH_PLACEHOLDERS)
        try:
            parts = shlex.split(text)
        except ValueError as exc:
            raise table.error("command", f"cannot split into arguments: {exc}") from None
        if not parts:
            raise table.error("command", "must not be empty")
        return tuple(parts)

    def check(item: object, index: int) -> str:
        text = table.check_text("command", item, index)
        return _template(table, "command", text, LAUNCH_PLACEHOLDERS, index)

    if value == []:
        raise table.error("command", "must not be empty")
    return tuple(table.items("command", [], check))


def _kernel_log(table: Table) -> tuple[tuple[str, ...], ...]:
    """``kernel_log``: the commands to try in turn, each an argument list or one string split
    like a shell would."""
    if not table.has("kernel_log"):
        return KERNEL_LOG_COMMANDS
    if table.data.get("kernel_log") == []:
        raise table.error("kernel_log", "must name at least one command")
    commands = tuple(table.items("kernel_log", [], partial(_kernel_log_command, table)))
    return commands or KERNEL_LOG_COMMANDS  # every bad item was reported


def _kernel_log_command(table: Table, value: object, index: int) -> tuple[str, ...]:
    if isinstance(value, str):
        try:
            parts = shlex.split(table.check_text("kernel_log", value, index))
        except ValueError as exc:
            raise table.error("kernel_log", f"cannot split into arguments: {exc}", index) from None
    elif isinstance(value, list):
        parts = [table.check_text("kernel_log", part, index) for part in value]
    else:
        raise table.error("kernel_log", "expected a string or an array of strings", index)
    if not parts or not parts[0]:
        raise table.error("kernel_log", "must not be empty", index)
    return tuple(parts)


def _nvidia_smi(table: Table) -> tuple[str, ...]:
    """``nvidia_smi``: an argument list, or one string split like a shell would."""
    value = table.data.get("nvidia_smi")
    if not table.has("nvidia_smi"):
        return ("nvidia-smi",)
    if isinstance(value, str):
        try:
            parts = shlex.split(table.check_text("nvidia_smi", value))
        except ValueError as exc:
            raise table.error("nvidia_smi", f"cannot split into arguments: {exc}") from None
    else:
        parts = table.items("nvidia_smi", [], partial(table.check_text, "nvidia_smi"))
    if not value or (isinstance(value, str) and not parts):
        raise table.error("nvidia_smi", "must not be empty")
    if not parts:
        return ("nvidia-smi",)
    return tuple(parts)


def _bench(table: Table, base: Path) -> BenchConfig:
    bench = BenchConfig(
        mode=table.choice("mode", BENCH_MODES, "auto"),
        num_prompts=table.integer("num_prompts", None, 1, 1_000_000),
        input_len=table.integer("input_len", 256, 1, 10_000_000),
        output_len=table.integer("output_len", 256, 1, 10_000_000),
        concurrency=_concurrency(table),
        warmup_requests=table.integer("warmup_requests", 1, 0, 100_000),
        ignore_eos=table.flag("ignore_eos", True),
        seed=table.integer("seed", 0, 0, _BIG),
        prompts=_prompts(table, base),
        endpoint=_endpoint(table),
        official=table.flag("official", False),
        request_rate=_rates(table),
        burstiness=table.number("burstiness", 1.0, 0.01, 1000.0),
        max_concurrency=table.integer("max_concurrency", None, 1, 100_000),
        dataset=table.choice("dataset", DATASETS, "builtin"),
        dataset_path=table.path_value("dataset_path", base),
        trials=table.integer("trials", 1, 1, 1000),
        goodput=_goodput(table),
    )
    table.finish()
    return bench


DATASETS = ("builtin", "random", "sharegpt")
SLO_METRICS = ("ttft", "tpot", "e2el")


def _rates(table: Table) -> tuple[float, ...]:
    def check(item: object, index: int) -> float:
        if item == "inf":
            return float("inf")
        if isinstance(item, bool) or not isinstance(item, int | float) or not item > 0:
            raise table.error("request_rate", 'must be positive numbers or "inf"', index)
        return float(item)

    return tuple(table.items("request_rate", [], check))


def _goodput(table: Table) -> tuple[tuple[str, float], ...]:
    slo = table.table("goodput")
    found = tuple((name, slo.number(name, 0.0, 0.0, 1e9)) for name in SLO_METRICS if slo.has(name))
    slo.finish()
    return found


def _concurrency(table: Table) -> tuple[int, ...]:
    def check(item: object, index: int) -> int:
        return table.check_integer("concurrency", item, 1, 100_000, index)

    levels = table.items("concurrency", [1], check)
    if table.data.get("concurrency") == []:
        table.report(table.error("concurrency", "must list at least one level"))
    return tuple(levels or [1])


def _prompts(table: Table, base: Path) -> Path | None:
    if table.data.get("prompts") == "builtin":
        table.text("prompts", None)
        return None
    return table.path_value("prompts", base)


def _endpoint(table: Table) -> str | None:
    if not table.has("endpoint"):
        return None
    return table.choice("endpoint", ENDPOINTS, ENDPOINTS[0])


def _stall(table: Table) -> StallConfig:
    stall = StallConfig(
        factor=table.number("factor", 1.5, 1.0, 1000.0),
        floor=table.duration("floor", 60.0),
    )
    table.finish()
    return stall


def _serving(table: Table) -> ServingConfig:
    default = AlarmThresholds()
    interval = table.guard(2.0, _interval, table)
    serving = ServingConfig(
        metrics=table.flag("metrics", True),
        interval=interval,
        idle_interval=table.guard(
            max(IDLE_SCRAPE_SECONDS, interval), _idle_interval, table, interval
        ),
        alarms=AlarmThresholds(
            accept_floor=table.number("accept_floor", default.accept_floor, 0.0, 1000.0),
            accept_drop=table.number("accept_drop", default.accept_drop, 0.0, 1.0),
            accept_baseline_s=table.duration(
                "accept_baseline", default.accept_baseline_s, positive=True
            ),
            stall_s=table.duration("stall_after", default.stall_s, positive=True),
            kv_ceiling=table.number("kv_ceiling", default.kv_ceiling, 0.0, 1.0),
            ttft_p99_slo_s=table.duration("ttft_p99_slo", default.ttft_p99_slo_s),
        ),
        health_grace=table.duration("health_grace", DEFAULT_HEALTH_GRACE, positive=True),
    )
    table.finish()
    return serving


def _monitor(table: Table) -> MonitorConfig:
    default = MonitorConfig()
    monitor = MonitorConfig(
        health_interval=_at_least(table, "health_interval", default.health_interval),
        health_interval_serving=_at_least(
            table, "health_interval_serving", default.health_interval_serving
        ),
        gpu_interval=_at_least(table, "gpu_interval", default.gpu_interval),
        gpu_interval_serving=_at_least(table, "gpu_interval_serving", default.gpu_interval_serving),
    )
    table.finish()
    return monitor


def _at_least(table: Table, key: str, default: float, least: float = 0.1) -> float:
    seconds = table.duration(key, default, positive=True)
    if seconds < least:
        raise table.error(key, f"must be at least {least:g} s")
    return seconds


def _interval(table: Table) -> float:
    seconds = table.duration("interval", 2.0, positive=True)
    if seconds < 0.1:
        raise table.error("interval", "must be at least 0.1 s")
    return seconds


def _idle_interval(table: Table, interval: float) -> float:
    """The scrape interval of an idle server: no shorter than ``interval``."""
    seconds = table.duration("idle_interval", max(IDLE_SCRAPE_SECONDS, interval), positive=True)
    if seconds < interval:
        raise table.error("idle_interval", f"must be at least interval ({interval:g} s)")
    return seconds
