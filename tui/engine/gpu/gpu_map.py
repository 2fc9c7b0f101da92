"""Which GPU each rank runs on, and how we know.

The answer comes from the best source available, per rank, and says which one it was so a person
can check it and correct it:

1. ``override``: the profile's ``gpu_map`` (``{"TP0" = 0, ...}``);
2. ``launch``: bringup launched the server, so ``CUDA_VISIBLE_DEVICES``, ``--base-gpu-id`` and
   ``--gpu-id-step`` are known and the engine's own placement rule applies;
3. ``process``: the process holding a GPU is the rank's (by PID, or by the process title SGLang
   and vLLM set, such as ``sglang::scheduler_TP3`` or ``VLLM::Worker_TP3``);
4. ``order``: a guess: rank numbers in GPU index order.

The placement rule (SGLang's, which vLLM's local ranks follow with base 0 and step 1) is
``base + (pp % pp_per_node) * tp_per_node + (tp % tp_per_node) * step``, plus one block of
``tp_per_node * pp_per_node`` GPUs per data-parallel replica unless attention DP shares them. The
result indexes into ``CUDA_VISIBLE_DEVICES`` when it is set.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum

from tui.engine.gpu.gpu_state import gpu_of
from tui.engine.gpu.gpu_values import ComputeApp, GpuSample

_PART = re.compile(r"(?<![A-Za-z])(DP|TP|PP|EP)_?(\d{1,4})(?!\d)")
_GLOBAL_RANK = re.compile(r"\brank=(\d{1,4})(?!\d)")


class MapSource(str, Enum):
    """Where a rank's GPU came from, best first."""

    OVERRIDE = "override"
    LAUNCH = "launch"
    PROCESS = "process"
    ORDER = "order"


@dataclass(frozen=True, slots=True)
class RankGpu:
    """One rank's GPU (``gpu`` is the nvidia-smi index, None when unknown) and the evidence."""

    rank: str
    gpu: int | None
    source: MapSource
    note: str = ""
    node: int = 0
    """The node whose host the GPU belongs to (a server may span several hosts)."""

    @property
    def label(self) -> str:
        """Short text such as ``GPU 4 (launch)`` or ``GPU ? (no GPU rank)``."""
        where = "?" if self.gpu is None else str(self.gpu)
        why = self.note if self.gpu is None and self.note else self.source.value
        return f"GPU {where} ({why})"


@dataclass(frozen=True, slots=True)
class LaunchLayout:
    """What the launch command says about placement (defaults are the engines' defaults)."""

    cuda_visible_devices: str | None = None
    base_gpu_id: int = 0
    gpu_id_step: int = 1
    tp_size: int = 1
    pp_size: int = 1
    dp_size: int = 1
    nnodes: int = 1
    dp_attention: bool = False


def rank_numbers(tag: str) -> dict[str, int]:
    """``{"DP": 0, "TP": 3}`` from a rank tag or a process title (``DP0 TP3 EP3``,
    ``Worker_TP3``, ``sglang::scheduler_DP0_TP3``, ``Worker rank=3``); empty for ``main`` and
    the like."""
    numbers: dict[str, int] = {}
    for kind, number in _PART.findall(tag):
        numbers.setdefault(kind, int(number))
    stated = _GLOBAL_RANK.search(tag)
    if not numbers and stated is not None:  # vLLM's ``Worker rank=3``: TP alone numbers ranks
        numbers["TP"] = int(stated[1])
    return numbers


def visible_devices(value: str | None, gpus: Sequence[GpuSample]) -> tuple[int, ...] | None:
    """``CUDA_VISIBLE_DEVICES`` as nvidia-smi indexes (GPU UUIDs resolved); None when unset
    or when an entry cannot be resolved (a MIG UUID, an unknown UUID, text)."""
    if value is None:
        return None
    indexes: list[int] = []
    for entry in (part.strip() for part in value.split(",")):
        if entry.isdigit():
            indexes.append(int(entry))
            continue
        match = next((g.index for g in gpus if g.uuid and g.uuid.startswith(entry)), None)
        if not entry or match is None:
            return None
        indexes.append(match)
    return tuple(indexes)


