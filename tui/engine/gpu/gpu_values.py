"""The values GPU telemetry is made of, and the ways ``nvidia-smi`` says it has none.

Everything here reads text that came from a remote host, so nothing is trusted: a field that is
``[N/A]``, ``[Not Supported]`` or ``[Unknown Error]`` reads as ``None`` with the marker kept,
text loses its control characters, and a driver error, a missing ``nvidia-smi`` or a host
without GPUs becomes :class:`NoTelemetry` with a reason a person can act on. Nothing raises.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from enum import Enum

MAX_TEXT = 200
"""Longest text value kept (GPU and process names)."""

_NUMBER = re.compile(r"^([-+]?(?:\d+(?:\.\d*)?|\.\d+))\s*([A-Za-z%]*)$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
TO_MIB = {"": 1.0, "mib": 1.0, "mb": 1.0, "gib": 1024.0, "gb": 1024.0, "kib": 1 / 1024}


class NoTelemetryKind(str, Enum):
    """Why a host gives no GPU telemetry."""

    NOT_INSTALLED = "not_installed"
    NO_DEVICES = "no_devices"
    DRIVER = "driver"
    PERMISSION = "permission"
    GPU_LOST = "gpu_lost"
    UNSUPPORTED = "unsupported"
    UNREADABLE = "unreadable"
    ENDED = "ended"
    DISCONNECTED = "disconnected"


@dataclass(frozen=True, slots=True)
class NoTelemetry:
    """The "no telemetry" state: what kind, and the host's own words when it gave some."""

    kind: NoTelemetryKind
    detail: str = ""
    node: int | None = None
    """The node whose host this is about, when the server spans several hosts."""

    @property
    def reason(self) -> str:
        """One line for the screen, e.g. ``nvidia-smi not found on the host``."""
        base = _REASONS[self.kind]
        where = "" if self.node is None else f"node {self.node}: "
        return f"{where}{base}: {self.detail}" if self.detail else f"{where}{base}"


_REASONS = {
    NoTelemetryKind.NOT_INSTALLED: "nvidia-smi not found on the host",
    NoTelemetryKind.NO_DEVICES: "no NVIDIA GPU found on the host",
    NoTelemetryKind.DRIVER: "nvidia-smi cannot talk to the NVIDIA driver",
    NoTelemetryKind.PERMISSION: "nvidia-smi lacks permission",
    NoTelemetryKind.GPU_LOST: "a GPU fell off the bus or needs a reset",
    NoTelemetryKind.UNSUPPORTED: "nvidia-smi rejected the query",
    NoTelemetryKind.UNREADABLE: "nvidia-smi output was not understood",
    NoTelemetryKind.ENDED: "the telemetry stream ended",
    NoTelemetryKind.DISCONNECTED: "not connected to the host",
}

# Phrases nvidia-smi (or the shell running it) prints instead of data, one named group per kind.
_FAILURE = re.compile(
    "|".join(
        f"(?P<{kind.value}>{pattern})"
        for kind, pattern in (
            (
                NoTelemetryKind.NOT_INSTALLED,
                r"nvidia-smi: (?:command )?not found|"
                r"nvidia-smi.*No such file",
            ),
            (
                NoTelemetryKind.DRIVER,
                r"NVIDIA-SMI has failed|Failed to initialize NVML|"
                r"Driver/library version mismatch|couldn't communicate with the NVIDIA driver",
            ),
            (NoTelemetryKind.NO_DEVICES, r"No devices were found|No devices found"),
            (NoTelemetryKind.PERMISSION, r"Insufficient Permissions|Permission denied"),
            (
                NoTelemetryKind.GPU_LOST,
                r"GPU is lost|fallen off the bus|requires reset|"
                r"Unable to determine the device handle",
            ),
            (
                NoTelemetryKind.UNSUPPORTED,
                r"is not a valid field to query|Invalid combination "
                r"of input arguments|Invalid (?:argument|option)|Unknown option",
            ),
        )
    ),
    re.IGNORECASE,
)


