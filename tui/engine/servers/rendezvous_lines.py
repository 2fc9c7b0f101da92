"""Rendezvous counts and unreachable peers, from PyTorch's, Gloo's and NCCL's own lines.

- PyTorch's TCPStore (``torch/csrc/distributed/c10d/TCPStore.cpp``, raised as
  ``torch.distributed.DistStoreError``): ``Timed out after 1801 seconds waiting for clients.
  2/8 clients joined.`` (one client per rank: the others never reached the store);
- Gloo's full-mesh connect (``torch/csrc/distributed/c10d/ProcessGroupGloo.cpp``): ``[Gloo]
  Rank 16 is connected to 31 peer ranks. Expected number of connected peer ranks is : 31``;
- a peer that went away or cannot be reached: Gloo's ``Connection closed by peer
  [192.168.0.81]:15006`` and ``[.../gloo/transport/tcp/pair.cc:799] connect
  [172.31.71.170]:13195: Connection refused`` (``gloo/transport/tcp/pair.cc``) and NCCL's
  ``NCCL WARN Net : Connect to 10.0.0.2<43527> failed : Connection refused`` /
  ``socketStartConnect: Connect to 10.0.0.2<43527> failed``, ``socketProgressOpt: Call to recv
  from 10.0.0.2<43527> failed : Connection reset by peer`` (``src/misc/socket.cc``); PyTorch's
  store client
  (``torch/csrc/distributed/c10d/socket.cpp``):
  ``The client socket has failed to connect to [10.0.0.1]:29500 (errno: 111 - Connection
  refused).`` (older releases print the address without brackets, ``10.0.0.1:29500``) and
  ``The client socket has timed out after 600s while trying to connect to (10.0.0.1, 29500).``;
  NCCL's ``socketProgress: Connection closed by remote peer node1<57557>``;
- the store's count in its first release said workers: ``1/2 workers joined.``
"""

from __future__ import annotations

import re

from tui.engine.servers.common_patterns import to_int
from tui.engine.servers.hits import RendezvousHit

MAX_PEER = 64
"""Characters of a peer address kept."""

_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("s joined", re.compile(r"(?P<joined>\d+)/(?P<expected>\d+) (?:clients|workers) joined")),
    ("[Gloo] Rank", re.compile(
        r"\[Gloo\] Rank (?P<rank>\d+) is connected to (?P<connected>\d+) peer ranks\. "
        r"Expected number of connected peer ranks is : (?P<peers>\d+)")),
    ("by peer [", re.compile(r"Connection closed by peer \[(?P<peer>[^\]\s]+)\]")),
    ("] connect [", re.compile(r"pair\.cc:\d+\] connect \[(?P<peer>[^\]\s]+)\]:\d+")),
    ("Connect to ", re.compile(r"NCCL WARN .*Connect to (?P<peer>[\w.:-]+)<\d+> failed")),
    ("Call to ", re.compile(
        r"NCCL WARN .*Call to (?:recv|send) (?:from|to) (?P<peer>[\w.:-]+)<\d+> failed")),
    ("by remote peer ", re.compile(
        r"NCCL WARN .*Connection closed by remote peer (?P<peer>[\w.:-]+)<\d+>")),
    ("client socket", re.compile(
        r"client socket has failed to connect to \[(?P<peer>[^\]\s]+)\]")),
    ("client socket", re.compile(
        r"client socket has failed to connect to (?P<peer>[\w.-]+):\d+ \(")),
    ("client socket", re.compile(
        r"client socket has timed out after \S+ while trying to connect to "
        r"\((?P<peer>[\w.:-]+), ?\d+\)")),
)  # fmt: skip


def rendezvous_hit(msg: str) -> RendezvousHit | None:
    """The rendezvous count or unreachable peer in ``msg``, or None."""
    for keyword, pattern in _RULES:
        if keyword not in msg:
            continue
        match = pattern.search(msg)
        if match is None:
            continue
        found = match.groupdict()
        if "joined" in found:
            return _count(found["joined"], found["expected"], None)
        if "connected" in found:  # a rank and its peers: the rank itself is there too
            connected, peers = to_int(found["connected"]), to_int(found["peers"])
            if connected is None or peers is None:
                return None
            return RendezvousHit(connected + 1, peers + 1, to_int(found["rank"]))
        return RendezvousHit(peer=found["peer"][:MAX_PEER])
    return None


def _count(joined: str, expected: str, rank: int | None) -> RendezvousHit | None:
    got, wanted = to_int(joined), to_int(expected)
    if got is None or wanted is None:
        return None
    return RendezvousHit(got, wanted, rank)
