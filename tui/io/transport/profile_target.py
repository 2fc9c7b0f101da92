"""The :class:`SshTarget` of a profile's host: the profile's SSH settings and the command line's
choices on top (the one place the five commands that connect build their targets)."""

from __future__ import annotations

from tui.config import Profile
from tui.io.transport.host_keys import check_policy
from tui.io.transport.ssh import SshTarget, parse_host_spec


def profile_target(
    profile: Profile, host: str, user: str | None = None, port: int | None = None
) -> SshTarget:
    """``host`` (an ssh_config alias or a host name) with ``profile``'s SSH settings."""
    choices = profile.ssh_choices
    chosen = choices.host_key_policy
    return SshTarget(
        host,
        user=user,
        port=port,
        config_path=profile.ssh_config,
        known_hosts=profile.known_hosts,
        host_key_policy=check_policy(chosen) if chosen is not None else None,
        default_policy=check_policy(profile.host_key_policy),
        accept_any_host_key=choices.accept_any_host_key,
        prompts=choices.prompts,
    )


def spec_target(profile: Profile, spec: str) -> SshTarget:
    """``user@host:port`` (or an alias) with ``profile``'s SSH settings; ValueError if malformed."""
    host, user, port = parse_host_spec(spec)
    return profile_target(profile, host, user, port)
