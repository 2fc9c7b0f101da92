"""Checks made before a launch, and the reasons to refuse one. Pure.

A launch is refused when the port is taken (saying by which process), when the profile's previous
run on the node still has live processes, when a GPU the run needs holds another process's
memory, when a local model path does not exist, or when the host cannot start a process group.
A check the host cannot answer (no ``nvidia-smi``, no ``ss`` and no ``/proc``) is skipped with a
note instead of refusing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

from tui.engine.gpu.gpu_csv import ComputeApp
from tui.engine.launch.launch_plan import NodePlan
from tui.engine.launch.launch_report import HostFacts


class RefusalKind(str, Enum):
    """Why a launch was refused."""

    PORT_IN_USE = "port_in_use"
    PREVIOUS_RUN_ALIVE = "previous_run_alive"
    GPU_BUSY = "gpu_busy"
    MODEL_MISSING = "model_missing"
    NO_SETSID = "no_setsid"
    READ_ONLY = "read_only"
    HOST_FAILED = "host_failed"

    @property
    def forceable(self) -> bool:
        """Whether ``--force`` (or confirming in the app) may launch despite this refusal."""
        return self not in (RefusalKind.NO_SETSID, RefusalKind.READ_ONLY, RefusalKind.HOST_FAILED)


@dataclass(frozen=True, slots=True)
class Refusal:
    """One reason not to launch, as a sentence naming the host."""

    kind: RefusalKind
    host: str
    message: str


@dataclass(frozen=True, slots=True)
class Preflight:
    """The outcome of the checks on one node: refusals, and notes about skipped checks."""

    host: str
    refusals: tuple[Refusal, ...] = ()
    notes: tuple[str, ...] = ()
    previous_run: str | None = None

    @property
    def ok(self) -> bool:
        return not self.refusals


def _port(plan: NodePlan, facts: HostFacts) -> tuple[list[Refusal], list[str]]:
    if plan.port is None:
        return [], []
    if facts.listen_source in (None, "none"):
        return [], [f"{plan.host}: cannot tell whether port {plan.port} is free (no ss, no /proc)"]
    if not facts.listeners:
        return [], []
    users = ", ".join(listener.describe() for listener in facts.listeners)
    message = f"port {plan.port} on {plan.host} is already in use by {users}"
    return [Refusal(RefusalKind.PORT_IN_USE, plan.host, message)], []


def _previous(plan: NodePlan, facts: HostFacts) -> list[Refusal]:
    alive = facts.ours()
    if not alive:
        return []
    ident = facts.identity
    group = f" in process group {ident.pid}" if ident else ""
    count = f"{len(alive)} process{'es' if len(alive) != 1 else ''}"
    message = (
        f"the previous run {facts.run_id} of {plan.profile} is still alive on {plan.host} "
        f"({count}{group}); stop it first (bringup kill {plan.profile})"
    )
    return [Refusal(RefusalKind.PREVIOUS_RUN_ALIVE, plan.host, message)]


def needed_gpus(plan: NodePlan, gpus: Sequence[tuple[int, str]]) -> set[str] | None:
    """UUIDs of the GPUs the run may use: ``CUDA_VISIBLE_DEVICES`` resolved, else all.

    None when the selection names something that cannot be resolved (then every GPU counts).
    """
    every = {uuid for _, uuid in gpus}
    if plan.gpus is None:
        return every
    by_index = {str(index): uuid for index, uuid in gpus}
    chosen: set[str] = set()
    for item in plan.gpus:
        if item in by_index:
            chosen.add(by_index[item])
        elif item in every:
            chosen.add(item)
        else:
            return None
    return chosen


def _gpu_label(app: ComputeApp, gpus: Sequence[tuple[int, str]]) -> str:
    index = next((i for i, uuid in gpus if uuid == app.gpu_uuid), None)
    where = f"GPU {index}" if index is not None else (app.gpu_uuid or "a GPU")
    memory = f" using {app.used_memory_mib:.0f} MiB" if app.used_memory_mib is not None else ""
    name = f" ({app.process_name})" if app.process_name else ""
    return f"pid {app.pid}{name}{memory} on {where}"


def _gpu(plan: NodePlan, facts: HostFacts) -> tuple[list[Refusal], list[str]]:
    if facts.gpu_source != "nvidia-smi":
        why = "; ".join(facts.gpu_errors) or "nvidia-smi not found"
        return [], [f"{plan.host}: GPU check skipped ({why})"]
    wanted = needed_gpus(plan, facts.gpus)
    busy = [
        app
        for app in facts.gpu_apps
        if wanted is None or app.gpu_uuid is None or app.gpu_uuid in wanted
    ]
    if not busy:
        return [], []
    shown = "; ".join(_gpu_label(app, facts.gpus) for app in busy[:4])
    more = f" and {len(busy) - 4} more" if len(busy) > 4 else ""
    message = f"GPUs this run needs on {plan.host} are busy: {shown}{more}"
    return [Refusal(RefusalKind.GPU_BUSY, plan.host, message)], []


def _model(plan: NodePlan, facts: HostFacts) -> list[Refusal]:
    if plan.model_path is None or facts.model_exists is not False:
        return []
    message = f"the model path {plan.model_path} does not exist on {plan.host}"
    return [Refusal(RefusalKind.MODEL_MISSING, plan.host, message)]


def evaluate(plan: NodePlan, facts: HostFacts) -> Preflight:
    """The refusals and notes for launching ``plan`` on a host that reported ``facts``."""
    refusals: list[Refusal] = []
    notes: list[str] = []
    if facts.errors:
        message = f"{plan.host}: " + "; ".join(facts.errors)
        refusals.append(Refusal(RefusalKind.HOST_FAILED, plan.host, message))
    port_refusals, port_notes = _port(plan, facts)
    gpu_refusals, gpu_notes = _gpu(plan, facts)
    refusals += port_refusals + _previous(plan, facts) + gpu_refusals + _model(plan, facts)
    notes += port_notes + gpu_notes
    if facts.has_setsid is False:
        message = f"setsid (util-linux) is not installed on {plan.host}"
        refusals.append(Refusal(RefusalKind.NO_SETSID, plan.host, message))
    return Preflight(plan.host, tuple(refusals), tuple(notes), facts.run_id)
