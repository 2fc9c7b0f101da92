"""A server that runs in a scheduler's job: the job's changes, then every node's log.

The follower (``tui.io.slurm.slurm_follow`` for Slurm) reports each change of the job; each
becomes a :class:`JobStateChanged`; a change of another job (the profile's job was restarted)
stops the old logs' tails and starts every node's view anew. Once the job runs and its logs are
known, every node's log is tailed through the one session to the login host (a
:class:`ClusterSource` whose nodes all share that session). Until then the session's own
connection events are relayed for the header.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Protocol

from tui.app.feed.cluster_source import ClusterSource
from tui.app.feed.feed_sources import Post, Put
from tui.app.feed.session_source import connection_message
from tui.app.feed.stream_items import StreamMarked
from tui.app.monitor.monitor_messages import ConnectionChanged, JobStateChanged
from tui.app.monitor.view_model import ConnectionState
from tui.engine.judge.scheduled_job import ScheduledJob
from tui.io.transport.host_session import HostSession, SessionClosed
from tui.io.transport.link_events import ConnectionEvent
from tui.io.transport.ssh import ConnectError
from tui.io.transport.transport import TransportError

RETRY_SECONDS = 1.0
"""Pause before asking for the job again after the login host's link dropped."""


class JobFollower(Protocol):
    """What reports a job's changes (the end is the last one)."""

    def changes(self) -> AsyncIterator[ScheduledJob]: ...


class JobSource:
    """The job's changes from ``follower``, then its nodes' logs through ``session``."""

    def __init__(self, session: HostSession, follower: JobFollower) -> None:
        self.session = session
        self.follower = follower
        self.tails: ClusterSource | None = None
        self._post: Post | None = None
        self._job: ScheduledJob | None = None
        session.on_event(self._relay)

    def _relay(self, event: ConnectionEvent) -> None:
        if self._post is not None and self.tails is None:
            self._post(connection_message(event))

    async def run(self, post: Post, put: Put) -> None:
        self._post = post
        tails: asyncio.Task[None] | None = None
        try:
            if self.session.connected:
                post(ConnectionChanged(ConnectionState.CONNECTED))
            else:
                await self.session.start()
            while True:
                try:
                    async for job in self.follower.changes():
                        if self._job is not None and job.job_id != self._job.job_id:
                            await self._new_job(tails, job, put)
                            tails = None
                        self._job = job
                        post(JobStateChanged(job))
                        if tails is None and job.logs and not job.queued:
                            tails = asyncio.create_task(self._tail(job, post, put))
                    break
                except SessionClosed:
                    raise
                except TransportError:
                    await asyncio.sleep(RETRY_SECONDS)  # the session reconnects meanwhile
            if tails is not None:
                await tails
        except ConnectError:
            return  # already reported through the session's ConnectionFailed event
        except SessionClosed as closed:
            post(ConnectionChanged(ConnectionState.CLOSED, str(closed)))
        finally:
            if tails is not None and not tails.done():
                tails.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await tails

    async def _new_job(self, tails: asyncio.Task[None] | None, job: ScheduledJob, put: Put) -> None:
        """Another job follows (a restart): stop the old logs' tails; each node starts anew."""
        if tails is not None:
            tails.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await tails
        nodes = len(self.tails.nodes) if self.tails is not None else 1
        self.tails = None
        for node in range(nodes):
            await put(StreamMarked("new job", f"job {job.job_id}", new_file=True, node=node))

    async def _tail(self, job: ScheduledJob, post: Post, put: Put) -> None:
        hosts = job.nodes or tuple(f"node {k}" for k in range(len(job.logs)))
        if len(hosts) != len(job.logs):
            hosts = tuple(hosts[k] if k < len(hosts) else f"node {k}" for k in range(len(job.logs)))
        self.tails = ClusterSource([self.session] * len(job.logs), job.logs, hosts)
        await self.tails.run(post, put)

    async def reconnect(self) -> None:
        """Drop the login host's link; its supervisor connects again."""
        if self.session.connected:
            self.session.link_failed(await self.session.transport())
