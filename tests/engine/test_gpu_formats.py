"""``nvidia-smi -L``, ``dmon``, the default table and ``-q -x`` beyond the H200 capture."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tui.engine.gpu.gpu_csv import NoTelemetryKind
from tui.engine.gpu.gpu_formats import parse_dmon, parse_gpu_list, parse_query_xml, parse_summary

MIG_LIST = """\
GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-aaaa)
  MIG 3g.40gb     Device  0: (UUID: MIG-bbbb)
  MIG 3g.40gb     Device  1: (UUID: MIG-cccc)
GPU 1: NVIDIA A100-SXM4-80GB (UUID: GPU-dddd)
"""


def test_gpu_list_attaches_mig_devices_to_their_gpu() -> None:
    gpus, failure = parse_gpu_list(MIG_LIST)
    assert failure is None
    assert [gpu.index for gpu in gpus] == [0, 1]
    assert [(mig.profile, mig.device, mig.uuid) for mig in gpus[0].mig] == [
        ("3g.40gb", 0, "MIG-bbbb"),
        ("3g.40gb", 1, "MIG-cccc"),
    ]
    assert gpus[1].mig == ()


def test_gpu_list_without_gpus_says_why() -> None:
    assert parse_gpu_list("No devices were found\n")[1] is not None
    gpus, failure = parse_gpu_list("")
    assert gpus == ()
    assert failure is not None
    assert failure.kind is NoTelemetryKind.NO_DEVICES


def test_dmon_dash_is_no_value_and_short_rows_are_reported() -> None:
    text = "# gpu   pwr  sm   fb\n# Idx   W    %    MB\n    0   -    5    100\n    1   70\n"
    rows, problems = parse_dmon(text)
    (row,) = rows
    assert (row.gpu, row.get("pwr"), row.get("sm"), row.get("fb")) == (0, None, 5.0, 100.0)
    assert [problem.line for problem in problems] == [4]


TABLE_WITH_PROCESSES = """\
| NVIDIA-SMI 550.54.15              Driver Version: 550.54.15      CUDA Version: 12.4     |
|   0  NVIDIA H100 80GB HBM3          On  |   00000000:18:00.0 Off |                    0 |
| N/A   41C    P0            312W /  700W |   70123MiB /  81559MiB |     97%      Default |
|   1  NVIDIA H100 80GB HBM3          On  |   00000000:2A:00.0 Off |                    0 |
| N/A   39C    P0             98W /  700W |       4MiB /  81559MiB |      0%      Default |
|    0   N/A  N/A     4242      C   sglang::scheduler_TP0                     70110MiB |
"""


def test_summary_table_reads_gpus_and_processes() -> None:
    report = parse_summary(TABLE_WITH_PROCESSES)
    assert report.driver_version == "550.54.15"
    assert [(g.index, g.memory_used_mib, g.util_pct) for g in report.gpus] == [
        (0, 70123.0, 97.0),
        (1, 4.0, 0.0),
    ]
    (app,) = report.apps
    assert (app.gpu_index, app.pid, app.process_name, app.used_memory_mib) == (
        0,
        4242,
        "sglang::scheduler_TP0",
        70110.0,
    )


def test_summary_of_a_driver_failure_is_no_telemetry() -> None:
    report = parse_summary("NVIDIA-SMI has failed because it couldn't communicate with ...")
    assert report.failure is not None
    assert report.failure.kind is NoTelemetryKind.DRIVER


XML = """<?xml version="1.0" ?>
<nvidia_smi_log><driver_version>1</driver_version><cuda_version>2</cuda_version>
<gpu id="x"><product_name>A100</product_name><uuid>GPU-a</uuid>
<mig_mode><current_mig>Enabled</current_mig></mig_mode>
<fb_memory_usage><total>81920 MiB</total><used>N/A</used></fb_memory_usage>
<utilization><gpu_util>N/A</gpu_util></utilization>
<processes><process_info><pid>12</pid><process_name>python</process_name>
<used_memory>1024 MiB</used_memory></process_info></processes></gpu></nvidia_smi_log>
"""


def test_xml_with_mig_reads_mode_and_processes() -> None:
    report = parse_query_xml(XML)
    (gpu,) = report.gpus
    assert (gpu.mig_mode, gpu.memory_total_mib, gpu.memory_used_mib, gpu.util_pct) == (
        "Enabled",
        81920.0,
        None,
        None,
    )
    (app,) = report.apps
    assert (app.pid, app.gpu_uuid, app.used_memory_mib) == (12, "GPU-a", 1024.0)


def test_xml_entities_and_garbage_are_refused_without_raising() -> None:
    bomb = '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa">]><x>&a;</x>'
    assert parse_query_xml(bomb).failure is not None
    assert parse_query_xml("<nvidia_smi_log>").failure is not None


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=400))
def test_text_readers_never_raise(text: str) -> None:
    parse_gpu_list(text)
    parse_dmon(text)
    parse_summary(text)
    parse_query_xml(text)
