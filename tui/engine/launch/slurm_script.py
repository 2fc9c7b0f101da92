"""The sbatch submission of a Slurm profile: the ``sbatch`` argv and the batch script. Pure.

Every value from the profile reaches the job as a literal: options go to ``sbatch`` as argv
elements (never through a shell), and inside the script each value is a single-quoted word
(:func:`shlex.quote`), the node's task script included, so ``;``, ``$()``, quotes and newlines
stay text. Only ``preamble`` is shell text, run as written on every node before the server (a
``module load``, a ``source`` of an environment).

The batch script learns the rendezvous address from the job, not from DNS: the first host of
``SLURM_JOB_NODELIST`` and that node's ``NodeAddr`` (``scontrol show node``). It then starts
one task per node with ``srun``; each task writes its own log,
``<log_dir>/<profile>-<jobid>-node<N>.log``, and fills the run-time placeholders from Slurm:

``{node_rank}`` ``$SLURM_NODEID``, ``{host}`` ``$SLURMD_NODENAME``, ``{log}`` the node's log,
``{dist_init_addr}`` ``<node 0 address>:<port>`` (unless ``launch.dist_init_addr`` is set).
"""

from __future__ import annotations

import posixpath
import shlex
import string
from collections.abc import Mapping
from dataclasses import dataclass

from tui.engine.launch.launch_plan import (
    DEFAULT_DIST_PORT,
    PLACEHOLDERS,
    LaunchSpec,
    PlanError,
    check_spec,
    run_stem,
)

RUNTIME = {
    "node_rank": "SLURM_NODEID",
    "host": "SLURMD_NODENAME",
    "log": "BRINGUP_LOG",
    "dist_init_addr": "BRINGUP_DIST_INIT_ADDR",
}
"""Placeholders filled on the node while the job runs, and the variable that holds each."""


@dataclass(frozen=True, slots=True)
class SlurmSpec:
    """A Slurm profile's job: the launch values and the scheduler's options.

    ``launch.log_dir`` must be an absolute folder on the filesystem the nodes share.
    """

    launch: LaunchSpec
    nodes: int = 1
    partition: str | None = None
    gpus_per_node: int | None = None
    time: str | None = None
    account: str | None = None
    qos: str | None = None
    sbatch_options: tuple[str, ...] = ()
    preamble: str | None = None
    container: tuple[str, ...] = ()
    dist_port: int = DEFAULT_DIST_PORT

    @property
    def stem(self) -> str:
        return run_stem(self.launch.profile, 0, 1)

    @property
    def job_name(self) -> str:
        return f"bringup-{self.stem}"


def node_log(log_dir: str, profile: str, job_id: str, node_rank: int) -> str:
    """``<log_dir>/<profile>-<jobid>-node<N>.log``, the log of one node of a job."""
    return posixpath.join(log_dir, f"{run_stem(profile, 0, 1)}-{job_id}-node{node_rank}.log")


def batch_log(log_dir: str, profile: str, job_id: str = "%j") -> str:
    """The batch script's own output (Slurm's ``%j`` is the job id)."""
    return posixpath.join(log_dir, f"{run_stem(profile, 0, 1)}-{job_id}-batch.log")


def _check(spec: SlurmSpec) -> None:
    check_spec(spec.launch)
    if not spec.launch.log_dir.startswith("/"):
        raise PlanError(f"log_dir: {spec.launch.log_dir!r} must be an absolute shared folder")
    if spec.nodes < 1:
        raise PlanError("slurm.nodes: must be at least 1")


def sbatch_argv(spec: SlurmSpec) -> list[str]:
    """``sbatch`` with the profile's options; the script goes to its standard input."""
    _check(spec)
    launch = spec.launch
    argv = [
        "sbatch", "--parsable", f"--job-name={spec.job_name}", f"--nodes={spec.nodes}",
        "--ntasks-per-node=1", f"--output={batch_log(launch.log_dir, launch.profile)}",
        f"--chdir={launch.cwd or launch.log_dir}",
    ]  # fmt: skip
    optional = (
        ("partition", spec.partition), ("gpus-per-node", spec.gpus_per_node),
        ("time", spec.time), ("account", spec.account), ("qos", spec.qos),
    )  # fmt: skip
    argv += [f"--{name}={value}" for name, value in optional if value is not None]
    return argv + list(spec.sbatch_options)


