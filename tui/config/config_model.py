"""The configuration as frozen dataclasses; every field is described in docs/configuration.md."""

from __future__ import annotations

import string
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from tui.config.config_slurm import SlurmConfig
from tui.config.config_text import ConfigError, dotted
from tui.config.ssh_targets import SshAddress, SshChoices, parse_ssh_target
from tui.engine.judge.degraded import DEFAULT_HEALTH_GRACE
from tui.engine.metrics.alarms import AlarmThresholds
from tui.engine.servers import registry

HOST_KEY_POLICIES = ("strict", "accept-new")
NOTIFY_MODES = ("auto", "always", "never")
BENCH_MODES = ("auto", "ask", "off")
ENDPOINTS = ("generate", "completions", "chat")
LOG_PLACEHOLDERS = frozenset({"profile", "node_rank"})
KERNEL_LOG_COMMANDS: tuple[tuple[str, ...], ...] = (
    ("journalctl", "-k", "-q", "--no-pager", "-n", "20000"),
    ("dmesg",),
)
"""The commands tried in turn for a GPU host's kernel log (the first that may be read wins)."""
LAUNCH_PLACEHOLDERS = frozenset(
    {
        "model", "drafter", "port", "host", "tp", "dp", "ep", "pp", "nnodes", "node_rank",
        "dist_init_addr", "profile", "log", "log_dir",
    }
)  # fmt: skip


def _empty() -> Mapping[str, str]:
    return MappingProxyType({})


def template_fields(template: str) -> list[str]:
    """Names of the ``{placeholders}`` in ``template``; ``ValueError`` on a malformed one."""
    names: list[str] = []
    for _text, name, spec, conversion in string.Formatter().parse(template):
        if name is None:
            continue
        if not name.isidentifier() or spec or conversion:
            raise ValueError(f"malformed placeholder {{{name}}}: use a bare {{name}}")
        names.append(name)
    return names


@dataclass(frozen=True, slots=True)
class LaunchConfig:
    """How ``bringup`` starts the server on each host."""

    command: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=_empty)
    cwd: str | None = None
    conda_env: str | None = None
    venv: str | None = None
    grace_period: float = 30.0
    model: str | None = None
    drafter: str | None = None
    tp: int | None = None
    dp: int | None = None
    ep: int | None = None
    pp: int | None = None
    dist_init_addr: str | None = None

    def placeholder_values(self) -> tuple[tuple[str, str], ...]:
        """The parallel sizes set in this table, as ``{tp}``-style placeholder values."""
        sizes = (("tp", self.tp), ("dp", self.dp), ("ep", self.ep), ("pp", self.pp))
        return tuple((name, str(value)) for name, value in sizes if value is not None)

    def argv(self, values: Mapping[str, object]) -> list[str]:
        """The command with every ``{placeholder}`` filled from ``values`` (``KeyError`` if not)."""
        return [part.format_map({k: str(v) for k, v in values.items()}) for part in self.command]


@dataclass(frozen=True, slots=True)
class BenchConfig:
    """The benchmark run against a ready server."""

    mode: str = "auto"
    num_prompts: int | None = None
    """Requests per level; None: ``max(5 x concurrency, 16)`` (see ``load_plan``)."""
    input_len: int = 256
    output_len: int = 256
    concurrency: tuple[int, ...] = (1,)
    warmup_requests: int = 1
    ignore_eos: bool = True
    seed: int = 0
    prompts: Path | None = None
    endpoint: str | None = None
    official: bool = False
    request_rate: tuple[float, ...] = ()
    """Open-loop levels (requests per second, ``inf`` for all at once); empty: closed loop."""
    burstiness: float = 1.0
    max_concurrency: int | None = None
    dataset: str = "builtin"
    """``builtin`` (shipped prompts, or ``prompts``'s JSONL), ``random`` or ``sharegpt``."""
    dataset_path: Path | None = None
    """The ShareGPT JSON file (``dataset = "sharegpt"``), or the dataset the official tool reads."""
    trials: int = 1
    goodput: tuple[tuple[str, float], ...] = ()
    """SLOs in milliseconds by metric (``ttft``, ``tpot``, ``e2el``)."""

    def endpoint_for(self, engine: str) -> str:
        """The configured endpoint, or the engine's native one (``generate`` unless vLLM)."""
        if self.endpoint is not None:
            return self.endpoint
        return registry.or_default(engine).native_endpoint


@dataclass(frozen=True, slots=True)
class StallConfig:
    """When a stage counts as stalled: ``max(factor * p95 of past runs, floor)`` seconds."""

    factor: float = 1.5
    floor: float = 60.0


IDLE_SCRAPE_SECONDS = 30.0
"""The default time between two scrapes of a server found idle (``[serving] idle_interval``)."""


