"""A stand-in ``dmesg`` for the simulated GPU host: ``python -m tui.sim.fake_dmesg``.

It prints a kernel ring buffer in ``dmesg``'s format with one NVIDIA driver fault in it
(``--xid 79`` by default: ``NVRM: Xid (PCI:0000:3b:00): 79, pid=..., GPU has fallen off the
bus.``), or, with ``--denied``, refuses as ``dmesg`` does under ``kernel.dmesg_restrict=1``
(``dmesg: read kernel buffer failed: Operation not permitted``, exit status 1).
``--install DIR`` writes an executable ``DIR/dmesg`` that runs this module with the other
arguments given, so that a test can put it on the host's PATH or name it as the command.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

from tui.engine.gpu.kernel_faults import XID_MEANINGS

BUS_ID = "PCI:0000:3b:00"


def ring(xid: int) -> str:
    """A few lines of an ordinary kernel log with the driver's Xid line among them."""
    meaning = XID_MEANINGS.get(xid, "Graphics Exception")
    return (
        "[    0.000000] Linux version 6.8.0-45-generic (buildd@lcy02-amd64-115)\n"
        "[    5.120331] nvidia: loading out-of-tree module taints kernel.\n"
        "[    5.402112] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.90.07\n"
        f"[ 5211.804413] NVRM: Xid ({BUS_ID}): {xid}, pid=4242, name=python3, {meaning}.\n"
        "[ 5212.000001] eth0: renamed from veth1a2b3c\n"
    )


def install(directory: Path, args: Sequence[str]) -> Path:
    """Write ``directory/dmesg`` running this module with ``args``; returns its path."""
    directory.mkdir(parents=True, exist_ok=True)
    shim = directory / "dmesg"
    command = shlex.join([sys.executable, "-m", "tui.sim.fake_dmesg", *args])
    root = shlex.quote(str(Path(__file__).resolve().parents[2]))  # this checkout, over SSH too
    shim.write_text(f'#!/bin/sh\nPYTHONPATH={root} exec {command} "$@"\n')
    shim.chmod(0o755)
    return shim


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="dmesg", description=__doc__.splitlines()[0])
    parser.add_argument("--xid", type=int, default=79, help="the Xid code to print (79)")
    parser.add_argument("--denied", action="store_true", help="refuse as dmesg_restrict does")
    parser.add_argument("--install", type=Path, metavar="DIR", help="write DIR/dmesg and exit")
    args, _ = parser.parse_known_args(argv)
    if args.install is not None:
        passed = ["--xid", str(args.xid), *(["--denied"] if args.denied else [])]
        print(install(args.install, passed))
        return 0
    if args.denied:
        print("dmesg: read kernel buffer failed: Operation not permitted", file=sys.stderr)
        return 1
    sys.stdout.write(ring(args.xid))
    return 0


if __name__ == "__main__":
    sys.exit(main())
