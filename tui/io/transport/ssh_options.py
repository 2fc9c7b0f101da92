"""What an SSH connection will use, read from the OpenSSH client configuration as ``ssh`` reads it.

asyncssh parses the configuration (``Host`` and ``Match`` blocks, ``Include``, first value wins)
and takes every option it understands from it; :func:`effective_options` reads back what a
connection to a target will use, with bringup's own defaults (keep-alives every 10 s, 3 missed
ones end the link, 10 s to connect) only where the configuration is silent. Two options asyncssh
does not act on are read by the same parser: ``StrictHostKeyChecking`` and ``HashKnownHosts``.

Without an explicit file (``--ssh-config``, the profile's ``ssh_config``) the files are
``~/.ssh/config`` then ``/etc/ssh/ssh_config``, as for ``ssh``; an explicit file is the only one
read, as with ``ssh -F``.
"""

from __future__ import annotations

import getpass
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import asyncssh
from asyncssh.config import SSHClientConfig, SSHConfig

from tui.io.transport.host_keys import HostKeyPolicy

DEFAULT_CONFIG = Path("~/.ssh/config")
SYSTEM_CONFIG = Path("/etc/ssh/ssh_config")
DEFAULT_KNOWN_HOSTS = Path("~/.ssh/known_hosts")
GLOBAL_KNOWN_HOSTS = (Path("/etc/ssh/ssh_known_hosts"), Path("/etc/ssh/ssh_known_hosts2"))
CONNECT_TIMEOUT = 10.0
KEEPALIVE_INTERVAL = 10.0
KEEPALIVE_COUNT_MAX = 3
STRICTNESS: dict[str, HostKeyPolicy] = {
    "yes": "strict",
    "true": "strict",
    "accept-new": "accept-new",
    "ask": "ask",
    "no": "no",
    "off": "no",
    "false": "no",
}
"""``StrictHostKeyChecking`` values and the policy each one means."""


class SshConfigError(ValueError):
    """The ssh configuration cannot be used as written (a missing file, a bad value)."""


class _OpenSshConfig(SSHClientConfig):
    """asyncssh's client configuration parser, also keeping the options it does not act on."""

    _handlers = {  # noqa: RUF012 (asyncssh declares it so)
        **SSHClientConfig._handlers,
        "stricthostkeychecking": ("StrictHostKeyChecking", SSHConfig._set_string),
        "hashknownhosts": ("HashKnownHosts", SSHConfig._set_bool),
    }


@dataclass(frozen=True, slots=True)
class JumpHost:
    """One ``ProxyJump`` hop as written: ``[user@]host[:port]`` or ``ssh://[user@]host[:port]``."""

    host: str
    user: str | None = None
    port: int | None = None


@dataclass(frozen=True, slots=True)
class EffectiveSsh:
    """The settings a connection to one target uses, after the config and bringup's defaults."""

    host: str
    port: int
    user: str
    connect_timeout: float
    keepalive_interval: float
    keepalive_count_max: int
    host_key_policy: HostKeyPolicy
    user_known_hosts: tuple[Path, ...]
    global_known_hosts: tuple[Path, ...]
    hash_known_hosts: bool
    jumps: tuple[JumpHost, ...]
    identity_files: tuple[Path, ...]
    options: asyncssh.SSHClientConnectionOptions
    """Everything else asyncssh took from the configuration (ciphers, algorithms, agent, ...)."""


def config_paths(explicit: Path | None) -> list[Path]:
    """The configuration files read: ``explicit`` alone, or the user's and the system's."""
    if explicit is not None:
        path = explicit.expanduser()
        if not path.is_file():
            raise SshConfigError(f"ssh config {path} does not exist")
        return [path]
    return [p for p in (DEFAULT_CONFIG.expanduser(), SYSTEM_CONFIG) if p.is_file()]


def parse_host_spec(spec: str) -> tuple[str, str | None, int | None]:
    """Split ``alias``, ``host``, ``user@host``, ``user@host:port`` or ``[v6addr]:port``."""
    text = spec.strip()
    if not text:
        raise ValueError("the host is empty")
    user: str | None = None
    if "@" in text:
        user, text = text.rsplit("@", 1)
        if not user:
            raise ValueError(f"no user name before '@' in {spec!r}")
    port: int | None = None
    if text.startswith("["):
        host, sep, rest = text[1:].partition("]")
        if not sep:
            raise ValueError(f"missing ']' in {spec!r}")
        if rest:
            port = _parse_port(rest.removeprefix(":"), spec)
    elif text.count(":") == 1:
        host, port_text = text.split(":")
        port = _parse_port(port_text, spec)
    else:
        host = text
    if not host:
        raise ValueError(f"no host name in {spec!r}")
    return host, user, port


