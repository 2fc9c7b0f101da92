"""Dump one rank's Python stacks with ``py-spy dump``, on the host that runs it.

The rank's process is found by its process title (SGLang names its schedulers
``sglang::scheduler_TP3``, vLLM its workers ``VLLM::Worker_TP0``) among the members of the run's
process group only, so a rank of another server on the same host is never touched. The remote
script is a constant; the process group and the titles reach it as positional parameters
(``sh -c SCRIPT NAME ARG...``), never as shell text. When ``py-spy`` is not installed the script
says so and exits 127, and ``StackDump.message`` tells the user how to fix it.
"""

from __future__ import annotations

import asyncio
import shlex
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass

from tui.engine.sanitize import sanitize_text

NOT_INSTALLED = 127
NOT_FOUND = 3
TEXT_LIMIT = 256 * 1024

_SCRIPT = r"""
group=$1 sudo=$2
shift 2
if ! command -v py-spy >/dev/null 2>&1; then
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
    if [ "$sudo" = sudo ]; then exec sudo -n py-spy dump --pid "$pid"; fi
    exec py-spy dump --pid "$pid"
  done
done
echo "no process titled $1 in process group $group" >&2
exit 3
"""

Runner = Callable[[str], Awaitable[tuple[int, str, str]]]
"""Runs one shell command on the host; returns ``(exit status, stdout, stderr)``."""


def rank_titles(engine: str, tag: str) -> tuple[str, ...]:
    """The process titles a rank tagged ``tag`` in the log may carry, most likely first."""
    sglang = "sglang::scheduler" + "".join(f"_{part}" for part in tag.split() if part != "main")
    vllm = f"VLLM::{tag}"
    if engine == "sglang":
        return (sglang,)
    if engine == "vllm":
        return (vllm,)
    return (sglang, vllm)


def dump_argv(process_group: int, titles: Sequence[str], *, sudo: bool = False) -> list[str]:
    """The argv that dumps the stacks of the first group member titled one of ``titles``."""
    if process_group <= 0:
        raise ValueError(f"not a process group id: {process_group}")
    if not titles:
        raise ValueError("no process title to look for")
    return ["sh", "-c", _SCRIPT, "bringup-stacks", str(process_group), "sudo" if sudo else "-",
            *titles]  # fmt: skip


def dump_command(process_group: int, titles: Sequence[str], *, sudo: bool = False) -> str:
    """``dump_argv`` as one shell command line, every part quoted (for an SSH exec request)."""
    return shlex.join(dump_argv(process_group, titles, sudo=sudo))


@dataclass(frozen=True, slots=True)
class StackDump:
    """What the dump gave: the stacks, or a message saying why there are none."""

    ok: bool
    text: str
    message: str


def interpret(
    status: int, stdout: str, stderr: str, *, tag: str, host: str = "the host"
) -> StackDump:
    """Turn the script's exit status and output into stacks or a clear message."""
    out, err = _clean(stdout), _clean(stderr)
    if status == 0:
        return StackDump(True, out, f"stacks of {tag}")
    if status == NOT_INSTALLED and "py-spy is not installed" in err:
        hint = f"py-spy is not installed on {host}: run 'pip install py-spy' there to dump stacks"
        return StackDump(False, "", hint)
    if status == NOT_FOUND:
        return StackDump(
            False, "", f"no process of {tag} in the run's process group ({err.strip()})"
        )
    detail = err.strip().splitlines()[-1] if err.strip() else f"exit status {status}"
    if "permission" in err.lower() or "ptrace" in err.lower():
        detail += (
            " (py-spy needs ptrace permission: enable sudo for stacks, or run as the server's user)"
        )
    return StackDump(False, out, f"py-spy failed for {tag}: {detail}")


def _clean(text: str) -> str:
    """Remote text made safe to show (escapes stripped, controls neutralised), bounded in size."""
    return sanitize_text(text[:TEXT_LIMIT])


async def dump_stacks(
    run: Runner, *, process_group: int, engine: str, tag: str, sudo: bool = False,
    host: str = "the host",
) -> StackDump:  # fmt: skip
    """Find ``tag``'s process in ``process_group`` and dump its Python stacks."""
    command = dump_command(process_group, rank_titles(engine, tag), sudo=sudo)
    status, stdout, stderr = await run(command)
    return interpret(status, stdout, stderr, tag=tag, host=host)


def local_runner(env: Mapping[str, str] | None = None, timeout: float = 60.0) -> Runner:
    """A ``Runner`` for the local host (when the monitor runs beside the server)."""

    async def run(command: str) -> tuple[int, str, str]:
        process = await asyncio.create_subprocess_shell(
            command,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=dict(env) if env is not None else None,
        )
        try:
            out, err = await asyncio.wait_for(process.communicate(), timeout)
        except asyncio.TimeoutError:
            process.kill()
            await process.wait()
            return 124, "", f"timed out after {timeout:g} s"
        return process.returncode or 0, out.decode(errors="replace"), err.decode(errors="replace")

    return run
