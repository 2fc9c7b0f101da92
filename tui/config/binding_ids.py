"""The ids of the app's key bindings with their default keys, for the ``[keys]`` table.

The app's ``Binding(..., id=...)`` declarations are the source of truth; a test checks that
this table lists every one of them with its key, so an id in ``[keys]`` that no binding has
(``lauch = "x"``) is reported with a suggestion instead of being silently ignored.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

_RANKS = {f"rank-{n}": str(n) for n in range(1, 10)} | {"rank-10": "0"}

BINDING_DEFAULTS: Mapping[str, str] = MappingProxyType(
    {
        # the monitor
        "quit": "q", "quit-interrupt": "ctrl+c", "log": "l", "errors-log": "e",
        "search-log": "slash", "copy-failure": "y", "reconnect": "r", "help": "question_mark",
        **_RANKS,
        "launch": "L", "kill": "K", "restart": "R", "confirm-yes": "y", "confirm-no": "n,escape",
        "bench": "b", "compare": "c", "bench-yes": "y", "bench-no": "n,escape",
        "bench-more-trials": "t", "bench-choose-level": "v",
        "dump-stacks": "d",
        # the log view, the help screen and the comparison view
        "log-back": "escape", "log-close": "l", "follow": "f", "errors": "e", "search": "slash",
        "next-match": "n", "all-ranks": "a", "monitor-traffic": "m",
        "help-close": "escape,question_mark,q",
        "compare-close": "escape,c", "compare-previous": "left", "compare-next": "right",
        "compare-baseline": "b,enter", "compare-scope": "m", "compare-more-trials": "t",
    }
)  # fmt: skip
"""Every binding id and the key (or keys, comma-separated) it has unless ``[keys]`` says."""
