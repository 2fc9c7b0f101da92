"""Dump one rank's Python stacks with ``py-spy dump``, on the host that runs it.

The rank's process is found by its process title (SGLang names its schedulers
``sglang::scheduler_TP3``, vLLM its workers ``VLLM::Worker_TP0``) among the members of the run's
process group only, so a rank of another server on the same host is never touched. The remote
script is a constant; the process group, the py-spy command and the titles reach it as
positional parameters (``sh -c SCRIPT NAME ARG...``), never as shell text. When ``py-spy`` is
not installed the script says so and exits 127, and ``StackDump.message`` tells the user how to
fix it. Link failures come back as a ``StackDump`` too, never as an exception.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass

from tui.engine.logs.sanitize import sanitize_line, sanitize_text
from tui.engine.servers import registry
from tui.io.transport.deadline import within
from tui.io.transport.host_session import HostSession
from tui.io.transport.transport import CommandTimedOut, LinkLost, Transport, TransportError

NOT_INSTALLED = 127
NOT_FOUND = 3
TEXT_LIMIT = 256 * 1024
DUMP_TIMEOUT = 60.0

_SCRIPT = r"""
group=$1 sudo=$2 spy=$3
shift 3
if ! command -v "$spy" >/dev/null 2>&1; then
  echo "py-spy is not installed on this host" >&2
  exit 127
fi
pids=$(cat /proc/[0-9]*/stat 2>/dev/null | awk -v g="$group" '
  match($0, /\) [^)]*$/) {
    n = split(substr($0, RSTART + 2), f, " ")
    if (n >= 3 && f[3] == g) print $1
  }')
for pid in $pids; do
  title=$(tr '\0' '\n' < "/proc/$pid/cmdline" 2>/dev/null | head -n 1)
  title=${title%"${title##*[! ]}"}
  for want in "$@"; do
    [ "$title" = "$want" ] || continue
    echo "py-spy dump --pid $pid ($want)"
    if [ "$sudo" = sudo ]; then exec sudo -n "$spy" dump --pid "$pid"; fi
    exec "$spy" dump --pid "$pid"
  done
done
echo "no process titled $1 in process group $group" >&2
exit 3
"""


def rank_titles(engine: str, tag: str) -> tuple[str, ...]:
    """The process titles a rank tagged ``tag`` in the log may carry, most likely first: its
    engine's (``Dialect.process_titles``), or every engine's when it is not known."""
    return registry.process_titles(engine, tag)


def dump_argv(
    process_group: int, titles: Sequence[str], *, sudo: bool = False, py_spy: str = "py-spy"
) -> list[str]:
    """The argv that dumps the stacks of the first group member titled one of ``titles``."""
    if process_group <= 1:
        raise ValueError(f"not a server's process group: {process_group}")
    if not titles:
        raise ValueError("no process title to look for")
    mode = "sudo" if sudo else "-"
    return ["sh", "-c", _SCRIPT, "bringup-stacks", str(process_group), mode, py_spy, *titles]


@dataclass(frozen=True, slots=True)
class StackDump:
    """What the dump gave: the stacks (safe to show), or a message saying why there are none."""

    ok: bool
    text: str
    message: str


def interpret(
    status: int, stdout: bytes, stderr: bytes, *, tag: str, host: str = "the host"
) -> StackDump:
    """Turn the script's exit status and output into stacks or a clear message."""
    out, err = _clean(stdout), _clean(stderr).strip()
    if status == 0:
        return StackDump(True, out, f"stacks of {tag} on {host}")
    if status == NOT_INSTALLED and "py-spy is not installed" in err:
        hint = f"py-spy is not installed on {host}: run 'pip install py-spy' there to dump stacks"
        return StackDump(False, "", hint)
    if status == NOT_FOUND:
        return StackDump(False, "", f"no process of {tag} in the run's process group ({err})")
    detail = err.splitlines()[-1] if err else f"exit status {status}"
    if "permission" in err.lower() or "ptrace" in err.lower():
        detail += " (py-spy needs ptrace permission: run it as the server's user or with sudo)"
    return StackDump(False, out, f"py-spy failed for {tag} on {host}: {detail}")


def _clean(data: bytes) -> str:
    """Remote bytes made safe to show (escapes stripped, controls neutralised), bounded."""
    return sanitize_text(data[:TEXT_LIMIT].decode("utf-8", "replace"))


async def dump_stacks(
    transport: Transport,
    *,
    process_group: int,
    engine: str,
    tag: str,
    sudo: bool = False,
    py_spy: str = "py-spy",
    timeout: float = DUMP_TIMEOUT,
) -> StackDump:
    """Find ``tag``'s process in ``process_group`` on ``transport``'s host and dump its stacks."""
    argv = dump_argv(process_group, rank_titles(engine, tag), sudo=sudo, py_spy=py_spy)
    try:
        result = await transport.run(argv, timeout=timeout)
    except (LinkLost, CommandTimedOut) as error:
        return StackDump(False, "", f"cannot dump the stacks of {tag}: {error}")
    return interpret(result.status, result.stdout, result.stderr, tag=tag, host=transport.label)


LINK_TIMEOUT_SECONDS = 15.0


async def dump_rank_stacks(
    session: HostSession, *, process_group: int, engine: str, tag: str, py_spy: str = "py-spy"
) -> StackDump:
    """:func:`dump_stacks` through the host session's link; every failure is a ``StackDump``."""
    try:
        transport = await within(session.transport(), LINK_TIMEOUT_SECONDS)
        return await dump_stacks(
            transport, process_group=process_group, engine=engine, tag=tag, py_spy=py_spy
        )
    except (TransportError, OSError, ValueError, asyncio.TimeoutError) as exc:
        detail = sanitize_line(str(exc)) or type(exc).__name__
        return StackDump(False, "", f"cannot dump the stacks of {tag}: {detail}")
