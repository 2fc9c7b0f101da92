"""The ssh_config as written: every option asyncssh understands is taken from it, bringup's own
defaults only where it is silent, and ``ProxyJump`` in each of its forms."""

from __future__ import annotations

from pathlib import Path

import asyncssh
import pytest

from tests.sshd import TestServer, start_server
from tui.io.transport.ssh import SshTarget, SshTransport, connect, effective_options
from tui.io.transport.ssh_options import (
    GLOBAL_KNOWN_HOSTS,
    JumpHost,
    SshConfigError,
    parse_proxy_jump,
)


def write_config(path: Path, *lines: str) -> Path:
    path.write_text("Host gpu\n" + "".join(f"    {line}\n" for line in lines))
    return path


async def test_each_option_is_read_back_as_the_config_sets_it(tmp_path: Path) -> None:
    key = tmp_path / "gpu_key"
    asyncssh.generate_private_key("ssh-ed25519").write_private_key(str(key))
    config = write_config(
        tmp_path / "config",
        "HostName gpu-7.example.org",
        "User carol",
        "Port 2201",
        "ServerAliveInterval 60",
        "ServerAliveCountMax 10",
        "ConnectTimeout 45",
        "StrictHostKeyChecking accept-new",
        "UserKnownHostsFile ~/first_known ~/second_known",
        "GlobalKnownHostsFile /srv/ssh/known_hosts",
        "HashKnownHosts yes",
        "ProxyJump ssh://carol@bastion:2201,dave@gw:2222",
        f"IdentityFile {key}",
        "Ciphers aes256-ctr",
    )
    settings = await effective_options(SshTarget("gpu", config_path=config))
    assert (settings.host, settings.user, settings.port) == ("gpu-7.example.org", "carol", 2201)
    assert (settings.keepalive_interval, settings.keepalive_count_max) == (60.0, 10)
    assert settings.connect_timeout == 45.0
    assert settings.host_key_policy == "accept-new"
    assert settings.user_known_hosts == (Path("~/first_known"), Path("~/second_known"))
    assert settings.global_known_hosts == (Path("/srv/ssh/known_hosts"),)
    assert settings.hash_known_hosts is True
    assert settings.jumps == (JumpHost("bastion", "carol", 2201), JumpHost("gw", "dave", 2222))
    assert settings.identity_files == (key,)
    assert settings.options.encryption_algs == [b"aes256-ctr"]


async def test_bringup_defaults_apply_only_where_the_config_is_silent(tmp_path: Path) -> None:
    config = write_config(tmp_path / "config", "HostName 10.0.0.7")
    settings = await effective_options(SshTarget("gpu", config_path=config))
    assert (settings.connect_timeout, settings.keepalive_interval) == (10.0, 10.0)
    assert settings.keepalive_count_max == 3
    assert settings.host_key_policy == "strict"
    assert settings.user_known_hosts == (Path("~/.ssh/known_hosts"),)
    assert settings.global_known_hosts == GLOBAL_KNOWN_HOSTS
    assert settings.hash_known_hosts is False
    assert settings.jumps == ()


async def test_the_command_line_wins_over_the_config_which_wins_over_the_profile(
    tmp_path: Path,
) -> None:
    config = write_config(tmp_path / "config", "StrictHostKeyChecking yes")
    target = SshTarget("gpu", config_path=config, default_policy="accept-new")
    assert (await effective_options(target)).host_key_policy == "strict"
    chosen = SshTarget("gpu", config_path=config, host_key_policy="accept-new")
    assert (await effective_options(chosen)).host_key_policy == "accept-new"
    silent = write_config(tmp_path / "silent", "Port 22")
    profile = SshTarget("gpu", config_path=silent, default_policy="accept-new")
    assert (await effective_options(profile)).host_key_policy == "accept-new"


@pytest.mark.parametrize(
    ("value", "policy"),
    [("yes", "strict"), ("accept-new", "accept-new"), ("ask", "ask"), ("no", "no"), ("off", "no")],
)
async def test_strict_host_key_checking_values(tmp_path: Path, value: str, policy: str) -> None:
    config = write_config(tmp_path / "config", f"StrictHostKeyChecking {value}")
    assert (await effective_options(SshTarget("gpu", config_path=config))).host_key_policy == policy


