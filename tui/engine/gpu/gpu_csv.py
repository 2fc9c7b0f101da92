"""Parsers for ``nvidia-smi`` CSV queries: GPU rows (also as a live stream) and process lists.

:class:`QueryGpuStream` reads ``nvidia-smi --query-gpu=... --format=csv[,noheader][,nounits]``
output, including the long-lived ``-lms N`` stream, from chunks of any size: a partial last line
waits for the next chunk, a header line (``memory.used [MiB]``) sets the columns, values may
carry units (``0 MiB``, ``104.82 W``, ``0 %``) or not. :func:`parse_compute_apps` reads
``--query-compute-apps=...``, where a header without rows is the empty process list.

A row that does not fit becomes a :class:`RowProblem` naming the line and the column; an error
message in place of data becomes :class:`NoTelemetry`. Nothing here raises on its input. The
value types live in :mod:`tui.engine.gpu.gpu_values` and are re-exported here.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone

from tui.engine.gpu.gpu_values import (
    TO_MIB,
    AppList,
    ComputeApp,
    GpuBatch,
    GpuSample,
    NoTelemetry,
    NoTelemetryKind,
    RowProblem,
    classify_failure,
    clean_text,
    missing_marker,
    parse_reading,
)

__all__ = [
    "APP_COLUMNS",
    "GPU_COLUMNS",
    "AppList",
    "ComputeApp",
    "GpuBatch",
    "GpuSample",
    "NoTelemetry",
    "NoTelemetryKind",
    "QueryGpuStream",
    "RowProblem",
    "app_from_row",
    "classify_failure",
    "header_columns",
    "parse_compute_apps",
    "parse_query_gpu",
    "query_columns",
    "sample_from_row",
]

MAX_LINE = 4096
"""Longest line kept; a longer one is reported and dropped, so a stream never buffers more."""

# Column names as nvidia-smi accepts them in a query and as it prints them in a header, mapped
# to the attribute they fill. The header can differ from the query (``clocks.sm`` is printed
# ``clocks.current.sm``; ``used_memory`` is printed ``used_gpu_memory``).
GPU_COLUMNS: dict[str, str] = {
    "timestamp": "timestamp",
    "index": "index",
    "uuid": "uuid",
    "name": "name",
    "pci.bus_id": "bus_id",
    "memory.used": "memory_used_mib",
    "memory.total": "memory_total_mib",
    "utilization.gpu": "util_pct",
    "utilization.memory": "mem_util_pct",
    "temperature.gpu": "temperature_c",
    "power.draw": "power_w",
    "power.draw.instant": "power_w",
    "power.draw.average": "power_w",
    "power.limit": "power_limit_w",
    "clocks.sm": "sm_clock_mhz",
    "clocks.current.sm": "sm_clock_mhz",
    "mig.mode.current": "mig_mode",
}
APP_COLUMNS: dict[str, str] = {
    "pid": "pid",
    "process_name": "process_name",
    "name": "process_name",
    "used_memory": "used_memory_mib",
    "used_gpu_memory": "used_memory_mib",
    "gpu_uuid": "gpu_uuid",
    "gpu_bus_id": "gpu_bus_id",
    "gpu_name": "gpu_name",
}
_FREE_TEXT = ("name", "process_name")  # where commas inside a value are folded back
_STAMP = re.compile(r"^(\d{4})/(\d{1,2})/(\d{1,2}) (\d{1,2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?$")
_HEADER_CELL = re.compile(r"^[a-z][a-z0-9_.]*(?: \[[^\]]*\])?$")


def query_columns(query: str) -> tuple[str, ...]:
    """The column names of a ``--query-gpu=`` or ``--query-compute-apps=`` value."""
    return tuple(part.strip() for part in query.split(",") if part.strip())


def header_columns(line: str) -> tuple[str, ...] | None:
    """The column names of a CSV header line (units in brackets dropped), or None."""
    cells = [cell.strip() for cell in line.split(",")]
    if not all(_HEADER_CELL.match(cell) for cell in cells):
        return None
    return tuple(cell.split(" [", 1)[0] for cell in cells)


class _Row:
    """Typed access to one row's raw values; remembers which columns had no value."""

    def __init__(self, raw: dict[str, str], known: dict[str, str]) -> None:
        self._by_attr = {known[col]: (col, value) for col, value in raw.items() if col in known}
        self.missing: list[tuple[str, str]] = []

    def has(self, attr: str) -> bool:
        return attr in self._by_attr

    def text(self, attr: str) -> str | None:
        column, raw = self._by_attr.get(attr, ("", ""))
        if not column:
            return None
        if raw.startswith("[") or raw.upper() == "N/A" or not raw:
            self.missing.append((column, missing_marker(raw)))
            return None
        return clean_text(raw)

    def number(self, attr: str, scale: dict[str, float] | None = None) -> float | None:
        column, raw = self._by_attr.get(attr, ("", ""))
        if not column:
            return None
        reading = parse_reading(raw, scale)
        if reading.missing:
            self.missing.append((column, reading.missing))
        return reading.value

    def timestamp(self) -> float | None:
        """nvidia-smi's ``2026/11/29 14:38:18.140`` as seconds (naive wall time read as UTC)."""
        column, raw = self._by_attr.get("timestamp", ("", ""))
        stamp = _stamp(raw)
        if stamp is None and column:
            self.missing.append((column, missing_marker(raw)))
        return stamp


