"""The SSH session ``bringup bench PROFILE`` forwards through: node 0 of the profile, with the
profile's SSH settings, as the monitor opens it."""

from __future__ import annotations

from tui.config import Profile
from tui.io.transport.host_session import HostSession, SshConnector
from tui.io.transport.profile_target import spec_target


def profile_session(profile: Profile) -> HostSession:
    return HostSession(SshConnector(spec_target(profile, profile.hosts[0])))
