"""``StrictHostKeyChecking``, ``UserKnownHostsFile``, ``GlobalKnownHostsFile`` and
``HashKnownHosts`` from the ssh_config, against the real SSH server on 127.0.0.1."""

from __future__ import annotations

import argparse
import asyncio
import importlib
from pathlib import Path

import pytest

from tests.sshd import TestServer, other_key, refusal
from tui.cli import COMMANDS, MODULES
from tui.commands.ssh_flags import with_ssh_flags
from tui.config import Profile
from tui.io.transport.host_keys import HostKeyPolicy
from tui.io.transport.link_events import ConnectFailureKind
from tui.io.transport.profile_target import profile_target
from tui.io.transport.ssh import SshTarget, connect

CONNECTING = ("watch", "wait", "bench", "launch", "kill", "restart", "stats")
SSH_FLAGS = ("--ssh-config", "--known-hosts", "--accept-new", "--insecure-accept-any-host-key")


def config_for(server: TestServer, path: Path, *lines: str) -> Path:
    """``server``'s alias with ``lines`` added (they come first, so they win)."""
    head, _, body = server.ssh_config.read_text().partition("\n")
    kept = [line for line in body.splitlines() if "UserKnownHostsFile" not in line]
    path.write_text("\n".join([head, *(f"    {line}" for line in lines), *kept]) + "\n")
    return path


def policy_config(server: TestServer, tmp_path: Path, policy: str, known: Path) -> Path:
    """``server``'s alias under ``StrictHostKeyChecking policy`` with ``known`` as its only
    user known_hosts file."""
    return config_for(
        server,
        tmp_path / "config",
        f"StrictHostKeyChecking {policy}",
        f'UserKnownHostsFile "{known}"',
    )


async def test_accept_new_with_hash_known_hosts_writes_a_hashed_entry_ssh_keygen_finds(
    ssh_server: TestServer, tmp_path: Path
) -> None:
    known = tmp_path / "learned"
    config = config_for(
        ssh_server, tmp_path / "config",
        "StrictHostKeyChecking accept-new", "HashKnownHosts yes", f'UserKnownHostsFile "{known}"',
    )  # fmt: skip
    (await connect(SshTarget(ssh_server.alias, config_path=config))).close()
    entry = known.read_text()
    assert entry.startswith("|1|")
    assert str(ssh_server.port) not in entry
    assert entry.split()[1:] == ssh_server.host_public_key.split()[:2]
    name = f"[{ssh_server.host}]:{ssh_server.port}"
    finder = await asyncio.create_subprocess_exec(
        "ssh-keygen", "-F", name, "-f", str(known), stdout=asyncio.subprocess.PIPE
    )
    found, _ = await finder.communicate()
    assert finder.returncode == 0
    assert ssh_server.host_public_key.split()[1] in found.decode()
    (await connect(SshTarget(ssh_server.alias, config_path=config))).close()
    assert known.read_text() == entry, "a known key is not recorded twice"


@pytest.mark.parametrize(
    ("policy", "command_line"),
    [
        pytest.param("accept-new", None, id="accept-new-in-the-config"),
        pytest.param("yes", "accept-new", id="accept-new-on-the-command-line-wins-over-yes"),
    ],
)
async def test_accept_new_without_hashing_writes_the_entry_plain(
    ssh_server: TestServer, tmp_path: Path, policy: str, command_line: HostKeyPolicy | None
) -> None:
    known = tmp_path / "learned"
    config = policy_config(ssh_server, tmp_path, policy, known)
    target = SshTarget(ssh_server.alias, config_path=config, host_key_policy=command_line)
    (await connect(target)).close()
    assert known.read_text() == ssh_server.known_hosts_line + "\n"


