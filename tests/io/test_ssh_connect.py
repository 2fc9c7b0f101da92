"""Connecting as ``ssh`` would: config aliases, ProxyJump, and host keys checked strictly."""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import shlex
from pathlib import Path

import asyncssh
import pytest

from tests.net import free_port
from tests.sshd import TestServer, chain_config, other_key, refusal, start_server
from tui.io.transport.link_events import ConnectFailureKind
from tui.io.transport.ssh import SshTarget, SshTransport, connect, parse_host_spec


def fingerprint(server: TestServer) -> str:
    key = asyncssh.import_public_key(server.host_public_key)
    return str(key.get_fingerprint("sha256"))


async def test_the_alias_from_ssh_config_connects(ssh_server: TestServer) -> None:
    transport = SshTransport(await connect(ssh_server.target()))
    result = await transport.run(["echo", "connected"])
    await transport.close()
    assert result.stdout == b"connected\n"


async def test_an_unknown_host_is_refused_with_its_fingerprint_and_the_command_to_trust_it(
    ssh_server: TestServer, tmp_path: Path
) -> None:
    known = tmp_path / "known_hosts"
    known.write_text("")
    error = await refusal(ssh_server.target(known_hosts=known))
    assert error.kind is ConnectFailureKind.HOST_KEY
    assert fingerprint(ssh_server) in error.message
    keyscan = f"ssh-keyscan -p {ssh_server.port} 127.0.0.1 >> {shlex.quote(str(known))}"
    assert keyscan in error.hint
    assert known.read_text() == ""


async def test_a_changed_key_is_refused_with_a_warning(
    ssh_server: TestServer, tmp_path: Path
) -> None:
    known = tmp_path / "known_hosts"
    known.write_text(f"[127.0.0.1]:{ssh_server.port} {other_key()}\n")
    for policy in ("strict", "accept-new"):
        error = await refusal(ssh_server.target(known_hosts=known, host_key_policy=policy))
        assert error.kind is ConnectFailureKind.HOST_KEY
        assert "CHANGED" in error.message
        assert fingerprint(ssh_server) in error.message
        assert "ssh-keygen -R" in error.hint


async def test_accept_new_records_the_key_then_verifies_it(
    ssh_server: TestServer, tmp_path: Path
) -> None:
    known = tmp_path / "new" / "known_hosts"
    link = await connect(ssh_server.target(known_hosts=known, host_key_policy="accept-new"))
    link.close()
    assert known.read_text() == f"[127.0.0.1]:{ssh_server.port} {ssh_server.host_public_key}\n"
    link = await connect(ssh_server.target(known_hosts=known))
    link.close()


async def test_a_hashed_known_hosts_entry_is_honoured(
    ssh_server: TestServer, tmp_path: Path
) -> None:
    salt = os.urandom(20)
    name = f"[127.0.0.1]:{ssh_server.port}".encode()
    digest = hmac.new(salt, name, hashlib.sha1).digest()
    hashed = f"|1|{base64.b64encode(salt).decode()}|{base64.b64encode(digest).decode()}"
    known = tmp_path / "known_hosts"
    known.write_text(f"{hashed} {ssh_server.host_public_key}\n")
    link = await connect(ssh_server.target(known_hosts=known))
    link.close()


async def test_a_revoked_key_is_refused(ssh_server: TestServer, tmp_path: Path) -> None:
    known = tmp_path / "known_hosts"
    known.write_text(f"{ssh_server.known_hosts_line}\n@revoked * {ssh_server.host_public_key}\n")
    error = await refusal(ssh_server.target(known_hosts=known))
    assert error.kind is ConnectFailureKind.HOST_KEY
    assert "revoked" in error.message


async def test_a_refused_key_is_told_apart_from_refused_authentication(
    ssh_server: TestServer, tmp_path: Path
) -> None:
    stranger = tmp_path / "stranger"
    asyncssh.generate_private_key("ssh-ed25519").write_private_key(str(stranger))
    config = tmp_path / "config"
    config.write_text(
        ssh_server.ssh_config.read_text().replace(str(ssh_server.client_key), str(stranger))
    )
    error = await refusal(ssh_server.target(config_path=config))
    assert error.kind is ConnectFailureKind.AUTH


async def test_a_closed_port_is_unreachable(tmp_path: Path) -> None:
    (tmp_path / "config").write_text("")
    target = SshTarget("127.0.0.1", port=free_port(), config_path=tmp_path / "config")
    error = await refusal(target)
    assert error.kind is ConnectFailureKind.UNREACHABLE


async def test_proxy_jump_goes_through_a_second_server(
    ssh_server: TestServer, tmp_path: Path
) -> None:
    jump = start_server(tmp_path / "jump", alias="jumphost")
    try:
        config = chain_config(tmp_path / "config", ssh_server, jump)
        link = await connect(ssh_server.target(config_path=config, known_hosts=None))
        transport = SshTransport(link)
        assert len(link.jumps) == 1
        if jump.kind == "openssh":
            assert jump.connection_pids()
        assert (await transport.run(["echo", "via jump"])).stdout == b"via jump\n"
        await transport.close()
        known = tmp_path / "only_target"
        known.write_text(ssh_server.known_hosts_line + "\n")
        error = await refusal(ssh_server.target(config_path=config, known_hosts=known))
        assert error.kind is ConnectFailureKind.HOST_KEY
        assert str(jump.port) in error.message
    finally:
        jump.stop()


@pytest.mark.parametrize(
    ("spec", "parsed"),
    [
        ("gpu-box", ("gpu-box", None, None)),
        ("10.0.0.5", ("10.0.0.5", None, None)),
        ("alice@gpu-box", ("gpu-box", "alice", None)),
        ("alice@gpu-box:2222", ("gpu-box", "alice", 2222)),
        ("[fe80::1]:22", ("fe80::1", None, 22)),
        ("fe80::1", ("fe80::1", None, None)),
    ],
)
def test_host_specs_are_parsed(spec: str, parsed: tuple[str, str | None, int | None]) -> None:
    assert parse_host_spec(spec) == parsed


@pytest.mark.parametrize("spec", ["", "@host", "host:0", "host:http", "[::1"])
def test_bad_host_specs_are_refused(spec: str) -> None:
    with pytest.raises(ValueError):  # noqa: PT011
        parse_host_spec(spec)
