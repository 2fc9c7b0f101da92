"""Which host and log each node of a multi-node server has: the profile, and wait's arguments."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from tui.cli import main
from tui.commands import wait as wait_command
from tui.commands.wait import NodeTarget, wait_plan
from tui.config import ConfigError, parse_config

TWO_HOSTS = """\
[profiles.big]
hosts = ["gpu-a", "gpu-b"]
{logs}
"""


def profile_text(logs: str) -> str:
    return TWO_HOSTS.format(logs=logs)


def test_a_log_template_names_each_nodes_file() -> None:
    config = parse_config(profile_text('log = "/logs/{profile}-node{node_rank}.log"'), Path("c"))
    profile = config.profile("big")
    assert profile.node_logs == ("/logs/big-node0.log", "/logs/big-node1.log")
    assert profile.log_path == "/logs/big-node0.log"


def test_logs_lists_one_path_per_host() -> None:
    config = parse_config(profile_text('logs = ["/a/{profile}.log", "/b/server.log"]'), Path("c"))
    assert config.profile("big").node_logs == ("/a/big.log", "/b/server.log")


@pytest.mark.parametrize(
    ("logs", "line", "problem"),
    [
        ('logs = ["/a.log"]', 3, "lists 1 paths but the profile has 2 hosts"),
        ('log = "/a.log"\nlogs = ["/a.log", "/b.log"]', 4, "either 'log' or 'logs'"),
        ('logs = ["/a.log", ""]', 3, "must not be empty"),
        ('logs = ["/a.log", "/{user}.log"]', 3, "unknown placeholder {user}"),
        ('logs = ["/a.log", 3]', 3, "expected a string"),
    ],
)
def test_bad_logs_name_the_file_line_and_key(logs: str, line: int, problem: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config(profile_text(logs), Path("conf.toml"))
    text = str(caught.value)
    assert text.startswith(f"conf.toml:{line}: profiles.big.logs")
    assert problem in text


def _args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    wait_command.register(parser.add_subparsers())
    return parser.parse_args(["wait", *argv])


def test_each_host_gets_its_log_node_zero_first() -> None:
    plan = wait_plan(_args(["--host", "a", "--host", "b", "--log", "/x.log", "--log", "/y.log"]))
    assert plan.nodes == (NodeTarget("a", "/x.log"), NodeTarget("b", "/y.log"))
    assert (plan.host, plan.log) == ("a", "/x.log")


def test_one_log_serves_every_host() -> None:
    plan = wait_plan(_args(["--host", "a", "--host", "b", "--log", "/x.log"]))
    assert plan.nodes == (NodeTarget("a", "/x.log"), NodeTarget("b", "/x.log"))


def test_local_logs_are_nodes_on_this_machine() -> None:
    plan = wait_plan(_args(["--local", "--log", "/x.log", "--log", "/y.log"]))
    assert plan.nodes == (NodeTarget(None, "/x.log"), NodeTarget(None, "/y.log"))


def test_a_single_host_stays_a_single_node() -> None:
    plan = wait_plan(_args(["--host", "a", "--log", "/x.log"]))
    assert plan.more_nodes == ()


def test_more_logs_than_hosts_is_refused() -> None:
    argv = ["--host", "a", "--host", "b", "--log", "/x", "--log", "/y", "--log", "/z"]
    with pytest.raises(ValueError, match="one --log per --host"):
        wait_plan(_args(argv))


def test_a_profile_gives_every_node(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(profile_text('log = "/logs/n{node_rank}.log"'))
    plan = wait_plan(_args(["big", "--config", str(path)]))
    assert plan.nodes == (NodeTarget("gpu-a", "/logs/n0.log"), NodeTarget("gpu-b", "/logs/n1.log"))
    assert (plan.port, plan.detect_port) == (None, True), "the default of the engine the log shows"


def test_a_launched_profile_follows_each_nodes_latest_run(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(
        profile_text('log_dir = "/runs"\n[profiles.big.launch]\ncommand = "serve {node_rank}"')
    )
    plan = wait_plan(_args(["big", "--config", str(path)]))
    logs = [node.log for node in plan.nodes]
    assert logs == ["/runs/big-node0-latest.log", "/runs/big-node1-latest.log"]


def test_a_bad_pairing_of_hosts_and_logs_is_misused(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["wait", "--host", "a", "--host", "b", "--log", "/x", "--log", "/y", "--log", "/z"]
    assert main(argv) == 2
    assert "one --log per --host" in capsys.readouterr().err
