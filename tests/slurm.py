"""A throwaway Slurm cluster on 127.0.0.1 for tests: munged, slurmctld and two slurmd daemons.

``start_cluster(workdir)`` writes a munge key and a ``slurm.conf`` under ``workdir`` (every
state, spool, pid and log path is there; no system folder is touched), starts a private
``munged``, the controller and one ``slurmd`` per node (``gpu1`` and ``gpu2``, both
``NodeAddr=127.0.0.1`` on ports of their own), and waits until both nodes are idle. Accounting
is off, so ``sacct`` has nothing to say; ended jobs stay visible to ``scontrol`` and ``squeue``
for ``MinJobAge`` seconds. The client commands find the cluster through ``SLURM_CONF``
(:meth:`SlurmCluster.env`). ``stop()`` cancels every job, then stops every daemon.

Other test packages can import from here::

    from tests.slurm import slurm_missing, start_cluster
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tests.net import free_port

DAEMONS = ("munged", "slurmctld", "slurmd")
CLIENTS = ("sbatch", "squeue", "scontrol", "scancel", "sinfo")
NODES = ("gpu1", "gpu2")
PARTITION = "gpu"
READY_TIMEOUT = 30.0
_SBIN = ("/usr/sbin", "/usr/local/sbin", "/sbin")


def _binary(name: str) -> str | None:
    for folder in _SBIN:
        path = Path(folder) / name
        if os.access(path, os.X_OK):
            return str(path)
    return shutil.which(name)


def slurm_missing() -> str | None:
    """Why a local Slurm cannot run here (a missing program, not root), or None."""
    missing = [name for name in DAEMONS + CLIENTS if _binary(name) is None]
    if missing:
        return f"Slurm is not installed here (missing {', '.join(missing)}; see .ci/run)"
    if os.geteuid() != 0:
        return "the loopback Slurm cluster runs its daemons as root; these tests need root"
    return None


def _conf(workdir: Path, ports: Sequence[int]) -> str:
    controller, slurmd_port, *node_ports = ports
    lines = [
        "ClusterName=bringup-test",
        "SlurmctldHost=localhost",
        f"SlurmctldPort={controller}",
        f"SlurmdPort={slurmd_port}",
        "AuthType=auth/munge",
        "CredType=cred/munge",
        f"AuthInfo=socket={workdir / 'munge' / 'munge.sock'}",
        "SlurmUser=root",
        "SlurmdUser=root",
        f"StateSaveLocation={workdir / 'state'}",
        f"SlurmdSpoolDir={workdir / 'spool' / '%n'}",
        f"SlurmctldPidFile={workdir / 'run' / 'slurmctld.pid'}",
        f"SlurmdPidFile={workdir / 'run' / 'slurmd-%n.pid'}",
        f"SlurmctldLogFile={workdir / 'log' / 'slurmctld.log'}",
        f"SlurmdLogFile={workdir / 'log' / 'slurmd-%n.log'}",
        "ProctrackType=proctrack/linuxproc",
        "TaskPlugin=task/none",
        "SchedulerType=sched/backfill",
        "SelectType=select/cons_tres",
        "SelectTypeParameters=CR_Core",
        "ReturnToService=2",
        "MpiDefault=none",
        "JobAcctGatherType=jobacct_gather/none",
        "AccountingStorageType=accounting_storage/none",
        "JobCompType=jobcomp/none",
        "SlurmctldTimeout=30",
        "SlurmdTimeout=30",
        "InactiveLimit=0",
        "MinJobAge=300",
        "KillWait=2",
        # A time limit is checked twice a minute by default; the tests use one-minute limits.
        "SchedulerParameters=bf_interval=1",
    ]
    for name, port in zip(NODES, node_ports, strict=True):
        lines.append(
            f"NodeName={name} NodeHostname=localhost NodeAddr=127.0.0.1 Port={port} "
            "CPUs=2 State=UNKNOWN"
        )
    lines.append(f"PartitionName={PARTITION} Nodes=gpu[1-2] Default=YES MaxTime=INFINITE State=UP")
    return "\n".join(lines) + "\n"


@dataclass
class SlurmCluster:
    """A running loopback cluster and the environment its client commands need."""

    workdir: Path
    conf: Path
    munge_socket: Path
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def env(self) -> dict[str, str]:
        """This process's environment with ``SLURM_CONF`` pointing at the cluster."""
        return {**os.environ, "SLURM_CONF": str(self.conf)}

    def run(self, *argv: str, check: bool = True) -> str:
        """A client command's standard output (``scontrol``, ``squeue``, ...)."""
        done = subprocess.run(
            argv, env=self.env(), capture_output=True, text=True, timeout=30, check=False
        )
        if check and done.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)} failed: {done.stderr.strip()}")
        return done.stdout

    def job_ids(self) -> list[str]:
        """Jobs still in the queue (pending, running or completing)."""
        out = self.run("squeue", "--noheader", "--format=%i", check=False)
        return out.split()

    def job_field(self, job_id: str, name: str) -> str | None:
        """One ``Name=value`` field of ``scontrol show job``."""
        for word in self.run("scontrol", "show", "job", "--oneliner", job_id).split():
            key, _, value = word.partition("=")
            if key == name:
                return value
        return None

    def wait_job_gone(self, job_id: str, timeout: float = 30.0) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if job_id not in self.job_ids():
                return True
            time.sleep(0.2)
        return False

    def cancel_all(self) -> None:
        ids = self.job_ids()
        if ids:
            self.run("scancel", "--full", *ids, check=False)
            for job_id in ids:
                self.wait_job_gone(job_id, 20.0)

    def log(self, name: str) -> str:
        path = self.workdir / "log" / name
        return path.read_text(errors="replace") if path.exists() else ""

    def stop(self) -> None:
        with contextlib.suppress(Exception):
            self.cancel_all()
        for process in reversed(self.processes):
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in reversed(self.processes):
            _reap(process)


