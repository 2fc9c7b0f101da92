"""Every node's log at once: one tail per node through its host's session, node-tagged.

Each node's chunks, markers and end reach the ingest queue with their ``node``; the connection
shown in the header is the worst of the hosts' (a host that is down matters more than those
that are up), naming the node it is about.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from textual.message import Message

from tui.app.feed.feed_sources import Post, Put
from tui.app.feed.session_source import SessionSource
from tui.app.monitor.monitor_messages import ConnectionChanged
from tui.app.monitor.view_model import ConnectionState
from tui.io.transport.host_session import HostSession

_WORST_FIRST = (
    ConnectionState.REFUSED,
    ConnectionState.LOST,
    ConnectionState.CLOSED,
    ConnectionState.RECONNECTING,
    ConnectionState.CONNECTING,
    ConnectionState.CONNECTED,
)


def combined(states: dict[int, ConnectionChanged], hosts: Sequence[str]) -> ConnectionChanged:
    """The header's connection for several hosts: the worst one, naming its node."""
    if not states:
        return ConnectionChanged(ConnectionState.CONNECTING)
    node, worst = min(states.items(), key=lambda item: _WORST_FIRST.index(item[1].state))
    if worst.state is ConnectionState.CONNECTED and len(states) == len(hosts):
        return ConnectionChanged(ConnectionState.CONNECTED, f"{len(hosts)} hosts")
    if worst.state is ConnectionState.CONNECTED:
        missing = next(k for k in range(len(hosts)) if k not in states)
        return ConnectionChanged(ConnectionState.CONNECTING, f"node {missing} ({hosts[missing]})")
    detail = f"node {node} ({hosts[node]})" + (f": {worst.detail}" if worst.detail else "")
    return ConnectionChanged(worst.state, detail)


class ClusterSource:
    """Tails ``paths[k]`` through ``sessions[k]`` for every node ``k`` (node 0 first)."""

    def __init__(
        self, sessions: Sequence[HostSession], paths: Sequence[str], hosts: Sequence[str]
    ) -> None:
        if not len(sessions) == len(paths) == len(hosts):
            raise ValueError("one session, one log and one host name per node")
        self.hosts = tuple(hosts)
        self.nodes = tuple(
            SessionSource(session, path, node)
            for node, (session, path) in enumerate(zip(sessions, paths, strict=True))
        )
        """One tail per node, node 0 first, each tagging its items with its node."""
        self._sessions = list(dict.fromkeys(sessions))
        self._states: dict[int, ConnectionChanged] = {}

    async def run(self, post: Post, put: Put) -> None:
        """Every node's tail at once, all into the one ingest queue (each waits its turn)."""
        self._states = {}
        await asyncio.gather(
            *(source.run(self._poster(node, post), put) for node, source in enumerate(self.nodes))
        )

    def _poster(self, node: int, post: Post) -> Post:
        def combining(message: Message) -> object:
            if isinstance(message, ConnectionChanged):
                self._states[node] = message
                return post(combined(self._states, self.hosts))
            return post(message)

        return combining

    async def reconnect(self) -> None:
        """Drop every host's link; each session's supervisor connects again."""
        for session in self._sessions:
            if session.connected:
                session.link_failed(await session.transport())