async def test_known_hosts_none_and_a_bad_strictness_value(tmp_path: Path) -> None:
    config = write_config(tmp_path / "config", "UserKnownHostsFile none")
    assert (await effective_options(SshTarget("gpu", config_path=config))).user_known_hosts == ()
    bad = write_config(tmp_path / "bad", "StrictHostKeyChecking maybe")
    with pytest.raises(Exception, match="StrictHostKeyChecking 'maybe'"):
        await effective_options(SshTarget("gpu", config_path=bad))


@pytest.mark.parametrize(
    ("value", "hops"),
    [
        ("bastion", (JumpHost("bastion"),)),
        ("carol@bastion:2201", (JumpHost("bastion", "carol", 2201),)),
        ("ssh://carol@bastion:2201", (JumpHost("bastion", "carol", 2201),)),
        ("ssh://bastion", (JumpHost("bastion"),)),
        ("ssh://[fd00::7]:2201", (JumpHost("fd00::7", None, 2201),)),
        ("a,ssh://u@b:2,c@d", (JumpHost("a"), JumpHost("b", "u", 2), JumpHost("d", "c"))),
        ("none", ()),
        (None, ()),
    ],
)
def test_proxy_jump_forms(value: str | None, hops: tuple[JumpHost, ...]) -> None:
    assert parse_proxy_jump(value) == hops


@pytest.mark.parametrize("value", ["ssh://bastion/path", "ssh://bastion:99999", "u@"])
def test_a_malformed_proxy_jump_is_an_error(value: str) -> None:
    with pytest.raises(SshConfigError, match="ProxyJump"):
        parse_proxy_jump(value)


async def test_a_jump_written_as_an_ssh_url_is_followed(
    ssh_server: TestServer, tmp_path: Path
) -> None:
    jump = start_server(tmp_path / "jump", alias="jumphost")
    try:
        known = tmp_path / "known_hosts"
        known.write_text(f"{ssh_server.known_hosts_line}\n{jump.known_hosts_line}\n")
        config = tmp_path / "config"
        config.write_text(
            f"Host {ssh_server.alias}\n"
            f"    HostName {ssh_server.host}\n    Port {ssh_server.port}\n"
            f"    ProxyJump ssh://{jump.username}@{jump.host}:{jump.port}\n"
            f"Host *\n"
            f'    IdentityFile "{ssh_server.client_key}"\n'
            f'    IdentityFile "{jump.client_key}"\n'
            f'    UserKnownHostsFile "{known}"\n'
            "    IdentityAgent none\n"
        )
        link = await connect(SshTarget(ssh_server.alias, config_path=config))
        transport = SshTransport(link)
        assert len(link.jumps) == 1
        assert (await transport.run(["echo", "through"])).stdout == b"through\n"
        await transport.close()
    finally:
        jump.stop()


async def test_a_connection_uses_what_the_config_sets(
    ssh_server: TestServer, tmp_path: Path
) -> None:
    known = tmp_path / "known_hosts"
    known.write_text(ssh_server.known_hosts_line + "\n")
    config = tmp_path / "config"
    config.write_text(
        f"Host {ssh_server.alias}\n"
        "    ServerAliveInterval 60\n    ServerAliveCountMax 10\n    ConnectTimeout 45\n"
        "    StrictHostKeyChecking yes\n    HashKnownHosts yes\n    ProxyJump none\n"
        f'    UserKnownHostsFile "{tmp_path / "absent"}"\n'
        f'    GlobalKnownHostsFile "{known}"\n'
        "    Ciphers aes256-ctr\n" + ssh_server.ssh_config.read_text().partition("\n")[2]
    )
    target = SshTarget(ssh_server.alias, config_path=config)
    settings = await effective_options(target)
    assert (settings.keepalive_interval, settings.keepalive_count_max) == (60.0, 10)
    assert settings.connect_timeout == 45.0
    link = await connect(target)
    try:
        assert link.conn.get_extra_info("send_cipher") == "aes256-ctr"
        assert link.jumps == []
    finally:
        link.close()
