"""NVIDIA GPU faults in a host's kernel log: Xid and NVSwitch SXid events, a GPU fallen off
the bus.

The driver's own formats (as ``journalctl -k`` and ``dmesg`` print them, after their time
prefix): ``NVRM: Xid (PCI:0000:3b:00): 79, pid=4242, name=python3, GPU has fallen off the
bus.``, ``nvidia-nvswitch0: SXid (PCI:0000:05:00.0): 12028, Non-fatal, Link 32 egress ...``
and ``NVRM: GPU 0000:3b:00.0: GPU has fallen off the bus.``; older drivers say ``NVRM: GPU at
0000:01:00.0 has fallen off the bus.`` and newer ones split it over three lines (``NVRM: The
NVIDIA GPU 0000:b3:00.0`` ... ``NVRM: fallen off the bus and is not responding to
commands.``). The meanings of the common Xid codes follow NVIDIA's Xid catalogue (the GPU
deployment and management documentation); an unknown code is shown as it is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

MAX_FAULTS = 16
"""Faults kept from one read (the newest)."""
MAX_TEXT = 300

XID_MEANINGS = {
    13: "graphics engine exception",
    31: "GPU memory page fault",
    43: "GPU stopped processing",
    45: "preemptive cleanup after an earlier error",
    48: "double-bit ECC error",
    61: "internal micro-controller breakpoint",
    62: "internal micro-controller halt",
    63: "ECC page retirement or row remapping",
    64: "ECC page retirement or row remapping failure",
    74: "NVLink error",
    79: "GPU has fallen off the bus",
    92: "high single-bit ECC error rate",
    94: "contained ECC error",
    95: "uncontained ECC error",
    119: "GSP RPC timeout",
    120: "GSP error",
}

_XID = re.compile(r"NVRM: Xid \((?P<device>[^)]{1,40})\): (?P<code>\d{1,6})\b,?\s*(?P<rest>.*)")
_SXID = re.compile(
    r"(?P<switch>nvidia-nvswitch\d*): SXid \((?P<device>[^)]{1,40})\): (?P<code>\d{1,6})\b,?\s*"
    r"(?P<rest>.*)"
)
_OFF_BUS = re.compile(r"NVRM: (?:GPU (?:at )?(?P<device>[\w:.]{1,40}?):? )?.*fallen off the bus")
_NAMED_GPU = re.compile(r"NVRM: The NVIDIA GPU (?P<device>[\w:.]{1,40})\s*$")
"""The first line of the driver's three-line form: the next lines say what happened to it."""


@dataclass(frozen=True, slots=True)
class KernelFault:
    """One fault line: ``kind`` is ``xid``, ``sxid`` or ``off_bus``."""

    kind: str
    code: int | None
    device: str
    meaning: str
    line: str

    @property
    def label(self) -> str:
        """``Xid 79 on PCI:0000:3b:00: GPU has fallen off the bus``."""
        name = {"xid": "Xid", "sxid": "SXid", "off_bus": "GPU"}[self.kind]
        code = f" {self.code}" if self.code is not None else ""
        where = f" on {self.device}" if self.device else ""
        return f"{name}{code}{where}: {self.meaning}"


def kernel_faults(text: str) -> tuple[KernelFault, ...]:
    """The GPU faults in a kernel log's ``text``, oldest first (the newest ``MAX_FAULTS``)."""
    found: list[KernelFault] = []
    named = ""
    for line in text.splitlines():
        fault = _fault(line[:2000])
        if fault is not None and fault.kind == "off_bus" and not fault.device:
            fault = replace(fault, device=named)
        if fault is not None:
            found.append(fault)
        gpu = _NAMED_GPU.search(line[:2000])
        if gpu is not None:
            named = gpu["device"]
    return tuple(found[-MAX_FAULTS:])


def _fault(line: str) -> KernelFault | None:
    if "NVRM" not in line and "SXid" not in line:
        return None
    shown = line.strip()[:MAX_TEXT]
    match = _XID.search(line)
    if match is not None:
        code = int(match["code"])
        meaning = XID_MEANINGS.get(code) or match["rest"].strip()[:120] or "unknown Xid"
        return KernelFault("xid", code, match["device"], meaning, shown)
    match = _SXID.search(line)
    if match is not None:
        rest = match["rest"].strip()[:120] or "NVSwitch error"
        return KernelFault("sxid", int(match["code"]), match["device"], rest, shown)
    match = _OFF_BUS.search(line)
    if match is not None:
        return KernelFault("off_bus", None, match["device"] or "", "fallen off the bus", shown)
    return None
