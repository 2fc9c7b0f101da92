"""User configuration: ``config.toml`` loaded into frozen dataclasses.

``load_config()`` reads ``--config``, ``$BRINGUP_CONFIG`` or the XDG config folder and returns a
``Config``; ``Config.profile(name)`` picks a ``Profile``. The whole file is checked first, then
every problem is raised at once as ``ConfigErrors`` (a ``ConfigError``), one
``"{file}:{line}: {dotted.key}: {problem}"`` per line. The package imports no UI
library, so headless commands can use it.
"""

from __future__ import annotations

from tui.config.config_load import config_path, default_config_path, load_config, parse_config
from tui.config.config_model import (
    LAUNCH_PLACEHOLDERS,
    BenchConfig,
    Config,
    LaunchConfig,
    MonitorConfig,
    Profile,
    ServingConfig,
    StallConfig,
)
from tui.config.config_text import ConfigError, ConfigErrors
from tui.config.ssh_targets import SshAddress, SshChoices, parse_ssh_target
from tui.engine.timing.durations import DurationError, format_duration, parse_duration

__all__ = [
    "LAUNCH_PLACEHOLDERS",
    "BenchConfig",
    "Config",
    "ConfigError",
    "ConfigErrors",
    "DurationError",
    "LaunchConfig",
    "MonitorConfig",
    "Profile",
    "ServingConfig",
    "SshAddress",
    "SshChoices",
    "StallConfig",
    "config_path",
    "default_config_path",
    "format_duration",
    "load_config",
    "parse_config",
    "parse_duration",
    "parse_ssh_target",
]
