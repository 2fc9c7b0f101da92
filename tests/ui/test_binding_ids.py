"""The ``[keys]`` table knows every binding id of the app, with the key it has by default."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

from textual.binding import Binding

import tui.app
from tui.config.binding_ids import BINDING_DEFAULTS


def _app_bindings() -> dict[str, str]:
    found: dict[str, str] = {}
    for info in pkgutil.walk_packages(tui.app.__path__, "tui.app."):
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if inspect.isclass(value) and value.__module__ == module.__name__:
                bindings = list(vars(value).get("BINDINGS", []))
            elif name.endswith("BINDINGS") and isinstance(value, list):
                bindings = value
            else:
                continue
            for binding in bindings:
                if isinstance(binding, Binding) and binding.id is not None:
                    found[binding.id] = binding.key
    return found


def test_every_binding_id_of_the_app_is_known_with_its_key() -> None:
    bindings = _app_bindings()
    assert len(bindings) > 30
    assert bindings == dict(BINDING_DEFAULTS)