def _stamp(raw: str) -> float | None:
    match = _STAMP.match(raw.strip())
    if match is None:
        return None
    year, month, day, hour, minute, second = (int(part) for part in match.groups()[:6])
    try:
        when = datetime(year, month, day, hour, minute, second, tzinfo=timezone.utc)
    except ValueError:
        return None
    fraction = match.group(7)
    return when.timestamp() + (float(f"0.{fraction}") if fraction else 0.0)


def _whole(value: float | None) -> int | None:
    """A non-negative integer such as a GPU index or a PID, or None."""
    if value is not None and value.is_integer() and 0 <= value < 2**31:
        return int(value)
    return None


def sample_from_row(
    raw: dict[str, str], line: int = 0, problems: list[RowProblem] | None = None
) -> GpuSample | None:
    """A :class:`GpuSample` from ``{column: raw value}``; None (and a problem) without an index."""
    row = _Row(raw, GPU_COLUMNS)
    index = _whole(row.number("index"))
    if index is None:
        if problems is not None:
            reason = "not a GPU index" if row.has("index") else "the query has no index column"
            problems.append(RowProblem(line, "index", reason))
        return None
    return GpuSample(
        index=index,
        uuid=row.text("uuid"),
        name=row.text("name"),
        bus_id=row.text("bus_id"),
        timestamp=row.timestamp(),
        memory_used_mib=row.number("memory_used_mib", TO_MIB),
        memory_total_mib=row.number("memory_total_mib", TO_MIB),
        util_pct=row.number("util_pct"),
        mem_util_pct=row.number("mem_util_pct"),
        temperature_c=row.number("temperature_c"),
        power_w=row.number("power_w"),
        power_limit_w=row.number("power_limit_w"),
        sm_clock_mhz=row.number("sm_clock_mhz"),
        mig_mode=row.text("mig_mode"),
        missing=tuple(row.missing),
    )


def app_from_row(
    raw: dict[str, str], line: int = 0, problems: list[RowProblem] | None = None
) -> ComputeApp | None:
    """A :class:`ComputeApp` from ``{column: raw value}``; None (and a problem) without a PID."""
    row = _Row(raw, APP_COLUMNS)
    pid = _whole(row.number("pid"))
    if pid is None:
        if problems is not None:
            problems.append(RowProblem(line, "pid", "not a process id"))
        return None
    return ComputeApp(
        pid=pid,
        process_name=row.text("process_name") or "",
        used_memory_mib=row.number("used_memory_mib", TO_MIB),
        gpu_uuid=row.text("gpu_uuid"),
        gpu_bus_id=row.text("gpu_bus_id"),
        gpu_name=row.text("gpu_name"),
    )


@dataclass(slots=True)
class _Lines:
    """Bytes in, complete lines out; a partial last line waits for the next chunk."""

    carry: str = ""
    overlong: int = 0
    decoder: codecs.IncrementalDecoder = field(
        default_factory=lambda: codecs.getincrementaldecoder("utf-8")(errors="replace")
    )

    def feed(self, chunk: bytes | str, final: bool = False) -> list[str]:
        text = chunk if isinstance(chunk, str) else self.decoder.decode(chunk, final)
        parts = (self.carry + text).split("\n")
        self.carry = "" if final else parts.pop()
        if len(self.carry) > MAX_LINE:
            self.carry, self.overlong = "", self.overlong + 1
        return [part.rstrip("\r") for part in parts]