def _parse_port(text: str, spec: str) -> int:
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise ValueError(f"invalid port {text!r} in {spec!r}")
    return int(text)


def parse_jump(spec: str) -> JumpHost:
    """One hop of ``ProxyJump``: ``host``, ``user@host:port`` or ``ssh://user@host:port``."""
    text = spec.strip()
    if text.lower().startswith("ssh://"):
        parts = urlsplit(text)
        try:
            port = parts.port
        except ValueError as error:
            raise SshConfigError(f"ProxyJump {spec!r}: {error}") from None
        if not parts.hostname or parts.path not in ("", "/"):
            raise SshConfigError(f"ProxyJump {spec!r} is not ssh://[user@]host[:port]")
        return JumpHost(parts.hostname, parts.username or None, port)
    try:
        host, user, port = parse_host_spec(text)
    except ValueError as error:
        raise SshConfigError(f"ProxyJump {spec!r}: {error}") from None
    return JumpHost(host, user, port)


def parse_proxy_jump(value: object) -> tuple[JumpHost, ...]:
    """Every hop of a ``ProxyJump`` value, first hop first; ``none`` or nothing: no hops."""
    if not isinstance(value, str) or value.strip().lower() in ("", "none"):
        return ()
    return tuple(parse_jump(spec) for spec in value.split(","))


def policy_from(value: object, default: HostKeyPolicy) -> HostKeyPolicy:
    """The policy a ``StrictHostKeyChecking`` value means (``default`` when it is not set)."""
    if value is None:
        return default
    policy = STRICTNESS.get(str(value).lower())
    if policy is None:
        allowed = ", ".join(STRICTNESS)
        raise SshConfigError(f"StrictHostKeyChecking {value!r} is not one of {allowed}")
    return policy


def _paths(value: object, default: tuple[Path, ...]) -> tuple[Path, ...]:
    """A list of known_hosts files from the config; ``none`` turns them off."""
    if not isinstance(value, list):
        return default
    names = [str(name) for name in value]
    return tuple(Path(name) for name in names if name.lower() != "none")


async def load_options(
    paths: list[Path], host: str, user: str | None, port: int | None
) -> tuple[asyncssh.SSHClientConnectionOptions, SSHConfig]:
    """asyncssh's options for ``host`` from ``paths``, and the same files' parsed options."""
    try:
        options: asyncssh.SSHClientConnectionOptions = (
            await asyncssh.SSHClientConnectionOptions.construct(
                config=paths,
                host=host,
                port=port if port is not None else (),
                username=user if user is not None else (),
            )
        )
        extras = _OpenSshConfig.load(
            None, paths, False, False, False, getpass.getuser(),
            user if user is not None else (), host, port if port is not None else (),
        )  # fmt: skip
    except (OSError, asyncssh.Error, ValueError) as error:
        raise SshConfigError(f"ssh config: {error}") from error
    return options, extras


def effective(
    options: asyncssh.SSHClientConnectionOptions,
    extras: SSHConfig,
    *,
    connect_timeout: float | None = None,
    keepalive_interval: float | None = None,
    keepalive_count_max: int | None = None,
    host_key_policy: HostKeyPolicy | None = None,
    default_policy: HostKeyPolicy = "strict",
    known_hosts: Path | None = None,
) -> EffectiveSsh:
    """The settings from parsed ``options``; explicit arguments win over the configuration,
    which wins over bringup's defaults."""
    config = options.config

    def number(name: str, given: float | None, default: float) -> float:
        value = config.get(name)
        chosen = given if given is not None else value if value is not None else default
        return float(str(chosen))

    user_files = _paths(config.get("UserKnownHostsFile"), (DEFAULT_KNOWN_HOSTS,))
    policy = host_key_policy or policy_from(extras.get("StrictHostKeyChecking"), default_policy)
    identity = config.get("IdentityFile")
    return EffectiveSsh(
        host=str(options.host),
        port=int(options.port),
        user=str(options.username),
        connect_timeout=number("ConnectTimeout", connect_timeout, CONNECT_TIMEOUT),
        keepalive_interval=number("ServerAliveInterval", keepalive_interval, KEEPALIVE_INTERVAL),
        keepalive_count_max=int(
            number("ServerAliveCountMax", keepalive_count_max, KEEPALIVE_COUNT_MAX)
        ),
        host_key_policy=policy,
        user_known_hosts=(known_hosts,) if known_hosts is not None else user_files,
        global_known_hosts=_paths(config.get("GlobalKnownHostsFile"), GLOBAL_KNOWN_HOSTS),
        hash_known_hosts=bool(extras.get("HashKnownHosts", False)),
        jumps=parse_proxy_jump(options.tunnel),
        identity_files=tuple(Path(str(p)) for p in identity) if isinstance(identity, list) else (),
        options=options,
    )