def classify_failure(text: str) -> NoTelemetry | None:
    """The no-telemetry state a message from ``nvidia-smi`` or its shell describes, if any."""
    match = _FAILURE.search(text)
    if match is None or match.lastgroup is None:
        return None
    return NoTelemetry(NoTelemetryKind(match.lastgroup), clean_text(text.strip(), MAX_TEXT))


def missing_marker(raw: str) -> str:
    """Why a value is absent: ``"N/A"`` for ``[N/A]``, ``"empty"``, or ``"unreadable"``."""
    text = raw.strip()
    if text.startswith("[") and text.endswith("]"):
        return clean_text(text[1:-1], 60) or "empty"
    if text.upper() in ("N/A", "NOT SUPPORTED", "UNKNOWN ERROR"):
        return text
    return "empty" if not text else "unreadable"


def clean_text(value: str, limit: int = MAX_TEXT) -> str:
    """``value`` without control characters (escape sequences cannot survive), capped."""
    cleaned = _CONTROL.sub("", value).strip()
    return cleaned if len(cleaned) <= limit else cleaned[: limit - 1] + "…"


@dataclass(frozen=True, slots=True)
class Reading:
    """One numeric field: its value in the field's base unit, or why there is none."""

    value: float | None
    missing: str = ""


def parse_reading(raw: str, scale: dict[str, float] | None = None) -> Reading:
    """``"104.82 W"``, ``"0 %"``, ``"41478 MiB"``, ``"35"`` or ``"[N/A]"`` as a :class:`Reading`.

    ``scale`` converts units to the base unit (by lower-case unit name); a unit not in it, or a
    value that is not a finite number, reads as missing.
    """
    text = raw.strip()
    match = _NUMBER.match(text)
    if match is None:
        return Reading(None, missing_marker(text))
    number, unit = float(match.group(1)), match.group(2).lower()
    if not math.isfinite(number):
        return Reading(None, "out of range")
    factor = 1.0 if scale is None or unit in ("", "%") else scale.get(unit)
    if factor is None:
        return Reading(None, f"unit {clean_text(unit, 20)}")
    return Reading(number * factor)


@dataclass(frozen=True, slots=True)
class GpuSample:
    """One GPU at one instant. Every reading is ``None`` when nvidia-smi did not give it."""

    index: int
    uuid: str | None = None
    name: str | None = None
    bus_id: str | None = None
    timestamp: float | None = None
    memory_used_mib: float | None = None
    memory_total_mib: float | None = None
    util_pct: float | None = None
    mem_util_pct: float | None = None
    temperature_c: float | None = None
    power_w: float | None = None
    power_limit_w: float | None = None
    sm_clock_mhz: float | None = None
    mig_mode: str | None = None
    missing: tuple[tuple[str, str], ...] = ()
    """``(column, marker)`` for each absent value, e.g. ``("utilization.gpu", "N/A")``."""


@dataclass(frozen=True, slots=True)
class ComputeApp:
    """A process holding GPU memory, as ``--query-compute-apps`` lists it."""

    pid: int
    process_name: str = ""
    used_memory_mib: float | None = None
    gpu_uuid: str | None = None
    gpu_bus_id: str | None = None
    gpu_name: str | None = None
    gpu_index: int | None = None


@dataclass(frozen=True, slots=True)
class RowProblem:
    """A line that could not be read: where, which column, and why."""

    line: int
    column: str
    reason: str

    def __str__(self) -> str:
        where = f"line {self.line}" + (f", column {self.column}" if self.column else "")
        return f"{where}: {self.reason}"


@dataclass(frozen=True, slots=True)
class GpuBatch:
    """What one chunk of query output held."""

    samples: tuple[GpuSample, ...] = ()
    problems: tuple[RowProblem, ...] = ()
    failure: NoTelemetry | None = None


@dataclass(frozen=True, slots=True)
class AppList:
    """A parsed process list; ``apps`` is empty both for "no processes" and on failure."""

    apps: tuple[ComputeApp, ...] = ()
    problems: tuple[RowProblem, ...] = ()
    failure: NoTelemetry | None = None
