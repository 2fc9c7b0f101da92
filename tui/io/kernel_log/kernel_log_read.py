"""Read the GPU host's kernel log for NVIDIA faults, over the connection already open to it.

The commands of the profile's ``kernel_log`` are tried in turn (by default ``journalctl -k``,
then, when it is missing or the user may not read the kernel's messages (not in the ``adm`` or
``systemd-journal`` group), ``dmesg``); when none may be read (``kernel.dmesg_restrict``), the
report says so plainly, naming each. Every word of a command is quoted (``shlex.quote``) where
the script names it, and the line limit reaches it as a positional parameter (``sh -c SCRIPT
NAME LINES``); only lines that mention the NVIDIA driver or an NVSwitch come back, at most
``LINES`` of them. The engine's ``kernel_faults`` reads them. Every failure is a
``KernelLogReport``, never an exception.
"""

from __future__ import annotations

import asyncio
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from tui.config.config_model import KERNEL_LOG_COMMANDS
from tui.engine.gpu.kernel_faults import KernelFault, kernel_faults
from tui.engine.logs.sanitize import sanitize_line, sanitize_text
from tui.io.transport.deadline import within
from tui.io.transport.host_session import HostSession
from tui.io.transport.transport import CommandTimedOut, LinkLost, Transport, TransportError

LINES = 200
TEXT_LIMIT = 256 * 1024
READ_TIMEOUT = 30.0
LINK_TIMEOUT = 15.0
NOT_PERMITTED = 4

_PREAMBLE = r"""
lines=$1
pattern='NVRM|nvidia-nvswitch|SXid|fallen off the bus'
why=""
attempt() {
  label=$1 name=$2; shift 2
  if ! command -v "$1" >/dev/null 2>&1; then
    why="$why; $label: not installed"; return 0
  fi
  out=$("$@" 2>&1); status=$?
  case "$out" in
    *"insufficient permissions"*|*"not seeing messages"*|*"No journal files"*) status=1 ;;
  esac
  if [ "$status" -eq 0 ]; then
    echo "source: $label"
    printf '%s\n' "$out" | grep -E "$pattern" | tail -n "$lines"
    exit 0
  fi
  said=$(printf '%s\n' "$out" | grep -v '^$' | tail -n 1)
  case "$said" in "$name":*) ;; *) said="$label: $said" ;; esac
  why="$why; $said"
}
"""
_EPILOGUE = r"""
echo "${why#; }" >&2
exit 4
"""


def command_label(command: Sequence[str]) -> str:
    """``journalctl -k`` for ``journalctl -k -q ...``, ``dmesg`` for ``/usr/bin/dmesg``: the
    program's name and its first option, as the report names the source."""
    name = PurePosixPath(command[0]).name or command[0]
    first = command[1] if len(command) > 1 and command[1].startswith("-") else ""
    return f"{name} {first}" if first else name


def kernel_log_script(commands: Sequence[Sequence[str]]) -> str:
    """The script that tries ``commands`` in turn; every word is quoted (``shlex.quote``)."""
    if not commands or any(not command or not command[0] for command in commands):
        raise ValueError("every kernel-log command needs a program")
    attempts = [
        shlex.join(["attempt", command_label(command), PurePosixPath(command[0]).name, *command])
        for command in commands
    ]
    return _PREAMBLE + "\n".join(attempts) + _EPILOGUE


def kernel_log_argv(
    commands: Sequence[Sequence[str]] = KERNEL_LOG_COMMANDS, *, lines: int = LINES
) -> list[str]:
    """The argv that prints the NVIDIA lines of the kernel log (first line: its source)."""
    if lines < 1:
        raise ValueError(f"lines must be positive: {lines}")
    return ["sh", "-c", kernel_log_script(commands), "bringup-kernel-log", str(lines)]


@dataclass(frozen=True, slots=True)
class KernelLogReport:
    """What the host's kernel log said: its ``source``, whether it could be read at all, the
    faults found (oldest first) and one sentence for people."""

    host: str
    permitted: bool
    source: str = ""
    faults: tuple[KernelFault, ...] = ()
    message: str = ""

    @property
    def summary(self) -> str:
        """``kernel log of gpu-a (dmesg): Xid 79 on PCI:0000:3b:00: GPU has fallen off the bus``."""
        if not self.permitted or not self.source:
            return self.message
        if not self.faults:
            return f"kernel log of {self.host} ({self.source}): no NVIDIA Xid, SXid or bus errors"
        labels = "; ".join(fault.label for fault in self.faults[-3:])
        return f"kernel log of {self.host} ({self.source}): {labels}"


def interpret(status: int, stdout: bytes, stderr: bytes, *, host: str) -> KernelLogReport:
    """Turn the script's exit status and output into a report."""
    out = sanitize_text(stdout[:TEXT_LIMIT].decode("utf-8", "replace"))
    err_lines = stderr[-2000:].decode("utf-8", "replace").strip().splitlines()
    err = sanitize_line(err_lines[-1]) if err_lines else ""
    if status == NOT_PERMITTED:
        hint = (
            f"cannot read the kernel log of {host}: {err or 'not permitted'} (add the user to "
            "the adm or systemd-journal group, or allow dmesg: sysctl kernel.dmesg_restrict=0)"
        )
        return KernelLogReport(host, False, message=hint)
    if status != 0:
        detail = err or f"exit status {status}"
        return KernelLogReport(
            host, False, message=f"cannot read the kernel log of {host}: {detail}"
        )
    first, _, rest = out.partition("\n")
    source = first.removeprefix("source: ").strip() if first.startswith("source: ") else ""
    faults = kernel_faults(rest)
    report = KernelLogReport(host, True, source, faults)
    return KernelLogReport(host, True, source, faults, report.summary)


async def read_kernel_log(
    transport: Transport, commands: Sequence[Sequence[str]] = KERNEL_LOG_COMMANDS
) -> KernelLogReport:
    """Run the kernel-log script on ``transport``'s host."""
    argv = kernel_log_argv(commands)
    host = transport.label
    try:
        result = await transport.run(argv, timeout=READ_TIMEOUT)
    except (LinkLost, CommandTimedOut) as error:
        return KernelLogReport(
            host, False, message=f"cannot read the kernel log of {host}: {error}"
        )
    return interpret(result.status, result.stdout, result.stderr, host=host)


async def check_kernel_log(
    session: HostSession, commands: Sequence[Sequence[str]] = KERNEL_LOG_COMMANDS
) -> KernelLogReport:
    """:func:`read_kernel_log` through the host session's link; every failure is a report."""
    try:
        transport = await within(session.transport(), LINK_TIMEOUT)
        return await read_kernel_log(transport, commands)
    except (TransportError, OSError, ValueError, asyncio.TimeoutError) as exc:
        detail = sanitize_line(str(exc)) or type(exc).__name__
        return KernelLogReport("the host", False, message=f"cannot read the kernel log: {detail}")