@dataclass(frozen=True, slots=True)
class ServingConfig:
    """The engine's ``/metrics`` once the server serves: whether and how often to read it, and
    where its alarms start."""

    metrics: bool = True
    interval: float = 2.0
    idle_interval: float = IDLE_SCRAPE_SECONDS
    """Seconds between scrapes once the server was found idle three scrapes in a row."""
    alarms: AlarmThresholds = field(default_factory=AlarmThresholds)
    health_grace: float = DEFAULT_HEALTH_GRACE
    """Seconds a READY server's ``/health`` may fail (DEGRADED) before the verdict is FAILED."""


@dataclass(frozen=True, slots=True)
class MonitorConfig:
    """How often the monitor asks the host while the server starts and once it is READY: the
    health poll (back to ``health_interval`` after a failed poll) and the GPU telemetry."""

    health_interval: float = 1.0
    health_interval_serving: float = 10.0
    gpu_interval: float = 0.5
    gpu_interval_serving: float = 2.0


@dataclass(frozen=True, slots=True)
class Profile:
    """One server: where it runs, how to start it, how to watch and benchmark it."""

    name: str = "default"
    engine: str = "auto"
    hosts: tuple[str, ...] = ()
    log: str | None = None
    logs: tuple[str, ...] = ()
    log_dir: str | None = None
    port: int | None = None
    host_key_policy: str = "strict"
    ssh_config: Path | None = None
    known_hosts: Path | None = None
    expected_startup: float = 600.0
    read_only: bool = False
    nvidia_smi: tuple[str, ...] = ("nvidia-smi",)
    kernel_log: tuple[tuple[str, ...], ...] = KERNEL_LOG_COMMANDS
    """The ``nvidia-smi`` run on each host (GPU telemetry, the launcher's GPU checks), as an
    argument list."""
    launch: LaunchConfig = field(default_factory=LaunchConfig)
    bench: BenchConfig = field(default_factory=BenchConfig)
    stall: StallConfig = field(default_factory=StallConfig)
    serving: ServingConfig = field(default_factory=ServingConfig)
    monitor: MonitorConfig = field(default_factory=MonitorConfig)
    api_key_env: str | None = None
    """The environment variable holding the server's API key, sent as a bearer token by the
    benchmark and the health poll."""
    scheduler: str = "ssh"
    """``ssh`` (started on ``hosts`` by bringup) or ``slurm`` (submitted as a job, see
    ``slurm``)."""
    slurm: SlurmConfig = field(default_factory=SlurmConfig)
    ssh_choices: SshChoices = field(default_factory=SshChoices)
    """What the command line chose for SSH (never read from the file)."""

    @property
    def targets(self) -> tuple[SshAddress, ...]:
        """``hosts`` parsed (node 0 first); empty when the server runs on this machine."""
        return tuple(parse_ssh_target(host) for host in self.hosts)

    def port_for(self, engine: str | None = None) -> int:
        """``port``, or the default port of ``engine`` (or of this profile's engine)."""
        if self.port is not None:
            return self.port
        return registry.or_default(engine or self.engine).default_port

    @property
    def log_path(self) -> str | None:
        """Node 0's log (``logs[0]`` or ``log``) with its placeholders filled in."""
        paths = self.node_logs
        return paths[0] if paths else None

    @property
    def node_logs(self) -> tuple[str, ...]:
        """Each node's log, node 0 first (one per host; empty when no log is configured).

        ``logs`` gives one path per host; otherwise ``log`` is used on every host, its
        ``{node_rank}`` filled with the host's index in ``hosts``.
        """
        if self.logs:
            templates = self.logs
        elif self.log is not None:
            templates = (self.log,) * max(len(self.hosts), 1)
        else:
            return ()
        return tuple(
            text.format(profile=self.name, node_rank=rank) for rank, text in enumerate(templates)
        )


@dataclass(frozen=True, slots=True)
class Config:
    """Everything in ``config.toml``; an empty ``Config()`` when there is no file."""

    path: Path | None = None
    theme: str | None = None
    default_profile: str | None = None
    keys: Mapping[str, str] = field(default_factory=_empty)
    notify: str = "auto"
    data_dir: Path | None = None
    profiles: Mapping[str, Profile] = field(default_factory=lambda: MappingProxyType({}))

    def profile(self, name: str | None = None) -> Profile:
        """The named profile, else ``default_profile``, else the only one, else the defaults."""
        wanted = name or self.default_profile
        if wanted is None:
            if len(self.profiles) > 1:
                raise self._error("", "several profiles and no default_profile; choose one")
            return next(iter(self.profiles.values()), Profile())
        found = self.profiles.get(wanted)
        if found is None:
            raise self._error(wanted, "no such profile")
        return found

    def _error(self, name: str, problem: str) -> ConfigError:
        available = ", ".join(sorted(self.profiles)) or "none configured"
        key = dotted(("profiles", name)) if name else "profiles"
        where = self.path or "configuration"
        return ConfigError(where, 0, key, f"{problem} (available profiles: {available})")