@dataclass(slots=True)
class _CsvReader:
    """CSV lines in, ``(line, {column: raw value})`` rows out; a header line sets the columns."""

    columns: tuple[str, ...] | None
    line: int = 0
    problems: list[RowProblem] = field(default_factory=list)
    failure: NoTelemetry | None = None

    def rows(self, lines: Iterable[str]) -> list[tuple[int, dict[str, str]]]:
        found: list[tuple[int, dict[str, str]]] = []
        for text in lines:
            self.line += 1
            row = self._row(text.strip())
            if row is not None:
                found.append((self.line, row))
        return found

    def _row(self, text: str) -> dict[str, str] | None:
        if not text or text == "No running processes found":
            return None
        if self.columns is not None and text.count(",") == len(self.columns) - 1:
            return self._split(text, self.columns)  # the common case: a row that fits
        header = header_columns(text)
        if header is not None:
            self.columns = header
            return None
        failure = classify_failure(text)
        if failure is not None:
            self.failure = failure
            return None
        if self.columns is None:
            self.problems.append(RowProblem(self.line, "", "data before any header"))
            return None
        return self._split(text, self.columns)

    def _split(self, text: str, columns: tuple[str, ...]) -> dict[str, str] | None:
        cells = [cell.strip() for cell in text.split(",")]
        surplus = len(cells) - len(columns)
        free = next((i for i, name in enumerate(columns) if name in _FREE_TEXT), None)
        if surplus > 0 and free is not None:
            cells[free : free + surplus + 1] = [", ".join(cells[free : free + surplus + 1])]
        if len(cells) != len(columns):
            reason = f"expected {len(columns)} values, found {len(cells)}"
            self.problems.append(RowProblem(self.line, "", reason))
            return None
        return dict(zip(columns, cells, strict=True))

    def take(self) -> tuple[tuple[RowProblem, ...], NoTelemetry | None]:
        """Problems and failure seen since the last call."""
        taken = tuple(self.problems), self.failure
        self.problems, self.failure = [], None
        return taken


class QueryGpuStream:
    """Incremental reader of ``--query-gpu`` CSV, with or without header and units.

    Give ``columns`` (the query's names, in order) for ``noheader`` output; a header line, when
    one arrives, sets or replaces them. ``feed`` takes chunks of any size and returns what the
    complete lines in them held; ``close`` reads whatever partial line is left.
    """

    def __init__(self, columns: Sequence[str] | None = None) -> None:
        self._table = _CsvReader(tuple(columns) if columns else None)
        self._lines = _Lines()
        self._overlong = 0

    @property
    def lines(self) -> int:
        """Lines read so far."""
        return self._table.line

    def feed(self, chunk: bytes | str) -> GpuBatch:
        return self._read(self._lines.feed(chunk))

    def close(self) -> GpuBatch:
        return self._read(self._lines.feed(b"", final=True))

    def _read(self, lines: list[str]) -> GpuBatch:
        table = self._table
        if self._lines.overlong != self._overlong:
            self._overlong = self._lines.overlong
            table.problems.append(RowProblem(table.line + 1, "", f"line over {MAX_LINE} chars"))
        samples: list[GpuSample] = []
        for line, row in table.rows(lines):
            sample = sample_from_row(row, line, table.problems)
            if sample is not None:
                samples.append(sample)
        problems, failure = table.take()
        return GpuBatch(tuple(samples), problems, failure)


def parse_query_gpu(text: str | bytes, columns: Sequence[str] | None = None) -> GpuBatch:
    """A whole ``--query-gpu`` output at once (see :class:`QueryGpuStream`)."""
    stream = QueryGpuStream(columns)
    first, last = stream.feed(text), stream.close()
    return GpuBatch(
        first.samples + last.samples, first.problems + last.problems, last.failure or first.failure
    )


def parse_compute_apps(text: str | bytes, columns: Sequence[str] | None = None) -> AppList:
    """A ``--query-compute-apps`` output; a header with no rows is the empty process list."""
    lines = _Lines()
    table = _CsvReader(tuple(columns) if columns else None)
    apps: list[ComputeApp] = []
    for line, row in table.rows(lines.feed(text) + lines.feed(b"", final=True)):
        app = app_from_row(row, line, table.problems)
        if app is not None:
            apps.append(app)
    problems, failure = table.take()
    return AppList(tuple(apps), problems, failure)