def device_for(numbers: Mapping[str, int], layout: LaunchLayout) -> int:
    """The device number (before ``CUDA_VISIBLE_DEVICES``) the placement rule gives a rank."""
    nodes = max(layout.nnodes, 1)
    tp_per_node = max(layout.tp_size // nodes, 1)
    pp_per_node = max(layout.pp_size // nodes, 1)
    device = layout.base_gpu_id
    device += (numbers.get("PP", 0) % pp_per_node) * tp_per_node
    device += (numbers.get("TP", 0) % tp_per_node) * max(layout.gpu_id_step, 1)
    if layout.dp_size > 1 and not layout.dp_attention:
        device += numbers.get("DP", 0) * tp_per_node * pp_per_node
    return device


def _from_layout(rank: str, layout: LaunchLayout, gpus: Sequence[GpuSample]) -> RankGpu:
    device = device_for(rank_numbers(rank), layout)
    visible = visible_devices(layout.cuda_visible_devices, gpus)
    if layout.cuda_visible_devices is None:
        return RankGpu(rank, device, MapSource.LAUNCH, f"device {device}")
    if visible is None or device >= len(visible):
        note = f"device {device} not in CUDA_VISIBLE_DEVICES={layout.cuda_visible_devices}"
        return RankGpu(rank, None, MapSource.LAUNCH, note)
    note = f"device {device} of CUDA_VISIBLE_DEVICES={layout.cuda_visible_devices}"
    return RankGpu(rank, visible[device], MapSource.LAUNCH, note)


def _from_process(
    rank: str, pid: int | None, apps: Sequence[ComputeApp], gpus: Sequence[GpuSample]
) -> RankGpu | None:
    wanted = rank_numbers(rank)
    for app in apps:
        named = rank_numbers(app.process_name)
        by_pid = pid is not None and app.pid == pid
        by_title = bool(named) and all(named.get(k) == v for k, v in wanted.items() if k != "EP")
        gpu = gpu_of(app, gpus) if by_pid or by_title else None
        if gpu is not None:
            how = "pid" if by_pid else "process"
            return RankGpu(rank, gpu, MapSource.PROCESS, f"{how} {app.pid} {app.process_name}")
    return None


def _from_order(rank: str, gpus: Sequence[GpuSample], tp_size: int, nnodes: int) -> RankGpu:
    numbers = rank_numbers(rank)
    if not numbers:
        return RankGpu(rank, None, MapSource.ORDER, "no GPU rank")
    device = device_for(numbers, LaunchLayout(tp_size=max(tp_size, 1), nnodes=max(nnodes, 1)))
    indexes = sorted(gpu.index for gpu in gpus)
    if indexes and device >= len(indexes):
        return RankGpu(rank, None, MapSource.ORDER, f"only {len(indexes)} GPUs seen")
    return RankGpu(rank, indexes[device] if indexes else device, MapSource.ORDER)


def map_ranks(
    ranks: Sequence[str],
    *,
    gpus: Sequence[GpuSample] = (),
    override: Mapping[str, int] | None = None,
    layout: LaunchLayout | None = None,
    apps: Sequence[ComputeApp] = (),
    rank_pids: Mapping[str, int] | None = None,
    tp_size: int | None = None,
    nnodes: int = 1,
) -> tuple[RankGpu, ...]:
    """Each rank's GPU from the best source available for it (see the module docstring).
    ``ranks`` and ``gpus`` are one host's; for a server over several hosts, ``tp_size`` and
    ``nnodes`` are the whole server's (else the ranks given are taken for all of them)."""
    if tp_size is None:
        tp_size = 1 + max((rank_numbers(rank).get("TP", 0) for rank in ranks), default=0)
    placed: list[RankGpu] = []
    for rank in ranks:
        if override is not None and rank in override:
            placed.append(RankGpu(rank, override[rank], MapSource.OVERRIDE, "gpu_map"))
        elif layout is not None and rank_numbers(rank):
            placed.append(_from_layout(rank, layout, gpus))
        else:
            pid = (rank_pids or {}).get(rank)
            found = _from_process(rank, pid, apps, gpus) if rank_numbers(rank) else None
            placed.append(found or _from_order(rank, gpus, tp_size, nnodes))
    return tuple(placed)
