"""Run the monitor on hostile log bytes for a moment, then quit (driven by test_hostile.py).

``python -m tests.ui.hostile_run hostile|benign`` shows the main screen, then the full-screen
log, then exits; the parent captures every byte written to the terminal.
"""

from __future__ import annotations

import sys

from tests.ui.startup_log import hostile_bytes, up_to
from tui.app.feed.engine_link import EngineAdapter
from tui.app.feed.feed_sources import ScriptedSource
from tui.app.monitor.monitor_app import MonitorApp
from tui.app.monitor.view_model import Target

SHOW_SECONDS = 1.5


def main(kind: str) -> int:
    data = up_to("weights") + (hostile_bytes() if kind == "hostile" else b"")
    app = MonitorApp(
        link=EngineAdapter(),
        source=ScriptedSource([data]),
        target=Target("hostile", "host"),
    )

    def open_log() -> None:
        app.action_open_log()
        app.set_timer(SHOW_SECONDS, app.exit)

    app.call_later(lambda: app.set_timer(SHOW_SECONDS, open_log))
    app.run()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "hostile"))
