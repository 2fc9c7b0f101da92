"""NVIDIA faults read from a host's kernel log, in the driver's formats as ``journalctl -k``
and ``dmesg`` print them. No public log of the shared corpus holds a kernel log."""

from __future__ import annotations

from tui.engine.gpu.kernel_faults import kernel_faults

JOURNAL = """\
2026-12-01T20:01:02+0000 gpu-a kernel: NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.90.07
2026-12-01T20:05:11+0000 gpu-a kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=4242, name=python3, GPU has fallen off the bus.
2026-12-01T20:05:11+0000 gpu-a kernel: NVRM: GPU 0000:3b:00.0: GPU has fallen off the bus.
2026-12-01T20:05:12+0000 gpu-a kernel: nvidia-nvswitch2: SXid (PCI:0000:07:00.0): 12028, Non-fatal, Link 32 egress non-posted PRIV error (First)
2026-12-01T20:06:00+0000 gpu-a kernel: NVRM: Xid (PCI:0000:18:00): 48, pid='<unknown>', name=<unknown>, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 6, subpartition 0.
"""  # noqa: E501


def test_xid_sxid_and_off_the_bus_lines() -> None:
    faults = kernel_faults(JOURNAL)
    assert [(f.kind, f.code, f.device) for f in faults] == [
        ("xid", 79, "PCI:0000:3b:00"),
        ("off_bus", None, "0000:3b:00.0"),
        ("sxid", 12028, "PCI:0000:07:00.0"),
        ("xid", 48, "PCI:0000:18:00"),
    ]
    assert faults[0].label == "Xid 79 on PCI:0000:3b:00: GPU has fallen off the bus"
    assert faults[3].label == "Xid 48 on PCI:0000:18:00: double-bit ECC error"
    assert faults[2].meaning.startswith("Non-fatal, Link 32")


def test_dmesg_format_and_an_unknown_code() -> None:
    faults = kernel_faults("[ 5211.804413] NVRM: Xid (PCI:0000:3b:00): 999, pid=1, odd thing\n")
    assert faults[0].label == "Xid 999 on PCI:0000:3b:00: pid=1, odd thing"


def test_hostile_text_is_bounded() -> None:
    text = "NVRM: Xid (PCI:0000:3b:00): 13, " + "x" * 100_000 + "\n"
    faults = kernel_faults(text * 100)
    assert len(faults) == 16
    assert all(len(fault.line) <= 300 and len(fault.meaning) <= 120 for fault in faults)
