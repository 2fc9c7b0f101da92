"""The other shapes of ``nvidia-smi`` output: ``-L``, ``dmon``, the default table and ``-q -x``.

The live channel reads the CSV query (see :mod:`tui.engine.gpu.gpu_csv`); these readers cover what a
person pastes, what an older host can still answer, and the device list with its MIG devices.
Like the CSV readers they never raise: what cannot be read is left out or reported.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass
from itertools import pairwise

from tui.engine.gpu.gpu_csv import MAX_LINE
from tui.engine.gpu.gpu_values import (
    TO_MIB,
    ComputeApp,
    GpuSample,
    NoTelemetry,
    NoTelemetryKind,
    RowProblem,
    classify_failure,
    clean_text,
    parse_reading,
)

_LISTED_GPU = re.compile(r"^GPU (\d+): (.+?) \(UUID: ([^)]+)\)\s*$")
_LISTED_MIG = re.compile(r"^\s+MIG (\S+)\s+Device\s+(\d+): \(UUID: ([^)]+)\)\s*$")


@dataclass(frozen=True, slots=True)
class MigDevice:
    """A MIG slice of a GPU, as ``nvidia-smi -L`` lists it."""

    profile: str
    device: int
    uuid: str


@dataclass(frozen=True, slots=True)
class ListedGpu:
    """One ``nvidia-smi -L`` entry, with its MIG devices when MIG is on."""

    index: int
    name: str
    uuid: str
    mig: tuple[MigDevice, ...] = ()


def parse_gpu_list(text: str) -> tuple[tuple[ListedGpu, ...], NoTelemetry | None]:
    """``nvidia-smi -L`` as GPUs (MIG devices attached to their GPU), or why there are none."""
    gpus: list[ListedGpu] = []
    for line in text.splitlines():
        gpu, mig = _LISTED_GPU.match(line), _LISTED_MIG.match(line)
        if gpu:
            name, uuid = clean_text(gpu.group(2)), clean_text(gpu.group(3))
            gpus.append(ListedGpu(int(gpu.group(1)), name, uuid))
        elif mig and gpus:
            profile, number, uuid = mig.groups()
            device = MigDevice(clean_text(profile), int(number), clean_text(uuid))
            last = gpus[-1]
            gpus[-1] = ListedGpu(last.index, last.name, last.uuid, (*last.mig, device))
    failure = None if gpus else classify_failure(text) or NoTelemetry(NoTelemetryKind.NO_DEVICES)
    return tuple(gpus), failure


@dataclass(frozen=True, slots=True)
class DmonRow:
    """One ``nvidia-smi dmon`` line: the GPU and each column's value (None for ``-``)."""

    gpu: int
    values: tuple[tuple[str, float | None], ...]

    def get(self, column: str) -> float | None:
        """The value of ``column`` (``pwr``, ``sm``, ``fb`` ...), None when absent."""
        return next((value for name, value in self.values if name == column), None)


def parse_dmon(text: str) -> tuple[tuple[DmonRow, ...], tuple[RowProblem, ...]]:
    """``nvidia-smi dmon`` output: the first ``#`` line names the columns, ``-`` is no value."""
    columns: list[str] = []
    rows: list[DmonRow] = []
    problems: list[RowProblem] = []
    for number, line in enumerate(text.splitlines(), start=1):
        cells = line[:MAX_LINE].split()
        if not cells:
            continue
        if cells[0].startswith("#"):
            columns = columns or " ".join(cells).lstrip("#").split()
            continue
        row = _dmon_row(columns, cells)
        if row is None:
            problems.append(RowProblem(number, "", f"expected {len(columns)} values"))
        else:
            rows.append(row)
    return tuple(rows), tuple(problems)


def _dmon_row(columns: list[str], cells: list[str]) -> DmonRow | None:
    if len(cells) != len(columns) or "gpu" not in columns:
        return None
    pairs = zip(columns, cells, strict=True)
    values = tuple((name, parse_reading(cell).value) for name, cell in pairs)
    gpu = dict(values).get("gpu")
    if gpu is None or not gpu.is_integer() or gpu < 0:
        return None
    return DmonRow(int(gpu), tuple(pair for pair in values if pair[0] != "gpu"))


@dataclass(frozen=True, slots=True)
class SmiReport:
    """What the default ``nvidia-smi`` table or ``nvidia-smi -q -x`` says about a host."""

    driver_version: str | None = None
    cuda_version: str | None = None
    gpus: tuple[GpuSample, ...] = ()
    apps: tuple[ComputeApp, ...] = ()
    failure: NoTelemetry | None = None


_VERSIONS = re.compile(r"Driver Version:\s*(\S+)\s+CUDA Version:\s*(\S+)")
_TABLE_GPU = re.compile(r"^\|\s+(\d+)\s+(.+?)\s+(?:On|Off)\s+\|\s+(\S+)\s")
_TABLE_USE = re.compile(
    r"^\|\s*\S+\s+(\S+)\s+\S+\s+(\S+)\s*/\s*(\S+)\s*\|\s*(\S+)\s*/\s*(\S+)\s*\|\s*(\S+)"
)
_TABLE_APP = re.compile(r"^\|\s+(\d+)\s+\S+\s+\S+\s+(\d+)\s+\S+\s+(.+?)\s+(\S+)\s*\|$")


