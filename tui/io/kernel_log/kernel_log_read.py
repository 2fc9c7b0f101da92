"""Read the GPU host's kernel log for NVIDIA faults, over the connection already open to it.

``journalctl -k`` first; when it is missing or the user may not read the kernel's messages
(not in the ``adm`` or ``systemd-journal`` group), ``dmesg``; when neither may be read
(``kernel.dmesg_restrict``), the report says so plainly. The remote script is a constant and
its settings reach it as positional parameters (``sh -c SCRIPT NAME ARG...``); only lines that
mention the NVIDIA driver or an NVSwitch come back, at most ``LINES`` of them. The engine's
``kernel_faults`` reads them. Every failure is a ``KernelLogReport``, never an exception.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

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

_SCRIPT = r"""
lines=$1 journalctl=$2 dmesg=$3
pattern='NVRM|nvidia-nvswitch|SXid|fallen off the bus'
why=""
if command -v "$journalctl" >/dev/null 2>&1; then
  out=$("$journalctl" -k -q --no-pager -n 20000 2>&1); status=$?
  case "$out" in
    *"insufficient permissions"*|*"not seeing messages"*|*"No journal files"*) status=1 ;;
  esac
  if [ "$status" -eq 0 ]; then
    echo "source: journalctl -k"
    printf '%s\n' "$out" | grep -E "$pattern" | tail -n "$lines"
    exit 0
  fi
  why="journalctl -k: $(printf '%s\n' "$out" | grep -v '^$' | tail -n 1)"
else
  why="journalctl: not installed"
fi
if command -v "$dmesg" >/dev/null 2>&1; then
  out=$("$dmesg" 2>&1); status=$?
  if [ "$status" -eq 0 ]; then
    echo "source: dmesg"
    printf '%s\n' "$out" | grep -E "$pattern" | tail -n "$lines"
    exit 0
  fi
  said=$(printf '%s\n' "$out" | grep -v '^$' | tail -n 1)
  case "$said" in dmesg:*) ;; *) said="dmesg: $said" ;; esac
  why="$why; $said"
else
  why="$why; dmesg: not installed"
fi
echo "$why" >&2
exit 4
"""


def kernel_log_argv(
    *, lines: int = LINES, journalctl: str = "journalctl", dmesg: str = "dmesg"
) -> list[str]:
    """The argv that prints the NVIDIA lines of the kernel log (first line: its source)."""
    if lines < 1:
        raise ValueError(f"lines must be positive: {lines}")
    return ["sh", "-c", _SCRIPT, "bringup-kernel-log", str(lines), journalctl, dmesg]


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
    transport: Transport, *, journalctl: str = "journalctl", dmesg: str = "dmesg"
) -> KernelLogReport:
    """Run the kernel-log script on ``transport``'s host."""
    argv = kernel_log_argv(journalctl=journalctl, dmesg=dmesg)
    host = transport.label
    try:
        result = await transport.run(argv, timeout=READ_TIMEOUT)
    except (LinkLost, CommandTimedOut) as error:
        return KernelLogReport(
            host, False, message=f"cannot read the kernel log of {host}: {error}"
        )
    return interpret(result.status, result.stdout, result.stderr, host=host)


async def check_kernel_log(
    session: HostSession, *, journalctl: str = "journalctl", dmesg: str = "dmesg"
) -> KernelLogReport:
    """:func:`read_kernel_log` through the host session's link; every failure is a report."""
    try:
        transport = await within(session.transport(), LINK_TIMEOUT)
        return await read_kernel_log(transport, journalctl=journalctl, dmesg=dmesg)
    except (TransportError, OSError, ValueError, asyncio.TimeoutError) as exc:
        detail = sanitize_line(str(exc)) or type(exc).__name__
        return KernelLogReport("the host", False, message=f"cannot read the kernel log: {detail}")
