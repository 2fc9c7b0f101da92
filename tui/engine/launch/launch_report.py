"""What the launcher's host scripts reported, read into typed facts. Pure; never raises on input.

The scripts (``tui/io/launch/remote_scripts.py``) print one ``<key> <value>`` fact per line. Every
byte came from a host, so names are stripped of control characters and capped, numbers are
checked, and a line that does not fit is ignored rather than trusted.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from tui.engine.gpu.gpu_csv import parse_compute_apps, parse_query_gpu
from tui.engine.gpu.gpu_values import ComputeApp
from tui.engine.logs.sanitize import sanitize_line

APP_COLUMNS = ("pid", "used_memory", "gpu_uuid", "process_name")
_SS_USER = re.compile(r'\("((?:[^"\\]|\\.)*)",pid=(\d+)')
_DEAD_STATES = frozenset({"Z", "X", "x"})


@dataclass(frozen=True, slots=True)
class Identity:
    """A run's process group as its wrapper recorded it: leader pid (= pgid), start, boot id."""

    pid: int
    start: int
    boot: str


@dataclass(frozen=True, slots=True)
class Ended:
    """The exit status the wrapper recorded, and when (unix seconds; None if unreadable)."""

    status: int
    at: float | None


@dataclass(frozen=True, slots=True)
class ProcessInfo:
    """One process of a run's process group. ``start`` is in clock ticks since boot."""

    pid: int
    start: int
    state: str
    name: str

    @property
    def alive(self) -> bool:
        """False for zombies: they hold no memory, GPU or port, only a process-table slot."""
        return self.state not in _DEAD_STATES


@dataclass(frozen=True, slots=True)
class Listener:
    """A process listening on the port; ``pid`` is None when the host would not say."""

    pid: int | None
    name: str

    def describe(self) -> str:
        if self.pid is None:
            return "a process this user cannot see"
        return f"pid {self.pid} ({self.name})" if self.name else f"pid {self.pid}"


@dataclass(frozen=True, slots=True)
class HostFacts:
    """Everything one script run reported. Absent facts are None or empty."""

    home: str | None = None
    boot: str | None = None
    run_id: str | None = None
    record_text: str | None = None
    identity: Identity | None = None
    ended: Ended | None = None
    members: tuple[ProcessInfo, ...] = ()
    has_setsid: bool | None = None
    listen_source: str | None = None
    listeners: tuple[Listener, ...] = ()
    gpu_source: str | None = None
    gpus: tuple[tuple[int, str], ...] = ()
    gpu_apps: tuple[ComputeApp, ...] = ()
    gpu_errors: tuple[str, ...] = ()
    model_exists: bool | None = None
    signalled: str | None = None
    refused: str | None = None
    gone: bool = False
    taken: bool = False
    errors: tuple[str, ...] = field(default_factory=tuple)

    def ours(self) -> tuple[ProcessInfo, ...]:
        """Live members that belong to the recorded run (same boot, started after its leader).

        None when the leader's pid now belongs to a process with another start time: the kernel
        reuses a pid only once its process group is empty, so that group is a stranger's."""
        ident = self.identity
        if ident is None or (self.boot is not None and self.boot != ident.boot):
            return ()
        if self.leader_reused:
            return ()
        return tuple(p for p in self.members if p.alive and p.start >= ident.start)

    @property
    def leader_reused(self) -> bool:
        """Whether the recorded leader's pid is held by another process (its start differs)."""
        ident = self.identity
        if ident is None:
            return False
        return any(p.pid == ident.pid and p.start != ident.start for p in self.members)


def _clean(text: str, limit: int) -> str:
    """``text`` from a host, safe to show: no escape sequence or control character, capped."""
    return sanitize_line(text, limit).strip()


def _int(text: str) -> int | None:
    return int(text) if text.isdigit() and len(text) < 20 else None


