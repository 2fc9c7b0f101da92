"""``bringup watch`` over SSH in a real tmux pane: closing the terminal leaves nothing running,
neither the app nor the ``tail`` it started on the host."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.net import free_port
from tests.sshd import TestServer
from tests.tmux import QUIT_SECONDS, Pane, gone, private_pane, processes_mentioning
from tests.ui.startup_log import up_to

pytestmark = [pytest.mark.tmux, pytest.mark.slow]


@pytest.fixture
def pane() -> Iterator[Pane]:
    with private_pane("bringup-hangup", "watch") as made:
        yield made


def test_closing_the_terminal_of_a_watch_leaves_nothing_running(
    pane: Pane, ssh_server: TestServer, tmp_path: Path
) -> None:
    log = tmp_path / "server.log"
    log.write_bytes(up_to("weights"))
    config = tmp_path / "config.toml"
    config.write_text(
        "[profiles.one]\n"
        f'host = "{ssh_server.alias}"\n'
        f'log = "{log}"\n'
        f"port = {free_port()}\n"
        f'ssh_config = "{ssh_server.ssh_config}"\n'
    )
    env = {"TERM": "tmux-256color", "BRINGUP_DATA_DIR": str(tmp_path / "data")}
    pane.start([sys.executable, "-m", "tui", "watch", "one", "--config", str(config)], env)
    pane.wait_for("TP7", "weight loading")
    app = pane.pid()
    assert _tails(tmp_path), "the host runs a tail of the log while the app watches it"
    pane.tmux("kill-session", "-t", pane.name)  # the terminal goes away: SIGHUP
    deadline = time.monotonic() + QUIT_SECONDS
    while time.monotonic() < deadline and not (gone(app) and not _tails(tmp_path)):
        time.sleep(0.2)
    assert gone(app), "the app ended with its terminal"
    assert _tails(tmp_path) == [], "no tail of the log was left on the host"


def _tails(folder: Path) -> list[str]:
    """The ``tail`` processes reading a file in ``folder`` (the path on their command line is
    padded with ``./`` steps, so only the folder and the file name are looked for)."""
    return [
        line
        for line in processes_mentioning(str(folder))
        if "tail -c" in line and line.rstrip().endswith("server.log")
    ]
