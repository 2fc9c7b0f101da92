"""What one launch of a profile does on each node: the argv, the environment and the files.

Pure: the caller supplies the profile's values, each host's home folder and the time. Template
placeholders are filled inside argv *elements*: a value never becomes shell text and is never
split into further arguments, whatever quotes, ``;``, ``$(...)`` or newlines it holds.

Files of a run on a host (``<stem>`` is the profile name, or ``<profile>-node<k>`` when the
profile has several hosts, so that nodes sharing a network folder never collide)::

    <log_dir>/<stem>-<YYYYmmdd-HHMMSS>.log          the server's output for this run
    <log_dir>/<stem>-latest.log                      symlink to the newest run's log
    <log_dir>/.bringup/<run_id>.json                 the run record
    <log_dir>/.bringup/<run_id>.pid                  "pid starttime boot_id" of the process group
    <log_dir>/.bringup/<run_id>.exit                 "status unix_time" when the command ended
    <log_dir>/.bringup/<stem>-current.json           symlink to the newest run's record
"""

from __future__ import annotations

import posixpath
import re
import shlex
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone

DEFAULT_LOG_DIR = "/tmp/bringup"
DEFAULT_DIST_PORT = 20000
STATE_DIR = ".bringup"
PLACEHOLDERS = frozenset(
    {
        "model", "drafter", "port", "host", "tp", "dp", "ep", "pp", "nnodes", "node_rank",
        "dist_init_addr", "profile", "log", "log_dir",
    }
)  # fmt: skip
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SAFE_STEM = re.compile(r"[^A-Za-z0-9_.-]")
_FIELD_SOURCE = {"model": "launch.model", "drafter": "launch.drafter", "port": "port"}


class PlanError(ValueError):
    """A profile that cannot be turned into a launch; the message names the field."""


@dataclass(frozen=True, slots=True)
class LaunchSpec:
    """The launch-related values of one profile, as plain data.

    ``hosts`` are host names (no user or port), node 0 first; a single ``"localhost"`` when the
    server runs on this machine. ``values`` holds further placeholder values (``tp``, ...).
    """

    profile: str
    command: tuple[str, ...]
    hosts: tuple[str, ...] = ("localhost",)
    log_dir: str = DEFAULT_LOG_DIR
    port: int | None = None
    env: tuple[tuple[str, str], ...] = ()
    cwd: str | None = None
    conda_env: str | None = None
    venv: str | None = None
    model: str | None = None
    drafter: str | None = None
    grace_period: float = 30.0
    dist_init_addr: str | None = None
    values: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class RunPaths:
    """Absolute paths of one run's files on its host."""

    log: str
    latest_log: str
    state_dir: str
    record: str
    current: str
    pid_file: str
    exit_file: str


@dataclass(frozen=True, slots=True)
class NodePlan:
    """One node's part of a launch: run it on ``host`` and it becomes one process group."""

    profile: str
    run_id: str
    stem: str
    host: str
    node_rank: int
    nnodes: int
    argv: tuple[str, ...]
    paths: RunPaths
    port: int | None = None
    env: tuple[tuple[str, str], ...] = ()
    cwd: str | None = None
    venv: str | None = None
    conda_env: str | None = None
    model_path: str | None = None
    gpus: tuple[str, ...] | None = None
    values: Mapping[str, str] = field(default_factory=dict)

    @property
    def command_line(self) -> str:
        """The command as one shell-quoted line, for records and messages."""
        return shlex.join(self.argv)


def run_stem(profile: str, node_rank: int, nnodes: int) -> str:
    """The file-name stem of a profile's runs on one node (unsafe characters become ``_``)."""
    safe = _SAFE_STEM.sub("_", profile).lstrip(".") or "profile"
    return safe if nnodes <= 1 else f"{safe}-node{node_rank}"


def run_id(stem: str, now: datetime, attempt: int = 0) -> str:
    """``<stem>-<YYYYmmdd-HHMMSS>`` in UTC, with ``-<attempt>`` when that name was taken."""
    stamp = now.astimezone(timezone.utc).strftime("%Y%m%d-%H%M%S")
    return f"{stem}-{stamp}" if attempt == 0 else f"{stem}-{stamp}-{attempt}"


def run_paths(log_dir: str, stem: str, run: str) -> RunPaths:
    """Where a run's log, link, record and status files live under ``log_dir``."""
    state = posixpath.join(log_dir, STATE_DIR)
    return RunPaths(
        log=posixpath.join(log_dir, f"{run}.log"),
        latest_log=posixpath.join(log_dir, f"{stem}-latest.log"),
        state_dir=state,
        record=posixpath.join(state, f"{run}.json"),
        current=posixpath.join(state, f"{stem}-current.json"),
        pid_file=posixpath.join(state, f"{run}.pid"),
        exit_file=posixpath.join(state, f"{run}.exit"),
    )


def latest_log_path(
    profile: str, log_dir: str, nnodes: int, home: str | None = None, node_rank: int = 0
) -> str:
    """The stable ``-latest.log`` link of the newest run on node ``node_rank`` (node 0 default).

    With ``home``, ``~`` and relative folders are resolved against it; without, a leading
    ``~/`` is dropped, which leaves a path relative to the login folder (where commands over
    SSH start).
    """
    name = f"{run_stem(profile, node_rank, nnodes)}-latest.log"
    if home is not None:
        return posixpath.join(expand_home(log_dir, home), name)
    folder = log_dir[2:] if log_dir.startswith("~/") else ("." if log_dir == "~" else log_dir)
    return posixpath.join(folder, name)


