"""The copy action's way to the clipboard: OSC 52, and tmux's paste buffer where tmux drops
OSC 52 (inside tmux without ``set -g set-clipboard on``)."""

from __future__ import annotations

from textual.app import App

from tui.io.clipboard.tmux_clipboard import (
    TmuxError,
    inside_tmux,
    load_tmux_buffer,
    osc52_passes_tmux,
)

TMUX_ADVICE = "set -g set-clipboard on for the system clipboard"


class ClipboardCopy:
    """Copies text for ``app`` and tells the user where it went; tmux is asked in a worker."""

    def __init__(self, app: App[int]) -> None:
        self._app = app

    def copy(self, text: str, what: str) -> None:
        """Copy ``text``; ``what`` names it in the notification (``failure excerpt``)."""
        self._app.copy_to_clipboard(text)  # OSC 52, and the app's own clipboard
        if not inside_tmux():
            self._app.notify(f"{what} copied to the clipboard", markup=False)
            return
        self._app.run_worker(
            self._through_tmux(text, what), group="clipboard", exclusive=True, exit_on_error=False
        )

    async def _through_tmux(self, text: str, what: str) -> None:
        try:
            if await osc52_passes_tmux():
                self._app.notify(f"{what} copied to the clipboard", markup=False)
                return
            await load_tmux_buffer(text)
        except TmuxError as exc:
            self._app.notify(f"{what} sent to the terminal (OSC 52), but {exc}", markup=False,
                             severity="warning")  # fmt: skip
            return
        self._app.notify(f"{what} copied to tmux buffer; {TMUX_ADVICE}", markup=False)
