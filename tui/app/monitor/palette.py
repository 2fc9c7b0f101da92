"""Command palette entries for what has no key of its own: ranks by name, themes, logs."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.content import Content

from tui.app.monitor.monitor_messages import RankFocused

if TYPE_CHECKING:
    from tui.app.monitor.monitor_app import MonitorApp

Command = tuple[str, Callable[[], object], str]


class MonitorCommands(Provider):
    """Focus a rank, open its log, switch theme, copy the failure, reconnect."""

    def _commands(self) -> list[Command]:
        app: MonitorApp = self.app  # type: ignore[assignment]
        commands: list[Command] = []
        for rank in app.state.link.snapshot.ranks:
            focus = partial(app.post_message, RankFocused(rank.tag))
            commands.append((f"Focus rank {rank.tag}", focus, f"select the {rank.tag} panel"))
            log = partial(app.open_rank_log, rank.tag)
            commands.append((f"Open log for {rank.tag}", log, f"{rank.tag} only, full screen"))
        commands.extend(
            (f"Theme: {name}", partial(setattr, app, "theme", name), "switch colours")
            for name in sorted(app.available_themes)
            if name.startswith("bringup-")
        )
        commands += [
            ("Open log for all ranks", app.action_open_log, "full-screen log"),
            ("Warnings and errors", partial(app.action_open_log, True), "problems across ranks"),
            ("Copy failure excerpt", app.action_copy_failure, "to the clipboard (OSC 52)"),
            ("Reconnect", app.action_reconnect, "drop and re-open the link to the host"),
        ]
        return commands

    async def discover(self) -> Hits:
        for name, callback, help_text in self._commands():
            yield DiscoveryHit(Content(name), callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, callback, help_text in self._commands():
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), callback, help=help_text)
