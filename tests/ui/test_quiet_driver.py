"""The quiet terminal driver in a real terminal: its input thread sleeps while nothing is typed
(Textual's own wakes ten times a second), a lone Escape still arrives, and an exit that comes
while the thread sleeps is not kept waiting."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest
from textual.drivers.linux_driver import LinuxDriver

from tests.conftest import REPO
from tests.tmux import Pane, private_pane
from tests.ui.monitor_factory import make_monitor
from tui.app.monitor.quiet_driver import QuietLinuxDriver

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the Linux driver only")

APP = """
import sys, threading
from textual.app import App
from textual.drivers.linux_driver import LinuxDriver
from textual.widgets import Static
from tui.app.monitor.quiet_driver import QuietLinuxDriver

class Probe(App):
    BINDINGS = [("escape", "escaped", "Escape"), ("z", "later", "Exit later")]

    def compose(self):
        yield Static("waiting", id="said")

    def on_mount(self):
        thread = next(t for t in threading.enumerate() if t.name == "textual-input")
        with open(sys.argv[2], "w") as out:
            out.write(str(thread.native_id))
        self.query_one("#said", Static).update("mounted")

    def action_escaped(self):
        self.query_one("#said", Static).update("escape arrived")

    def action_later(self):
        self.query_one("#said", Static).update("leaving soon")
        self.set_timer(2.0, self.exit)

driver = QuietLinuxDriver if sys.argv[1] == "quiet" else LinuxDriver
Probe(driver_class=driver).run()
"""


def _wakeups(pid: int, tid: int) -> int:
    """How many times the thread has gone to sleep and been woken (its context switches)."""
    status = Path(f"/proc/{pid}/task/{tid}/status").read_text()
    counts = [line.split()[1] for line in status.splitlines() if "ctxt_switches" in line]
    return sum(int(count) for count in counts)


def _start(pane: Pane, tmp_path: Path, driver: str) -> tuple[int, int]:
    script = tmp_path / "probe_app.py"
    script.write_text(APP)
    tid_file = tmp_path / f"{driver}.tid"
    pane.start([sys.executable, str(script), driver, str(tid_file)],
               {"PYTHONPATH": str(REPO), "TERM": "tmux-256color"})  # fmt: skip
    pane.wait_for("mounted")
    return pane.pid(), int(tid_file.read_text())


def _idle_wakeups(pane: Pane, tmp_path: Path, driver: str) -> int:
    pid, tid = _start(pane, tmp_path, driver)
    before = _wakeups(pid, tid)
    time.sleep(2.0)
    return _wakeups(pid, tid) - before


def test_the_input_thread_sleeps_while_nothing_is_typed(tmp_path: Path) -> None:
    with private_pane("bringup-quiet-driver", "stock") as stock:
        woken_stock = _idle_wakeups(stock, tmp_path, "stock")
    with private_pane("bringup-quiet-driver", "quiet") as quiet:
        woken_quiet = _idle_wakeups(quiet, tmp_path, "quiet")
    assert woken_stock >= 10, f"Textual's own input thread woke only {woken_stock} times"
    assert woken_quiet <= 2, f"the quiet input thread woke {woken_quiet} times in 2 s"


def test_a_lone_escape_arrives_and_a_late_exit_is_not_kept_waiting(tmp_path: Path) -> None:
    with private_pane("bringup-quiet-driver", "keys") as pane:
        _start(pane, tmp_path, "quiet")
        pane.tmux("send-keys", "-t", pane.name, "Escape")
        pane.wait_for("escape arrived")
        pane.tmux("send-keys", "-t", pane.name, "z")
        pane.wait_for("leaving soon")
        # The exit comes 2 s after the last key: the input thread has long stopped ticking and
        # sleeps in select with no timeout, so only the exit event's wake-up lets it end.
        deadline = time.monotonic() + 30.0
        while pane.alive() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not pane.alive(), f"the app did not exit; the pane showed:\n{pane.screen()}"


def test_the_monitor_runs_on_the_quiet_driver_unless_one_is_named(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("TEXTUAL_DRIVER", raising=False)
    app, _clock = make_monitor()
    assert app.get_driver_class() is QuietLinuxDriver
    monkeypatch.setenv("TEXTUAL_DRIVER", "textual.drivers.linux_driver:LinuxDriver")
    assert app.get_driver_class() is LinuxDriver
