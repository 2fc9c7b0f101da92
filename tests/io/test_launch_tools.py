"""Host tools the test machine lacks, stood in for by small scripts: ``nvidia-smi`` and ``conda``.

The stand-ins print exactly what the real tools print for the queries the launcher makes, so
the launcher's GPU checks and its conda activation run unchanged.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.io.launch_support import EnvRunner, kill_group, wait_for_state
from tui.engine.launch.launch_plan import LaunchSpec
from tui.engine.launch.launch_preflight import RefusalKind
from tui.engine.launch.launch_record import RunState
from tui.io.launch.launch_kill import KillOutcome
from tui.io.launch.launch_node import Node
from tui.io.launch.launch_profile import kill_lines
from tui.io.launch.launcher import Launcher

NVIDIA_SMI = """#!/bin/sh
case "$1" in
  --query-gpu=*) printf '0, GPU-aaaa\\n1, GPU-bbbb\\n' ;;
  --query-compute-apps=*) cat "$FAKE_APPS" ;;
  *) echo "unexpected query" >&2; exit 2 ;;
esac
"""
CONDA = """#!/bin/sh
# conda run --no-capture-output -n|-p ENV COMMAND...
printf 'conda %s %s\\n' "$3" "$4"
shift 4
exec "$@"
"""


@pytest.fixture
def tools(tmp_path: Path) -> Iterator[dict[str, str]]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, text in (("nvidia-smi", NVIDIA_SMI), ("conda", CONDA)):
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    apps = tmp_path / "apps.csv"
    apps.write_text("")
    env = {"PATH": f"{bin_dir}:{os.environ['PATH']}", "FAKE_APPS": str(apps)}
    yield env
    for pid_file in (tmp_path / "logs" / ".bringup").glob("*.pid"):
        kill_group(int(pid_file.read_text().split()[0]))


def launcher(tmp_path: Path, tool_env: dict[str, str], **changes: object) -> Launcher:
    values: dict[str, object] = {
        "profile": "gpu",
        "command": ("sh", "-c", "sleep 60"),
        "log_dir": str(tmp_path / "logs"),
        "grace_period": 15.0,
    }
    values.update(changes)
    return Launcher(LaunchSpec(**values), [Node("gpu-host", EnvRunner(tool_env))])  # type: ignore[arg-type]


async def test_busy_gpus_refuse_unless_the_run_uses_other_ones(
    tmp_path: Path, tools: dict[str, str]
) -> None:
    await asyncio.to_thread(Path(tools["FAKE_APPS"]).write_text, "4242, 41478, GPU-bbbb, python3\n")
    refused = await launcher(tmp_path, tools).launch()
    assert [r.kind for r in refused.refusals] == [RefusalKind.GPU_BUSY]
    assert "pid 4242 (python3) using 41478 MiB on GPU 1" in refused.refusals[0].message
    elsewhere = launcher(tmp_path, tools, env=(("CUDA_VISIBLE_DEVICES", "0"),))
    assert (await elsewhere.launch()).ok


async def test_kill_reports_gpu_memory_still_held(tmp_path: Path, tools: dict[str, str]) -> None:
    run = launcher(tmp_path, tools)
    result = await run.launch()
    assert result.ok
    pgid = result.started[0].identity.pid
    apps = Path(tools["FAKE_APPS"])
    await asyncio.to_thread(apps.write_text, f"{pgid}, 1000, GPU-aaaa, sh\n")
    (kill,) = await run.kill()
    assert kill.outcome is KillOutcome.STOPPED
    assert kill.gpu_released is False
    assert "GPU memory STILL IN USE" in kill_lines([kill])[0]
    await asyncio.to_thread(apps.write_text, "")
    (again,) = await run.kill()
    assert again.gpu_released is True


async def test_conda_environment_is_activated_with_literal_names(
    tmp_path: Path, tools: dict[str, str]
) -> None:
    for conda_env, flag in (
        ("sg $(touch canary) `touch canary`", "-n"),
        ("/opt/envs/sg lang", "-p"),
    ):
        run = launcher(
            tmp_path, tools, conda_env=conda_env, command=("echo", "served"), cwd=str(tmp_path)
        )
        result = await run.launch()
        assert result.ok
        await wait_for_state(run, RunState.ENDED)
        log = await asyncio.to_thread(Path(result.started[0].plan.paths.log).read_text)
        assert log == f"conda {flag} {conda_env}\nserved\n"
    assert not (tmp_path / "canary").exists()


async def test_without_ss_the_port_owner_comes_from_proc(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bare-bin"
    bin_dir.mkdir()
    for tool in ("sh", "cat", "awk", "tr", "ls", "head", "sed", "cut", "readlink", "setsid"):
        found = shutil.which(tool)
        assert found is not None, tool
        (bin_dir / tool).symlink_to(found)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        run = launcher(tmp_path, {"PATH": str(bin_dir)}, port=port)
        result = await run.launch()
    assert [r.kind for r in result.refusals] == [RefusalKind.PORT_IN_USE]
    assert f"pid {os.getpid()} (" in result.refusals[0].message
    assert any("GPU check skipped" in note for p in result.preflights for note in p.notes)


async def test_the_profiles_nvidia_smi_is_run_where_the_path_has_none(
    tmp_path: Path, tools: dict[str, str]
) -> None:
    """A driver outside the login's PATH: the launcher's GPU checks run the profile's command,
    each word one argument (the path has a space), instead of skipping them."""
    folder = tmp_path / "nvidia tools"
    folder.mkdir()
    smi = folder / "nvidia-smi"
    await asyncio.to_thread(shutil.move, Path(tools["PATH"].split(":")[0]) / "nvidia-smi", smi)
    await asyncio.to_thread(Path(tools["FAKE_APPS"]).write_text, "4242, 41478, GPU-bbbb, python3\n")
    spec = LaunchSpec(profile="gpu", command=("sleep", "60"), log_dir=str(tmp_path / "logs"))
    skipped = await Launcher(spec, [Node("gpu-host", EnvRunner(tools))]).launch()
    assert skipped.ok
    assert any("nvidia-smi not found" in note for c in skipped.preflights for note in c.notes)
    await Launcher(spec, [Node("gpu-host", EnvRunner(tools))]).kill()
    named = Launcher(spec, [Node("gpu-host", EnvRunner(tools), (str(smi),))])
    refused = await named.launch()
    assert [r.kind for r in refused.refusals] == [RefusalKind.GPU_BUSY]
    assert "pid 4242 (python3) using 41478 MiB on GPU 1" in refused.refusals[0].message
