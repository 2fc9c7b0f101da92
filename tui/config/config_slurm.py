"""The ``[profiles.NAME.slurm]`` table: how a profile's server is submitted to Slurm.

Used when the profile says ``scheduler = "slurm"``; described in docs/configuration.md and
docs/cluster.md.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from tui.config.config_text import QUOTE_LIMIT
from tui.config.ssh_targets import parse_ssh_target
from tui.config.table_reader import Table
from tui.engine.logs.sanitize import printable

SCHEDULERS = ("ssh", "slurm")


@dataclass(frozen=True, slots=True)
class SlurmConfig:
    """The job's shape and options, and where Slurm's client commands run."""

    login: str | None = None
    """The login host (an ssh_config alias, ``user@host[:port]``); None: this machine."""
    partition: str | None = None
    nodes: int = 1
    gpus_per_node: int | None = None
    time: str | None = None
    account: str | None = None
    qos: str | None = None
    sbatch_options: tuple[str, ...] = ()
    preamble: str | None = None
    container: tuple[str, ...] = ()


def _arguments(table: Table, key: str) -> tuple[str, ...]:
    value = table.data.get(key)
    if not table.has(key):
        return ()
    if isinstance(value, str):
        try:
            return tuple(shlex.split(table.check_text(key, value)))
        except ValueError as exc:
            raise table.error(key, f"cannot split into arguments: {exc}") from None
    return tuple(table.items(key, [], lambda item, index: table.check_text(key, item, index)))


def _login(table: Table) -> str | None:
    value = table.text("login", None)
    if value is None:
        return None
    try:
        parse_ssh_target(value)
    except ValueError as exc:
        raise table.error("login", printable(str(exc), QUOTE_LIMIT)) from None
    return value


def build_slurm(table: Table) -> SlurmConfig:
    """The table's values, each checked."""
    slurm = SlurmConfig(
        login=table.guard(None, _login, table),
        partition=table.text("partition", None),
        nodes=table.integer("nodes", 1, 1, 100_000),
        gpus_per_node=table.integer("gpus_per_node", None, 0, 1024),
        time=table.text("time", None),
        account=table.text("account", None),
        qos=table.text("qos", None),
        sbatch_options=table.guard((), _arguments, table, "sbatch_options"),
        preamble=table.text("preamble", None),
        container=table.guard((), _arguments, table, "container"),
    )
    table.finish()
    return slurm
