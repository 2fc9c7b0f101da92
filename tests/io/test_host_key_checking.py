"""``StrictHostKeyChecking``, ``UserKnownHostsFile``, ``GlobalKnownHostsFile`` and
``HashKnownHosts`` from the ssh_config, against the real SSH server on 127.0.0.1."""

from __future__ import annotations

import argparse
import asyncio
import importlib
from pathlib import Path

import asyncssh
import pytest

from tests.sshd import TestServer
from tui.cli import COMMANDS, MODULES
from tui.commands.ssh_flags import with_ssh_flags
from tui.config import Profile
from tui.io.transport.link_events import ConnectFailureKind
from tui.io.transport.profile_target import profile_target
from tui.io.transport.ssh import ConnectError, SshTarget, connect

CONNECTING = ("watch", "wait", "bench", "launch", "kill", "restart", "stats")
SSH_FLAGS = ("--ssh-config", "--known-hosts", "--accept-new", "--insecure-accept-any-host-key")


def config_for(server: TestServer, path: Path, *lines: str) -> Path:
    """``server``'s alias with ``lines`` added (they come first, so they win)."""
    head, _, body = server.ssh_config.read_text().partition("\n")
    kept = [line for line in body.splitlines() if "UserKnownHostsFile" not in line]
    path.write_text("\n".join([head, *(f"    {line}" for line in lines), *kept]) + "\n")
    return path


async def refused(target: SshTarget) -> ConnectError:
    try:
        link = await connect(target)
    except ConnectError as error:
        return error
    link.close()
    raise AssertionError(f"{target.host} was accepted")


def other_key() -> str:
    return asyncssh.generate_private_key("ssh-ed25519").export_public_key().decode().strip()


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


async def test_without_hashing_the_entry_is_written_plain(
    ssh_server: TestServer, tmp_path: Path
) -> None:
    known = tmp_path / "learned"
    config = config_for(
        ssh_server, tmp_path / "config",
        "StrictHostKeyChecking accept-new", f'UserKnownHostsFile "{known}"',
    )  # fmt: skip
    (await connect(SshTarget(ssh_server.alias, config_path=config))).close()
    assert known.read_text() == ssh_server.known_hosts_line + "\n"


async def test_yes_refuses_an_unknown_host_and_accept_new_a_changed_one(
    ssh_server: TestServer, tmp_path: Path
) -> None:
    empty = tmp_path / "empty"
    empty.write_text("")
    strict = config_for(
        ssh_server,
        tmp_path / "strict",
        "StrictHostKeyChecking yes",
        f'UserKnownHostsFile "{empty}"',
    )
    error = await refused(SshTarget(ssh_server.alias, config_path=strict))
    assert error.kind is ConnectFailureKind.HOST_KEY
    assert "not known" in error.message
    changed = tmp_path / "changed"
    changed.write_text(f"[{ssh_server.host}]:{ssh_server.port} {other_key()}\n")
    learning = config_for(
        ssh_server, tmp_path / "learning",
        "StrictHostKeyChecking accept-new", f'UserKnownHostsFile "{changed}"',
    )  # fmt: skip
    error = await refused(SshTarget(ssh_server.alias, config_path=learning))
    assert "CHANGED" in error.message


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


async def test_no_is_refused_unless_the_user_says_they_mean_it(
    ssh_server: TestServer, tmp_path: Path
) -> None:
    known = tmp_path / "known"
    known.write_text(f"[{ssh_server.host}]:{ssh_server.port} {other_key()}\n")
    config = config_for(
        ssh_server, tmp_path / "config", "StrictHostKeyChecking no", f'UserKnownHostsFile "{known}"'
    )
    error = await refused(SshTarget(ssh_server.alias, config_path=config))
    assert error.kind is ConnectFailureKind.HOST_KEY
    assert "StrictHostKeyChecking no" in error.message
    assert "--insecure-accept-any-host-key" in error.hint
    meant = SshTarget(ssh_server.alias, config_path=config, accept_any_host_key=True)
    (await connect(meant)).close()


async def test_ask_without_a_terminal_says_it_needed_one(
    ssh_server: TestServer, tmp_path: Path
) -> None:
    empty = tmp_path / "empty"
    empty.write_text("")
    config = config_for(
        ssh_server,
        tmp_path / "config",
        "StrictHostKeyChecking ask",
        f'UserKnownHostsFile "{empty}"',
    )
    error = await refused(SshTarget(ssh_server.alias, config_path=config))
    assert error.kind is ConnectFailureKind.HOST_KEY
    assert "needs a terminal" in error.message
    assert empty.read_text() == ""


async def test_the_command_line_accept_new_wins_over_the_config(
    ssh_server: TestServer, tmp_path: Path
) -> None:
    known = tmp_path / "known"
    config = config_for(
        ssh_server,
        tmp_path / "config",
        "StrictHostKeyChecking yes",
        f'UserKnownHostsFile "{known}"',
    )
    target = SshTarget(ssh_server.alias, config_path=config, host_key_policy="accept-new")
    (await connect(target)).close()
    assert known.read_text() == ssh_server.known_hosts_line + "\n"


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