def expand_home(path: str, home: str) -> str:
    """``path`` on a host whose home is ``home``: ``~`` expanded, relative paths under home."""
    if path == "~" or path.startswith("~/"):
        return posixpath.normpath(home + path[1:])
    if path.startswith("/"):
        return posixpath.normpath(path)
    return posixpath.normpath(posixpath.join(home, path))


def is_local_path(model: str) -> bool:
    """Whether a model value names a file on the host rather than a hub id."""
    return model.startswith(("/", "~", "."))


def fill(part: str, values: Mapping[str, str], where: str = "launch.command") -> str:
    """One argv element with its ``{placeholders}`` replaced; ``{{``/``}}`` are literal braces."""
    try:
        pieces = list(string.Formatter().parse(part))
    except ValueError as exc:
        raise PlanError(f"{where}: {part!r}: {exc}") from None
    out: list[str] = []
    for text, name, spec, conversion in pieces:
        out.append(text)
        if name is None:
            continue
        if name not in PLACEHOLDERS or spec or conversion:
            allowed = ", ".join(f"{{{p}}}" for p in sorted(PLACEHOLDERS))
            raise PlanError(f"{where}: unknown placeholder {{{name}}} (known: {allowed})")
        if name not in values:
            source = _FIELD_SOURCE.get(name, f"launch.{name}")
            raise PlanError(f"{where}: uses {{{name}}} but the profile sets no {source}")
        out.append(values[name])
    return "".join(out)


def check_spec(spec: LaunchSpec) -> None:
    """Reject what cannot be launched, naming the field."""
    if not spec.command:
        raise PlanError(f"profile {spec.profile!r}: launch.command is not set")
    if not spec.hosts:
        raise PlanError(f"profile {spec.profile!r}: no host to launch on")
    for name, _value in spec.env:
        if not _ENV_NAME.fullmatch(name):
            raise PlanError(f"launch.env: {name!r} is not an environment variable name")
    if spec.grace_period < 0:
        raise PlanError("launch.grace_period: must not be negative")


def _dist_init_addr(spec: LaunchSpec) -> str:
    if spec.dist_init_addr:
        return spec.dist_init_addr
    first = spec.hosts[0]
    return f"[{first}]:{DEFAULT_DIST_PORT}" if ":" in first else f"{first}:{DEFAULT_DIST_PORT}"


def _gpus(env: Sequence[tuple[str, str]]) -> tuple[str, ...] | None:
    wanted = dict(env).get("CUDA_VISIBLE_DEVICES")
    if wanted is None:
        return None
    return tuple(part.strip() for part in wanted.split(",") if part.strip())


def _values(spec: LaunchSpec, node_rank: int, home: str, paths: RunPaths) -> dict[str, str]:
    values = dict(spec.values)
    values.update(
        profile=spec.profile,
        host=spec.hosts[node_rank],
        node_rank=str(node_rank),
        nnodes=str(len(spec.hosts)),
        dist_init_addr=_dist_init_addr(spec),
        log=paths.log,
        log_dir=posixpath.dirname(paths.log),
    )
    if spec.port is not None:
        values["port"] = str(spec.port)
    for name, value in (("model", spec.model), ("drafter", spec.drafter)):
        if value is not None:
            values[name] = expand_home(value, home) if value.startswith("~") else value
    return values


def plan_node(
    spec: LaunchSpec, node_rank: int, home: str, now: datetime, attempt: int = 0
) -> NodePlan:
    """The plan for node ``node_rank`` of ``spec``, on a host whose home folder is ``home``."""
    check_spec(spec)
    nnodes = len(spec.hosts)
    stem = run_stem(spec.profile, node_rank, nnodes)
    run = run_id(stem, now, attempt)
    paths = run_paths(expand_home(spec.log_dir, home), stem, run)
    values = _values(spec, node_rank, home, paths)
    argv = tuple(
        fill(part, values, f"launch.command[{index}]") for index, part in enumerate(spec.command)
    )
    model = values.get("model")
    return NodePlan(
        profile=spec.profile,
        run_id=run,
        stem=stem,
        host=spec.hosts[node_rank],
        node_rank=node_rank,
        nnodes=nnodes,
        argv=argv,
        paths=paths,
        port=spec.port,
        env=spec.env,
        cwd=expand_home(spec.cwd, home) if spec.cwd else None,
        venv=expand_home(spec.venv, home) if spec.venv else None,
        conda_env=spec.conda_env or None,
        model_path=model if model is not None and is_local_path(model) else None,
        gpus=_gpus(spec.env),
        values=values,
    )


def plan_launch(spec: LaunchSpec, homes: Sequence[str], now: datetime) -> tuple[NodePlan, ...]:
    """One plan per host of ``spec``; ``homes[k]`` is node ``k``'s home folder."""
    check_spec(spec)
    if len(homes) != len(spec.hosts):
        raise PlanError(f"expected {len(spec.hosts)} home folders, got {len(homes)}")
    return tuple(plan_node(spec, rank, homes[rank], now) for rank in range(len(spec.hosts)))