def parse_summary(text: str) -> SmiReport:
    """The default ``nvidia-smi`` table: versions, each GPU's figures and the process list."""
    versions = _VERSIONS.search(text)
    gpus: list[GpuSample] = []
    apps: list[ComputeApp] = []
    for line, following in pairwise([*text.splitlines(), ""]):
        head, app = _TABLE_GPU.match(line), _TABLE_APP.match(line)
        use = _TABLE_USE.match(following)
        if head and use:
            gpus.append(_table_gpu(head, use))
        elif app and "MiB" in app.group(4):
            apps.append(_table_app(app))
    failure = None if gpus else classify_failure(text) or NoTelemetry(NoTelemetryKind.UNREADABLE)
    return SmiReport(
        clean_text(versions.group(1)) if versions else None,
        clean_text(versions.group(2)) if versions else None,
        tuple(gpus),
        tuple(apps),
        failure,
    )


def _table_gpu(head: re.Match[str], use: re.Match[str]) -> GpuSample:
    temp, power, cap, used, total, util = use.groups()
    return GpuSample(
        index=int(head.group(1)),
        name=clean_text(head.group(2)),
        bus_id=clean_text(head.group(3)),
        temperature_c=parse_reading(temp).value,
        power_w=parse_reading(power).value,
        power_limit_w=parse_reading(cap).value,
        memory_used_mib=parse_reading(used, TO_MIB).value,
        memory_total_mib=parse_reading(total, TO_MIB).value,
        util_pct=parse_reading(util).value,
    )


def _table_app(app: re.Match[str]) -> ComputeApp:
    return ComputeApp(
        pid=int(app.group(2)),
        process_name=clean_text(app.group(3)),
        used_memory_mib=parse_reading(app.group(4), TO_MIB).value,
        gpu_index=int(app.group(1)),
    )


def parse_query_xml(text: str) -> SmiReport:
    """``nvidia-smi -q -x``: versions, GPUs (with MIG mode) and processes. Entities are refused."""
    if "<!ENTITY" in text:
        return SmiReport(failure=NoTelemetry(NoTelemetryKind.UNREADABLE, "XML with entities"))
    try:
        root = ElementTree.fromstring(text)
    except ElementTree.ParseError as error:
        failure = classify_failure(text) or NoTelemetry(NoTelemetryKind.UNREADABLE, str(error))
        return SmiReport(failure=failure)
    gpus = root.findall("gpu")
    return SmiReport(
        _xml_text(root, "driver_version"),
        _xml_text(root, "cuda_version"),
        tuple(_xml_gpu(index, gpu) for index, gpu in enumerate(gpus)),
        tuple(app for index, gpu in enumerate(gpus) for app in _xml_apps(index, gpu)),
        None if gpus else NoTelemetry(NoTelemetryKind.NO_DEVICES),
    )


def _xml_text(node: ElementTree.Element, path: str) -> str | None:
    found = node.findtext(path)
    return clean_text(found) if found and found.strip() not in ("", "N/A") else None


def _xml_number(
    node: ElementTree.Element, path: str, scale: dict[str, float] | None = None
) -> float | None:
    return parse_reading(node.findtext(path) or "", scale).value


def _xml_gpu(index: int, gpu: ElementTree.Element) -> GpuSample:
    power = "gpu_power_readings/instant_power_draw"
    if _xml_number(gpu, power) is None:
        power = "gpu_power_readings/power_draw"
    return GpuSample(
        index=index,
        uuid=_xml_text(gpu, "uuid"),
        name=_xml_text(gpu, "product_name"),
        bus_id=_xml_text(gpu, "pci/pci_bus_id"),
        memory_used_mib=_xml_number(gpu, "fb_memory_usage/used", TO_MIB),
        memory_total_mib=_xml_number(gpu, "fb_memory_usage/total", TO_MIB),
        util_pct=_xml_number(gpu, "utilization/gpu_util"),
        mem_util_pct=_xml_number(gpu, "utilization/memory_util"),
        temperature_c=_xml_number(gpu, "temperature/gpu_temp"),
        power_w=_xml_number(gpu, power),
        power_limit_w=_xml_number(gpu, "gpu_power_readings/current_power_limit"),
        sm_clock_mhz=_xml_number(gpu, "clocks/sm_clock"),
        mig_mode=_xml_text(gpu, "mig_mode/current_mig"),
    )


def _xml_apps(index: int, gpu: ElementTree.Element) -> list[ComputeApp]:
    apps: list[ComputeApp] = []
    for info in gpu.findall("processes/process_info"):
        pid = parse_reading(info.findtext("pid") or "").value
        if pid is None or not pid.is_integer() or pid < 0:
            continue
        name = _xml_text(info, "process_name") or ""
        used = _xml_number(info, "used_memory", TO_MIB)
        apps.append(ComputeApp(int(pid), name, used, _xml_text(gpu, "uuid"), gpu_index=index))
    return apps
