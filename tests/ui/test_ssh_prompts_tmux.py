"""Logins that need a person, from a real terminal: ``bringup wait`` in a tmux pane asks a
keyboard-interactive (MFA) question and a key's passphrase on the terminal, the test types the
answer, and the wait goes on to READY. Answers are never echoed."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.io.test_ssh_logins import CODE, PASSPHRASE, locked_config
from tests.sshd import MFA_SERVER_ID, TestServer, start_server
from tests.tmux import private_pane
from tests.ui.startup_log import up_to

DONE = "wait exited with"


def waiting(host: str, config: Path, log: Path) -> list[str]:
    """A shell script that runs ``bringup wait`` and then shows its exit status until it is
    killed (it survives a Ctrl-C meant for the wait: a trapped signal is reset for the child)."""
    wait = [sys.executable, "-m", "tui", "wait", "--host", host, "--log", str(log)]
    wait += ["--ssh-config", str(config), "--timeout", "60s", "--plain", "--log-only"]
    script = log.with_name("wait.sh")
    script.write_text(f'trap : INT\n{shlex.join(wait)}\necho "{DONE} $?"\nsleep 300\n')
    return ["sh", str(script)]


def answer_in_pane(tmp_path: Path, host: str, config: Path, prompt: str, typed: str) -> str:
    log = tmp_path / "server.log"
    log.write_bytes(up_to("ready"))
    with private_pane("bringup-login", "wait") as pane:
        pane.start(waiting(host, config, log), {"TERM": "tmux-256color"})
        pane.wait_for(prompt.strip(), timeout=60)
        pane.tmux("send-keys", "-t", pane.name, "-l", typed)
        pane.tmux("send-keys", "-t", pane.name, "Enter")
        pane.wait_for(DONE, timeout=60)
        return pane.tmux("capture-pane", "-p", "-S", "-", "-t", pane.name).stdout


@pytest.fixture(params=[pytest.param(MFA_SERVER_ID, id=MFA_SERVER_ID)])
def mfa_server(tmp_path: Path) -> Iterator[TestServer]:
    """OpenSSH's sshd asking through PAM where that can be set up, else the embedded server."""
    server = start_server(tmp_path / "mfa", alias="mfa-host", kbd_interactive=CODE)
    try:
        yield server
    finally:
        server.stop()


def test_a_keyboard_interactive_login_is_answered_in_the_terminal(
    mfa_server: TestServer, tmp_path: Path
) -> None:
    prompt = mfa_server.kbd_prompt
    screen = answer_in_pane(tmp_path, mfa_server.alias, mfa_server.ssh_config, prompt, CODE.answer)
    assert f"{CODE.instructions}\n{prompt.strip()}" in screen, screen
    assert f"{DONE} 0" in screen, screen
    assert "READY" in screen
    assert CODE.answer not in screen


def test_a_wrong_keyboard_interactive_answer_is_asked_again(
    mfa_server: TestServer, tmp_path: Path
) -> None:
    prompt = mfa_server.kbd_prompt.strip()
    log = tmp_path / "server.log"
    log.write_bytes(up_to("ready"))
    with private_pane("bringup-login", "wait") as pane:
        pane.start(waiting(mfa_server.alias, mfa_server.ssh_config, log), {"TERM": "tmux-256color"})
        for typed, asked in (("000000", prompt), (CODE.answer, f"{prompt}\n{CODE.instructions}")):
            pane.wait_for(asked, timeout=60)
            pane.tmux("send-keys", "-t", pane.name, "-l", typed)
            pane.tmux("send-keys", "-t", pane.name, "Enter")
        pane.wait_for(DONE, timeout=60)
        screen = pane.tmux("capture-pane", "-p", "-S", "-", "-t", pane.name).stdout
    assert f"{DONE} 0" in screen, screen
    assert screen.count(prompt) == 2
    assert "000000" not in screen


def test_a_passphrase_is_asked_once_in_the_terminal(ssh_server: TestServer, tmp_path: Path) -> None:
    config, locked = locked_config(ssh_server, tmp_path)
    prompt = f"Enter passphrase for key '{locked}'"
    screen = answer_in_pane(tmp_path, ssh_server.alias, config, prompt, PASSPHRASE)
    assert f"{DONE} 0" in screen, screen
    assert screen.count("Enter passphrase") == 1
    assert PASSPHRASE not in screen


def test_watch_asks_for_the_passphrase_before_its_screen(
    ssh_server: TestServer, tmp_path: Path
) -> None:
    config, locked = locked_config(ssh_server, tmp_path)
    log = tmp_path / "server.log"
    log.write_bytes(up_to("weights"))
    watch = [sys.executable, "-m", "tui", "watch", "--host", ssh_server.alias, "--log", str(log)]
    watch += ["--ssh-config", str(config)]
    env = {"TERM": "tmux-256color", "BRINGUP_DATA_DIR": str(tmp_path / "data")}
    with private_pane("bringup-login", "watch") as pane:
        pane.start(watch, env)
        pane.wait_for(f"Enter passphrase for key '{locked}':", timeout=60)
        pane.tmux("send-keys", "-t", pane.name, "-l", PASSPHRASE)
        pane.tmux("send-keys", "-t", pane.name, "Enter")
        screen = pane.wait_for("TP7", "weight loading", timeout=120)
    assert PASSPHRASE not in screen


def test_an_unknown_host_key_under_ask_is_asked_and_recorded(
    ssh_server: TestServer, tmp_path: Path
) -> None:
    known = tmp_path / "known_hosts"
    known.write_text("")
    config = tmp_path / "config"
    original = ssh_server.ssh_config.read_text().replace(str(ssh_server.known_hosts), str(known))
    config.write_text(original.replace("\n", "\n    StrictHostKeyChecking ask\n", 1))
    question = "Are you sure you want to continue connecting (yes/no/[fingerprint])?"
    screen = answer_in_pane(tmp_path, ssh_server.alias, config, question, "yes")
    assert "can't be established" in screen
    assert f"{DONE} 0" in screen, screen
    assert known.read_text() == ssh_server.known_hosts_line + "\n"


def test_ctrl_c_at_a_passphrase_prompt_ends_the_wait_and_gives_the_echo_back(
    ssh_server: TestServer, tmp_path: Path
) -> None:
    config, _ = locked_config(ssh_server, tmp_path)
    log = tmp_path / "server.log"
    log.write_bytes(up_to("ready"))
    with private_pane("bringup-login", "wait") as pane:
        pane.start(waiting(ssh_server.alias, config, log), {"TERM": "tmux-256color"})
        pane.wait_for("Enter passphrase", timeout=60)
        pane.tmux("send-keys", "-t", pane.name, "C-c")
        pane.wait_for(f"{DONE} 130", timeout=60)
        pane.tmux("send-keys", "-t", pane.name, "-l", "echoed-again")
        pane.wait_for("echoed-again", timeout=30)
