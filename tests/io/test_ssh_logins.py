"""Logins that need a person, with no person to ask: a key protected by a passphrase and a
keyboard-interactive (MFA) question are refused with a message that says what was needed, and
``bringup wait`` exits 3 ("unreachable or refused")."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from pathlib import Path

import asyncssh
import pytest

from tests.conftest import REPO
from tests.sshd import MFA_SERVER_ID, TestServer, pam_login_missing, refusal, start_server
from tui.io.transport.embedded_sshd import Challenge
from tui.io.transport.link_events import ConnectFailureKind
from tui.io.transport.ssh import connect

PASSPHRASE = "correct horse"
CODE = Challenge("Verification code: ", "424242", "One-time code from your token.")


def locked_config(server: TestServer, tmp_path: Path) -> tuple[Path, Path]:
    """An ssh_config for ``server`` whose IdentityFile is its client key under a passphrase."""
    locked = tmp_path / "locked_ed25519"
    key = asyncssh.read_private_key(server.client_key)
    key.write_private_key(str(locked), passphrase=PASSPHRASE)
    config = tmp_path / "config"
    config.write_text(server.ssh_config.read_text().replace(str(server.client_key), str(locked)))
    return config, locked


@pytest.fixture(params=[pytest.param(MFA_SERVER_ID, id=MFA_SERVER_ID)])
def mfa_server(tmp_path: Path) -> Iterator[TestServer]:
    """A server that asks ``CODE`` instead of taking the client key: OpenSSH's sshd through
    PAM where that can be set up, else the embedded one (see ``tests/sshd.py``)."""
    server = start_server(tmp_path / "mfa", alias="mfa-host", kbd_interactive=CODE)
    try:
        yield server
    finally:
        server.stop()


async def test_a_locked_key_without_a_terminal_is_named(
    ssh_server: TestServer, tmp_path: Path
) -> None:
    config, locked = locked_config(ssh_server, tmp_path)
    error = await refusal(ssh_server.target(config_path=config))
    assert error.kind is ConnectFailureKind.AUTH
    assert f"the passphrase of {locked}" in error.message
    assert "no terminal" in error.message


async def test_an_unlocked_key_is_offered(ssh_server: TestServer, tmp_path: Path) -> None:
    config, locked = locked_config(ssh_server, tmp_path)
    unlocked = asyncssh.read_private_key(locked, PASSPHRASE)
    link = await connect(ssh_server.target(config_path=config, client_keys=(unlocked,)))
    link.close()


async def test_a_keyboard_interactive_host_without_a_terminal_says_so(
    mfa_server: TestServer,
) -> None:
    error = await refusal(mfa_server.target())
    assert error.kind is ConnectFailureKind.AUTH
    assert "keyboard-interactive (MFA) answers" in error.message


def test_a_pam_login_server_removes_its_pam_service_when_it_stops(tmp_path: Path) -> None:
    missing = pam_login_missing()
    if missing is not None:
        pytest.skip(missing)
    server = start_server(tmp_path / "mfa", kbd_interactive=CODE)
    service = server.pam_service
    assert server.kind == "openssh"
    assert service is not None
    assert service.is_file()
    server.stop()
    assert not service.exists()


async def test_wait_without_a_terminal_exits_3_naming_the_key(
    ssh_server: TestServer, tmp_path: Path
) -> None:
    config, locked = locked_config(ssh_server, tmp_path)
    log = tmp_path / "server.log"
    log.write_text("")
    wait = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tui", "wait", "--host", ssh_server.alias, "--log", str(log),
        "--ssh-config", str(config), "--timeout", "60s",
        cwd=REPO, stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    output, _ = await wait.communicate()
    assert wait.returncode == 3, output
    assert str(locked) in output.decode()
