"""The SSH session ``bringup bench PROFILE`` forwards through: node 0 of the profile, with the
profile's SSH settings, as the monitor opens it."""

from __future__ import annotations

from tui.config import Profile
from tui.io.transport.host_session import HostSession, SshConnector
from tui.io.transport.ssh import SshTarget, parse_host_spec


def profile_session(profile: Profile) -> HostSession:
    host, user, port = parse_host_spec(profile.hosts[0])
    target = SshTarget(
        host,
        user=user,
        port=port,
        config_path=profile.ssh_config,
        known_hosts=profile.known_hosts,
        host_key_policy="accept-new" if profile.host_key_policy == "accept-new" else "strict",
    )
    return HostSession(SshConnector(target))