def _identity(value: str) -> Identity | None:
    parts = value.split()
    if len(parts) != 3:
        return None
    pid, start = _int(parts[0]), _int(parts[1])
    if pid is None or start is None or pid <= 1:
        return None
    return Identity(pid, start, _clean(parts[2], 64))


def _ended(value: str) -> Ended | None:
    parts = value.split()
    status = _int(parts[0]) if parts else None
    if status is None or status > 255:
        return None
    at = _int(parts[1]) if len(parts) > 1 else None
    return Ended(status, float(at) if at is not None else None)


def _member(value: str) -> ProcessInfo | None:
    parts = value.split(" ", 3)
    if len(parts) < 3:
        return None
    pid, start = _int(parts[0]), _int(parts[1])
    if pid is None or start is None:
        return None
    name = _clean(parts[3], 64) if len(parts) > 3 else ""
    return ProcessInfo(pid, start, _clean(parts[2], 4), name)


def _listener(value: str) -> Listener:
    pid_text, _, name = value.partition(" ")
    return Listener(_int(pid_text), _clean(name, 64))


def parse_ss_line(line: str) -> list[Listener]:
    """The processes an ``ss -ltnp`` row names (one unnamed listener when it names none)."""
    found = [Listener(int(pid), _clean(name, 64)) for name, pid in _SS_USER.findall(line)]
    return found or [Listener(None, "")]


def _unique(listeners: Iterable[Listener]) -> tuple[Listener, ...]:
    return tuple(dict.fromkeys(listeners))


@dataclass(slots=True)
class _Collector:
    values: dict[str, list[str]] = field(default_factory=dict)

    def add(self, line: str) -> None:
        key, _, value = line.partition(" ")
        self.values.setdefault(key, []).append(value)

    def first(self, key: str) -> str | None:
        found = self.values.get(key)
        return found[0] if found else None

    def all(self, key: str) -> list[str]:
        return self.values.get(key, [])


def _flag(value: str | None) -> bool | None:
    return None if value is None else value.strip() == "yes"


def _gpus(collected: _Collector) -> tuple[tuple[tuple[int, str], ...], tuple[ComputeApp, ...]]:
    ids = parse_query_gpu("\n".join(collected.all("gpu")), columns=("index", "uuid"))
    gpus = tuple((s.index, s.uuid) for s in ids.samples if s.uuid)
    apps = parse_compute_apps("\n".join(collected.all("app")), columns=APP_COLUMNS).apps
    return gpus, apps


def parse_facts(text: str) -> HostFacts:
    """Read a script's output; unknown keys and malformed values are skipped."""
    collected = _Collector()
    for line in text.splitlines():
        collected.add(line)
    record = collected.first("record")
    members = (_member(v) for v in collected.all("member"))
    listeners = [_listener(v) for v in collected.all("listen")]
    for row in collected.all("ss"):
        listeners.extend(parse_ss_line(row))
    gpus, apps = _gpus(collected)
    identity, ended = collected.first("identity"), collected.first("exit")
    return HostFacts(
        home=collected.first("home"),
        boot=_clean(collected.first("boot") or "", 64) or None,
        run_id=_clean(collected.first("run") or "", 200) or None,
        record_text=record,
        identity=_identity(identity) if identity is not None else None,
        ended=_ended(ended) if ended is not None else None,
        members=tuple(m for m in members if m is not None),
        has_setsid=_flag(collected.first("setsid")),
        listen_source=collected.first("listen-source"),
        listeners=_unique(listeners),
        gpu_source=collected.first("gpu-source"),
        gpus=gpus,
        gpu_apps=apps,
        gpu_errors=tuple(_clean(v, 200) for v in collected.all("gpu-error")),
        model_exists=_flag(collected.first("model")),
        signalled=collected.first("signalled"),
        refused=_clean(collected.first("refused") or "", 200) or None,
        gone="gone" in collected.values,
        taken="taken" in collected.values,
        errors=tuple(_clean(v, 300) for v in collected.all("error")),
    )
