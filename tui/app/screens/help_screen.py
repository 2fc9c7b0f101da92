"""The help screen: every key as currently bound (after the user's ``[keys]`` remapping)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static


def key_rows(
    groups: Iterable[tuple[str, Iterable[BindingType]]], keymap: Mapping[str, str]
) -> Content:
    """A two-column listing of keys and what they do, one section per screen."""
    lines: list[Content] = []
    for title, bindings in groups:
        lines.append(Content.styled(title, "bold $primary"))
        for binding in bindings:
            if not isinstance(binding, Binding) or not binding.description:
                continue
            if (binding.id or "").startswith("rank-"):
                continue
            keys = keymap.get(binding.id or "", binding.key)
            shown = ", ".join(_key_name(key) for key in keys.split(","))
            lines.append(Content.assemble((f"  {shown:<14}", "bold"), binding.description))
        lines.append(Content(""))
    lines.append(
        Content.assemble(("  1-9, 0       ", "bold"), "focus rank 1 to 10 (the palette")
        + Content(" finds any rank by name)")
    )
    return Content("\n").join(lines)


def _key_name(key: str) -> str:
    names = {"question_mark": "?", "slash": "/", "escape": "esc", "ctrl+c": "ctrl+c"}
    return names.get(key.strip(), key.strip())


class HelpScreen(ModalScreen[None]):
    """A modal list of keys; any of escape, ? or q closes it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,question_mark,q", "dismiss", "Close", id="help-close")
    ]

    DEFAULT_CSS = """
    HelpScreen {
        align: center middle;
        & > VerticalScroll {
            width: 72;
            max-width: 100%;
            height: auto;
            max-height: 90%;
            border: round $primary;
            background: $surface;
            padding: 0 1;
        }
    }
    """

    def __init__(self, text: Content) -> None:
        super().__init__()
        self.text = text

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(Content.styled("bringup keys", "bold"))
            yield Static(self.text)
            yield Static(Content.styled("ctrl+p opens the command palette", "$text-muted"))
