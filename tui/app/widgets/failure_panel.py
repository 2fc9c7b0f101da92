"""The failure view: which rank failed, in which stage, why, and the log excerpt that says so."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Static

from tui.engine.logs.sanitize import printable
from tui.engine.startup.snapshot import Failure


def failure_title(failure: Failure) -> Content:
    """``FAILED · TP3 · CUDA graphs · out of memory (line 1234)``."""
    parts: list[str | tuple[str, str]] = [("✖ FAILED", "bold $rank-failed")]
    if failure.rank:
        parts.extend([" · ", (printable(failure.rank), "bold")])
    if failure.stage is not None:
        parts.extend([" · ", failure.stage.label])
    parts.extend([" · ", failure.kind.label])
    if failure.line:
        parts.append((f"  (log line {failure.line})", "$text-muted"))
    return Content.assemble(*parts)


def failure_report(failure: Failure) -> str:
    """The plain text copied to the clipboard."""
    title = failure_title(failure).plain
    return f"{title}\n\n{failure.excerpt}\n"


class FailurePanel(VerticalScroll):
    """Docked under the grid while the server has failed; hidden otherwise."""

    DEFAULT_CSS = """
    FailurePanel {
        display: none;
        dock: bottom;
        height: auto;
        max-height: 45%;
        border-top: heavy $rank-failed;
        background: $surface;
        padding: 0 1;
        &.-shown { display: block; }
        & > #failure-title { height: 1; }
        & > #failure-excerpt { height: auto; color: $foreground; }
        & > #failure-hint { height: 1; color: $text-muted; }
        & > #failure-hardware { display: none; height: auto; color: $text-warning; }
        & > #failure-hardware.-shown { display: block; }
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.failure: Failure | None = None

    def compose(self) -> ComposeResult:
        yield Static(Content(""), id="failure-title")
        yield Static(Content(""), id="failure-excerpt")
        yield Static(Content(""), id="failure-hardware")
        yield Static(Content("y copies this excerpt · l opens the log"), id="failure-hint")

    def show(self, failure: Failure | None) -> None:
        if failure == self.failure:
            return
        self.failure = failure
        self.set_class(failure is not None, "-shown")
        if failure is None:
            return
        self.show_hardware("")  # a new failure: the host's kernel log is read again
        self.query_one("#failure-title", Static).update(failure_title(failure))
        excerpt = "\n".join(printable(line) for line in failure.excerpt.splitlines())
        self.query_one("#failure-excerpt", Static).update(Content(excerpt))

    def show_hardware(self, summary: str) -> None:
        """What the host's kernel log said about the GPUs (plain text, never markup)."""
        line = self.query_one("#failure-hardware", Static)
        line.update(Content(printable(summary)))
        line.set_class(bool(summary), "-shown")