@pytest.mark.parametrize(
    ("policy", "known_key", "says"),
    [
        pytest.param("yes", False, "not known", id="yes-refuses-an-unknown-host"),
        pytest.param("accept-new", True, "CHANGED", id="accept-new-refuses-a-changed-key"),
        pytest.param("no", True, "StrictHostKeyChecking no", id="no-is-refused"),
        pytest.param("ask", False, "needs a terminal", id="ask-without-a-terminal"),
    ],
)
async def test_a_policy_refuses_a_host_key_it_cannot_vouch_for(
    ssh_server: TestServer, tmp_path: Path, policy: str, known_key: bool, says: str
) -> None:
    """Each policy refuses a host whose known_hosts is empty or holds another key, says why,
    and leaves the file as it was."""
    known = tmp_path / "known"
    known.write_text(f"[{ssh_server.host}]:{ssh_server.port} {other_key()}\n" if known_key else "")
    before = known.read_text()
    error = await refusal(
        SshTarget(ssh_server.alias, config_path=policy_config(ssh_server, tmp_path, policy, known))
    )
    assert error.kind is ConnectFailureKind.HOST_KEY
    assert says in error.message
    assert known.read_text() == before


async def test_the_global_and_every_user_known_hosts_file_are_read(
    ssh_server: TestServer, tmp_path: Path
) -> None:
    empty, vouching = tmp_path / "empty", tmp_path / "vouching"
    empty.write_text("")
    vouching.write_text(ssh_server.known_hosts_line + "\n")
    both = config_for(ssh_server, tmp_path / "both", f'UserKnownHostsFile "{empty}" "{vouching}"')
    (await connect(SshTarget(ssh_server.alias, config_path=both))).close()
    global_only = config_for(
        ssh_server, tmp_path / "global",
        f'UserKnownHostsFile "{empty}"', f'GlobalKnownHostsFile "{vouching}"',
    )  # fmt: skip
    (await connect(SshTarget(ssh_server.alias, config_path=global_only))).close()


async def test_no_is_accepted_only_when_the_user_says_they_mean_it(
    ssh_server: TestServer, tmp_path: Path
) -> None:
    known = tmp_path / "known"
    known.write_text(f"[{ssh_server.host}]:{ssh_server.port} {other_key()}\n")
    config = policy_config(ssh_server, tmp_path, "no", known)
    error = await refusal(SshTarget(ssh_server.alias, config_path=config))
    assert "--insecure-accept-any-host-key" in error.hint
    meant = SshTarget(ssh_server.alias, config_path=config, accept_any_host_key=True)
    (await connect(meant)).close()


@pytest.mark.parametrize("command", CONNECTING)
def test_every_command_that_connects_takes_the_ssh_flags(command: str) -> None:
    assert command in dict(COMMANDS)
    sub = argparse.ArgumentParser().add_subparsers()
    importlib.import_module(f"tui.commands.{MODULES.get(command, command)}").register(sub)
    text = sub.choices[command].format_help()
    for flag in SSH_FLAGS:
        assert flag in text, (command, flag)


@pytest.mark.parametrize(
    ("flags", "policy", "accept_any"),
    [
        ([], None, False),
        (["--accept-new"], "accept-new", False),
        (["--insecure-accept-any-host-key"], "no", True),
    ],
)
def test_the_flags_reach_the_target_a_command_connects_to(
    tmp_path: Path, flags: list[str], policy: str | None, accept_any: bool
) -> None:
    sub = argparse.ArgumentParser().add_subparsers()
    importlib.import_module("tui.commands.launch").register(sub)
    files = ["--ssh-config", str(tmp_path / "config"), "--known-hosts", str(tmp_path / "known")]
    args = sub.choices["launch"].parse_args(["gpu", *files, *flags])
    profile = with_ssh_flags(args, Profile(host_key_policy="accept-new", hosts=("gpu-1",)))
    target = profile_target(profile, "gpu-1")
    assert (target.config_path, target.known_hosts) == (tmp_path / "config", tmp_path / "known")
    assert (target.host_key_policy, target.accept_any_host_key) == (policy, accept_any)
    assert target.default_policy == "accept-new"
    with pytest.raises(SystemExit):
        sub.choices["launch"].parse_args(["--accept-new", "--insecure-accept-any-host-key"])