def _values(spec: SlurmSpec) -> dict[str, str]:
    launch = spec.launch
    values = dict(launch.values)
    values.update(profile=launch.profile, nnodes=str(spec.nodes), log_dir=launch.log_dir)
    if launch.port is not None:
        values["port"] = str(launch.port)
    if launch.dist_init_addr:
        values["dist_init_addr"] = launch.dist_init_addr
    named = (("model", launch.model), ("drafter", launch.drafter))
    values.update({name: value for name, value in named if value is not None})
    return values


def shell_word(part: str, values: Mapping[str, str], where: str) -> str:
    """One argv element as a shell word: literal text quoted, run-time placeholders as
    ``"$VARIABLE"``, so the element stays one argument whatever it holds."""
    try:
        pieces = list(string.Formatter().parse(part))
    except ValueError as exc:
        raise PlanError(f"{where}: {part!r}: {exc}") from None
    out: list[str] = []
    for text, name, spec, conversion in pieces:
        if text:
            out.append(shlex.quote(text))
        if name is None:
            continue
        if name not in PLACEHOLDERS or spec or conversion:
            known = ", ".join(f"{{{p}}}" for p in sorted(PLACEHOLDERS))
            raise PlanError(f"{where}: unknown placeholder {{{name}}} (known: {known})")
        if name in values:
            out.append(shlex.quote(values[name]))
        elif name in RUNTIME:
            out.append(f'"${RUNTIME[name]}"')
        else:
            raise PlanError(f"{where}: uses {{{name}}} but the profile sets no launch.{name}")
    return "".join(out) or "''"


def _environment(spec: SlurmSpec) -> list[str]:
    launch = spec.launch
    lines = [f"export {name}={shlex.quote(value)}" for name, value in launch.env]
    if launch.venv:
        venv = shlex.quote(launch.venv)
        lines += [
            f'[ -d {venv}/bin ] || {{ echo "no virtual environment at "{venv}; exit 1; }}',
            f'export VIRTUAL_ENV={venv} PATH={venv}/bin:"$PATH"',
        ]
    if launch.conda_env:
        env = shlex.quote(launch.conda_env)
        lines.append(f'eval "$(conda shell.bash hook)" && conda activate {env} || exit 1')
    return lines


def task_script(spec: SlurmSpec) -> str:
    """What ``srun`` runs on every node: its log, its folder, its environment, the server."""
    launch, values = spec.launch, _values(spec)
    argv = [
        shell_word(part, values, f"slurm.container[{index}]")
        for index, part in enumerate(spec.container)
    ] + [
        shell_word(part, values, f"launch.command[{index}]")
        for index, part in enumerate(launch.command)
    ]
    log = shlex.quote(posixpath.join(launch.log_dir, f"{spec.stem}-"))
    lines = [
        "set -u",
        f'BRINGUP_LOG={log}"$SLURM_JOB_ID"-node"$SLURM_NODEID".log',
        "export BRINGUP_LOG BRINGUP_NODE_RANK=$SLURM_NODEID",
        'exec >>"$BRINGUP_LOG" 2>&1 </dev/null',
    ]
    if launch.cwd:
        lines.append(f"cd -- {shlex.quote(launch.cwd)} || exit 1")
    lines += _environment(spec)
    if spec.preamble:
        lines.append(spec.preamble)
    lines.append("exec " + " ".join(argv))
    return "\n".join(lines) + "\n"


_RENDEZVOUS = """first=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
addr=$(scontrol show node --oneliner "$first" 2>/dev/null | tr ' ' '\\n' \\
  | sed -n 's/^NodeAddr=//p' | head -n 1)
addr=${addr:-$first}
case $addr in *:*) addr="[$addr]" ;; esac
export BRINGUP_NODE0_ADDR=$addr"""


def batch_script(spec: SlurmSpec) -> str:
    """The whole batch script, for ``sbatch``'s standard input."""
    _check(spec)
    task = task_script(spec)
    dist = f'export BRINGUP_DIST_INIT_ADDR="$BRINGUP_NODE0_ADDR":{spec.dist_port}'
    srun = (
        f"srun --nodes={spec.nodes} --ntasks={spec.nodes} --ntasks-per-node=1 "
        f"--kill-on-bad-exit=1 bash -c {shlex.quote(task)}"
    )
    header = [
        "#!/bin/bash",
        f"# Rendered by bringup for profile {shlex.quote(spec.launch.profile)}: "
        "one task per node, each writing its own log.",
        "set -u",
    ]
    return "\n".join([*header, _RENDEZVOUS, dist, srun, ""])