def _reap(process: subprocess.Popen[bytes]) -> None:
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _munge_key(path: Path) -> None:
    path.write_bytes(os.urandom(1024))
    path.chmod(0o400)


def _start(cluster: SlurmCluster, argv: list[str], log: Path) -> None:
    with log.open("ab") as out:
        process = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
            env=cluster.env(), start_new_session=True,
        )  # fmt: skip
    cluster.processes.append(process)


def _wait_socket(path: Path, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + READY_TIMEOUT
    while not path.exists():
        if process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"munged did not start (exit {process.poll()})")
        time.sleep(0.05)


def _wait_idle(cluster: SlurmCluster) -> None:
    deadline = time.monotonic() + READY_TIMEOUT
    states = ""
    while time.monotonic() < deadline:
        for process in cluster.processes:
            if process.poll() is not None:
                raise RuntimeError(f"{process.args!r} exited: {cluster.log('slurmctld.log')}")
        states = cluster.run("sinfo", "--noheader", "--Node", "--format=%N %t", check=False)
        idle = [line.split()[0] for line in states.splitlines() if line.split()[1:] == ["idle"]]
        if sorted(idle) == sorted(NODES):
            return
        time.sleep(0.2)
    raise RuntimeError(f"the nodes did not become idle: {states!r}")


def start_cluster(workdir: Path) -> SlurmCluster:
    """Start munged, slurmctld and a slurmd per node under ``workdir``; wait until idle."""
    for name in ("munge", "state", "spool", "run", "log"):
        (workdir / name).mkdir(parents=True, exist_ok=True)
    munge = workdir / "munge"
    munge.chmod(0o700)
    _munge_key(munge / "munge.key")
    conf = workdir / "slurm.conf"
    conf.write_text(_conf(workdir, [free_port() for _ in range(2 + len(NODES))]))
    cluster = SlurmCluster(workdir, conf, munge / "munge.sock")
    munged = _binary("munged") or "munged"
    _start(cluster, [
        munged, "--foreground", "--force", f"--key-file={munge / 'munge.key'}",
        f"--socket={cluster.munge_socket}", f"--pid-file={munge / 'munged.pid'}",
        f"--log-file={workdir / 'log' / 'munged.log'}", f"--seed-file={munge / 'munged.seed'}",
    ], workdir / "log" / "munged.out")  # fmt: skip
    try:
        _wait_socket(cluster.munge_socket, cluster.processes[0])
        slurmctld = _binary("slurmctld") or "slurmctld"
        _start(cluster, [slurmctld, "-D", "-i", "-f", str(conf)], workdir / "log" / "ctld.out")
        slurmd = _binary("slurmd") or "slurmd"
        for node in NODES:
            _start(cluster, [slurmd, "-D", "-f", str(conf), "-N", node], workdir / "log" / "d.out")
        _wait_idle(cluster)
    except BaseException:
        cluster.stop()
        raise
    return cluster


@contextlib.contextmanager
def running_cluster(workdir: Path) -> Iterator[SlurmCluster]:
    cluster = start_cluster(workdir)
    try:
        yield cluster
    finally:
        cluster.stop()
